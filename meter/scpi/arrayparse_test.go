package scpi

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter"
)

// block encodes xs as FORM REAL does: #<d><len> then float32 big-endian.
func block(xs ...float32) []byte {
	ln := strconv.Itoa(4 * len(xs))
	b := append([]byte{'#', byte('0' + len(ln))}, ln...)
	for _, x := range xs {
		b = binary.BigEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func TestParseArray(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		in   string
		want []float64
	}{
		{"+1.25E-02,+1.30E-02,-2E-6\n", []float64{0.0125, 0.013, -2e-6}},
		{" 1.0A , 2.0 \r\n", []float64{1, 2}},
		{"1,9.91E37,3", []float64{1, nan, 3}},
		{"1e400", []float64{nan}},
		// #14 then 0.5 as float32 big-endian: 3f 00 00 00.
		{"#14\x3f\x00\x00\x00\n", []float64{0.5}},
		{string(block(1, float32(math.NaN()), float32(math.Inf(-1)), 9.91e37, -0.25)), []float64{1, nan, nan, nan, -0.25}},
	} {
		got, err := ParseArray(nil, []byte(c.in))
		if err != nil || len(got) != len(c.want) {
			t.Errorf("%q → %v, %v", c.in, got, err)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] && !(math.IsNaN(got[i]) && math.IsNaN(c.want[i])) {
				t.Errorf("%q [%d] = %v, want %v", c.in, i, got[i], c.want[i])
			}
		}
	}
	for in, want := range map[string]string{
		"":                        "empty",
		"1,,2":                    "reading 2 at byte 2",
		"1,nan":                   "not a number",
		"1,0x1p-2":                "not a number",
		`-113,"Undefined"`:        "reading 2",
		"#0\x00\x00\x00\x00":      "indefinite",
		"#18\x00\x00\x00\x00":     "declares 8 bytes, 4 follow",
		"#13\x00\x00\x00":         "not whole float32",
		"#1":                      "cut short",
		"#x4":                     "not a digit 1–9",
		"#2x4":                    "length byte 2",
		"#14\x00\x00\x00\x00junk": "4 bytes after the block at offset 7",
		"#10":                     "empty block",
	} {
		if _, err := ParseArray(nil, []byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error saying %q", in, err, want)
		}
	}
}

// TestReadArrayReply: a block holding newline bytes is read by its length,
// a terminator that has not come yet is owed to the next line read, and a
// block larger than expected is refused before it is read.
func TestReadArrayReply(t *testing.T) {
	nl := math.Float32frombits(0x0a0a0a0a) // bytes that look like line ends
	b := append(block(nl, 1.5), '\r', '\n')
	b = append(b, "next line\n"...)
	br := bufio.NewReaderSize(bytes.NewReader(b), 16)
	reply, owed, err := readArrayReply(br, nil, 64)
	if err != nil || owed {
		t.Fatalf("%q owed %v: %v", reply, owed, err)
	}
	xs, err := ParseArray(nil, reply)
	if err != nil || len(xs) != 2 || xs[0] != float64(nl) || xs[1] != 1.5 {
		t.Fatalf("%v %v", xs, err)
	}
	if line, _ := br.ReadString('\n'); line != "next line\n" {
		t.Errorf("after the block: %q", line)
	}
	// The reader has the block but not its newline yet.
	in := &Instrument{br: bufio.NewReader(bytes.NewReader(append(block(2), "\nrest\n"...)))}
	in.br.Peek(1)
	if _, in.owedNL, err = readArrayReply(in.br, nil, 64); err != nil {
		t.Fatal(err)
	}
	in.skipNL()
	if line, _ := in.br.ReadString('\n'); line != "rest\n" || in.owedNL {
		t.Errorf("owed newline not skipped: %q, owed %v", line, in.owedNL)
	}
	if _, _, err := readArrayReply(bufio.NewReader(bytes.NewReader(block(make([]float32, 100)...))), nil, 64); err == nil {
		t.Error("a 400-byte block read with 64 expected")
	}
	long := strings.Repeat("1.0,", 100) + "1\n"
	if _, _, err := readArrayReply(bufio.NewReaderSize(bytes.NewReader([]byte(long)), 16), nil, 64); err == nil {
		t.Error("a 400-byte line read with 64 expected")
	}
}

type gapSink struct {
	blocks [][2]uint64 // start, len
	gaps   []meter.Gap
}

func (s *gapSink) Samples(b *meter.Block) error {
	s.blocks = append(s.blocks, [2]uint64{b.Start, uint64(b.Len())})
	return nil
}
func (s *gapSink) Gap(g meter.Gap) error   { s.gaps = append(s.gaps, g); return nil }
func (*gapSink) Mark(meter.MarkEcho) error { return nil }
func (*gapSink) Event(meter.Event) error   { return nil }

// TestEmitArrayOverRange: an over-range reading splits the array into
// blocks around a one-sample gap; it is never a number.
func TestEmitArrayOverRange(t *testing.T) {
	in := &Instrument{arr: &arrayState{v: 5, vals: []float64{1, 2, math.NaN(), 3, math.NaN(), math.NaN(), 4}}}
	s := &gapSink{}
	if err := in.emitArray(100, s); err != nil {
		t.Fatal(err)
	}
	wantB := [][2]uint64{{100, 2}, {103, 1}, {106, 1}}
	if len(s.blocks) != 3 || s.blocks[0] != wantB[0] || s.blocks[1] != wantB[1] || s.blocks[2] != wantB[2] {
		t.Errorf("blocks %v, want %v", s.blocks, wantB)
	}
	if len(s.gaps) != 3 || s.gaps[0].Start != 102 || s.gaps[1].Start != 104 || s.gaps[2].Start != 105 || s.gaps[0].Reason != "over-range" {
		t.Errorf("gaps %+v", s.gaps)
	}
	if st := in.Stats(); st.Frames != 4 || st.SamplesLost != 3 {
		t.Errorf("stats %+v", st)
	}
}

// FuzzParseArray: any reply parses or fails with an error, never a panic;
// readings are finite and below the over-range value, or NaN for it; a
// block of the fuzzer's floats parses back to them.
func FuzzParseArray(f *testing.F) {
	for _, s := range []string{"+1.25E-02,+1.30E-02\n", "1,9.91E37,3", "#14\x3f\x00\x00\x00\n", "#0abc", "#19", "#2x4", ",", "1e400,-1e400"} {
		f.Add([]byte(s))
	}
	f.Add(block(1, 2, 3))
	f.Fuzz(func(t *testing.T, b []byte) {
		xs, err := ParseArray(nil, b)
		if err == nil && len(xs) == 0 {
			t.Fatalf("%q: no readings and no error", b)
		}
		for _, x := range xs {
			if math.IsInf(x, 0) || math.Abs(x) >= overflow {
				t.Fatalf("%q → %v", b, x)
			}
		}
		// Reading it from a line, as the stream does.
		br := bufio.NewReaderSize(bytes.NewReader(b), 16)
		if reply, _, err := readArrayReply(br, nil, 4096); err == nil && len(reply) > 4096+11 {
			t.Fatalf("%d-byte reply with 4096 expected", len(reply))
		}
		// Any whole float32s as a block.
		if len(b) >= 4 && len(b)%4 == 0 {
			var fs []float32
			for i := 0; i < len(b); i += 4 {
				fs = append(fs, math.Float32frombits(binary.BigEndian.Uint32(b[i:])))
			}
			xs, err := ParseArray(nil, append(block(fs...), '\n'))
			if err != nil || len(xs) != len(fs) {
				t.Fatalf("block of %d floats: %d, %v", len(fs), len(xs), err)
			}
			for i, x := range xs {
				want := float64(fs[i])
				if math.IsNaN(want) || math.IsInf(want, 0) || math.Abs(want) >= overflow {
					want = math.NaN()
				}
				if x != want && !(math.IsNaN(x) && math.IsNaN(want)) {
					t.Fatalf("[%d] %v, want %v", i, x, want)
				}
			}
		}
	})
}

// TestParseArrayAllocs: parsing into a reused slice allocates nothing,
// ASCII or block, so a stream of arrays runs without garbage.
func TestParseArrayAllocs(t *testing.T) {
	ascii := []byte(strings.Repeat("+1.250000E-02,", 4095) + "+1.250000E-02\n")
	fs := make([]float32, 4096)
	bin := block(fs...)
	dst := make([]float64, 0, 4096)
	for name, reply := range map[string][]byte{"ascii": ascii, "real": bin} {
		if n := testing.AllocsPerRun(20, func() { dst, _ = ParseArray(dst, reply) }); n != 0 || len(dst) != 4096 {
			t.Errorf("%s: %v allocations, %d readings", name, n, len(dst))
		}
	}
}

// TestOwedNewlineArrivesLate: the block's terminator comes in a later read
// than the block (a pty or USB link splits a 16 KB reply). The next reply
// read must skip it, not return it as an empty reply (CI saw "empty array
// reply: no readings" for a good array, and every reply after it was one
// behind).
func TestOwedNewlineArrivesLate(t *testing.T) {
	pr, pw := io.Pipe()
	in := &Instrument{br: bufio.NewReader(pr), rw: struct {
		io.Reader
		io.Writer
	}{pr, io.Discard}}
	go func() {
		pw.Write(block(1, 2))
		time.Sleep(30 * time.Millisecond)
		pw.Write([]byte("\r"))
		time.Sleep(10 * time.Millisecond)
		pw.Write([]byte("\n"))
		pw.Write(append(block(3), '\n'))
		pw.Close()
	}()
	reply, owed, err := readArrayReply(in.br, nil, 64)
	if err != nil || !owed {
		t.Fatalf("first block: %q owed %v: %v", reply, owed, err)
	}
	in.owedNL = owed
	in.skipNL()
	reply, in.owedNL, err = readArrayReply(in.br, nil, 64)
	if err != nil {
		t.Fatal(err)
	}
	if xs, err := ParseArray(nil, reply); err != nil || len(xs) != 1 || xs[0] != 3 {
		t.Fatalf("second reply %q: %v %v", reply, xs, err)
	}
}

// FuzzSkipNL: whatever follows a block, skipping its owed terminator
// consumes exactly the carriage returns and one newline that lead it (a
// newline-free rest is left whole but for leading CRs), never blocks on
// what is there, never panics; and notText never panics on a line.
func FuzzSkipNL(f *testing.F) {
	for _, s := range []string{"\n", "\r\n", "\r\r\nrest\n", "Keysight,N6705C\n", "", "\r", "#14abcd\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		in := &Instrument{br: bufio.NewReader(bytes.NewReader(b)), owedNL: true}
		in.skipNL()
		rest, _ := io.ReadAll(in.br)
		k := 0
		for k < len(b) && b[k] == '\r' {
			k++
		}
		if k < len(b) && b[k] == '\n' {
			k++
		}
		if !bytes.Equal(rest, b[k:]) {
			t.Fatalf("%q: left %q, want %q", b, rest, b[k:])
		}
		_ = notText(string(b))
	})
}
