package capture

import (
	"bytes"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// noisyCapture writes n samples of two hub-like channels (counts of their
// LSBs, with noise and a gap) in format ver and returns the file.
func noisyCapture(t *testing.T, ver, n int) []byte {
	t.Helper()
	h := testHeader()
	h.Channels[1].VoltLSB, h.Channels[1].CurrentLSB = 0.00125, 0.0005
	var b bytes.Buffer
	w, err := NewWriter(&b, h, Options{Version: ver, IndexEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(26, uint64(ver)))
	for start := 0; start < n; start += 700 {
		if start == 2800 {
			continue // a gap in both channels
		}
		for ch := range 2 {
			m := min(700, n-start)
			blk := &meter.Block{Channel: ch, Start: uint64(start), V: make([]units.Volts, m), I: make([]units.Amps, m)}
			for k := range m {
				blk.V[k] = units.Volts(float32(float64(4000+rng.IntN(5)) * float64(float32(0.00125))))
				blk.I[k] = units.Amps(float32(float64(160+rng.IntN(40)) * float64(float32(0.0005))))
			}
			if err := w.Samples(blk); err != nil {
				t.Fatal(err)
			}
		}
		if start%2100 == 0 {
			if err := w.Flush(); err != nil { // summaries between the samples, as a live run writes them
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// editChunks applies f to the payload of every chunk of type typ and
// recomputes its CRC, so the edit reads as intact.
func editChunks(b []byte, typ byte, f func(p []byte)) []byte {
	b = bytes.Clone(b)
	for at := preambleLen; at+chunkHdrLen <= len(b); {
		n := int(le.Uint32(b[at+4:]))
		if b[at+2] == typ {
			f(b[at+chunkHdrLen : at+chunkHdrLen+n])
			le.PutUint32(b[at+chunkHdrLen+n:], crc32.Checksum(b[at:at+chunkHdrLen+n], castagnoli))
		}
		at += chunkHdrLen + n + crcLen
	}
	return b
}

// readVerified reads every record with samples decoded and returns the
// reader (for its account and verifier) and the summaries handed out.
func readVerified(t *testing.T, b []byte) (*Reader, int) {
	t.Helper()
	r, err := NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	sums := 0
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return r, sums
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind == KindSummary {
			sums++
		}
	}
}

// TestSummariesCheckedAgainstSamples: every summary point of a clean
// capture whose samples are at hand is compared, and agrees (format 1 and
// 2); summaries ×1000 or zeroed are not handed out and the account names
// the first chunk; a scan that skips the samples checks nothing.
func TestSummariesCheckedAgainstSamples(t *testing.T) {
	t.Parallel()
	for _, ver := range []int{1, 2} {
		clean := noisyCapture(t, ver, 9000)
		r, sums := readVerified(t, clean)
		acc := r.Account()
		if acc.Mismatches != 0 || sums == 0 {
			t.Fatalf("format %d, clean: %d mismatches, %d summaries: %v", ver, acc.Mismatches, sums, acc.Notes())
		}
		if r.ver != nil {
			t.Logf("format %d: %d summary points checked", ver, r.ver.checked)
		}
		// Format 2: 256-sample windows and the 4096-sample level above;
		// format 1: only full 1000-sample windows (no count is stored).
		if r.ver == nil || r.ver.checked < 12 {
			checked := 0
			if r.ver != nil {
				checked = r.ver.checked
			}
			t.Fatalf("format %d: only %d summary points were checked", ver, checked)
		}
		typ, first := byte(chunkSummary), summaryFixed
		if ver == 2 {
			typ, first = chunkLevels, levelsFixed
		}
		for _, k := range []float32{1000, 0, -1} {
			bad := editChunks(clean, typ, func(p []byte) {
				n := int(le.Uint32(p[16:]))
				for j := 0; j < 3*n; j++ { // min, max, mean
					at := first + 4*j
					le.PutUint32(p[at:], math.Float32bits(math.Float32frombits(le.Uint32(p[at:]))*k))
				}
			})
			r, handed := readVerified(t, bad)
			acc := r.Account()
			if acc.Mismatches == 0 || handed != sums-acc.Mismatches {
				t.Errorf("format %d, summaries ×%g: %d mismatches, %d of %d summaries handed out", ver, k, acc.Mismatches, handed, sums)
				continue
			}
			m := acc.Mismatched[0]
			note := strings.Join(acc.Notes(), "\n")
			if !strings.Contains(note, "summary chunk(s) disagree with the samples") || !strings.Contains(note, "at byte ") || m.Offset <= 0 || m.Name == "" {
				t.Errorf("format %d, ×%g: the note does not name the chunk: %+v\n%s", ver, k, m, note)
			}
			if acc.Clean() {
				t.Errorf("format %d, ×%g: the account says clean", ver, k)
			}
			// Skipping samples, nothing is checked and everything handed out.
			sr, err := NewReader(bytes.NewReader(bad))
			if err != nil {
				t.Fatal(err)
			}
			sr.SkipSamples(true)
			n := 0
			for {
				rec, err := sr.Next()
				if err != nil {
					break
				}
				if rec.Kind == KindSummary {
					n++
				}
			}
			if a := sr.Account(); a.Mismatches != 0 || n != sums {
				t.Errorf("format %d, skipping samples: %d mismatches, %d summaries", ver, a.Mismatches, n)
			}
		}
	}
}

// TestCalibrationChecked: a samples chunk whose gain is 0, negative, NaN
// or not the header's LSB is invalid (its samples a damaged gap); one
// within the float32 rounding of the LSB is read.
func TestCalibrationChecked(t *testing.T) {
	t.Parallel()
	clean := noisyCapture(t, 2, 3000)
	for name, c := range map[string]struct {
		k    float64
		want string
	}{
		"zero": {0, "not a positive number"}, "negative": {-1, "not a positive number"}, "NaN": {math.NaN(), "not finite"},
		"x1000": {1000, "is not the channel's LSB"}, "x1.001": {1.001, "is not the channel's LSB"}, "rounding": {1 + 1e-8, ""},
	} {
		bad := editChunks(clean, chunkSamples, func(p []byte) {
			if p[2] == encCounts {
				le.PutUint64(p[countsFixed:], math.Float64bits(math.Float64frombits(le.Uint64(p[countsFixed:]))*c.k))
			}
		})
		r, _ := readVerified(t, bad)
		acc := r.Account()
		note := strings.Join(acc.Notes(), "\n")
		if c.want == "" {
			if acc.Invalid != 0 || acc.Read == 0 {
				t.Errorf("%s: %d invalid chunks, %d samples read: %s", name, acc.Invalid, acc.Read, note)
			}
			continue
		}
		if acc.Invalid == 0 || acc.Read != 0 || !strings.Contains(note, c.want) {
			t.Errorf("%s: %d invalid chunks, %d samples read: %s", name, acc.Invalid, acc.Read, note)
		}
	}
	// Without an LSB in the header the gain must still be a meter's.
	ch := meter.Channel{Port: 1, Rail: meter.Rail5V}
	for _, g := range []float64{0, 2, 1e-16} {
		if err := checkCalibration([]Calibration{{VGain: g, IGain: 1e-4}}, ch); err == nil {
			t.Errorf("gain %g accepted for a channel without LSB", g)
		}
	}
	if err := checkCalibration([]Calibration{{VGain: 1e-3, IGain: 1e-4, IOffset: -0.01}}, ch); err != nil {
		t.Error(err)
	}
	if err := checkCalibration([]Calibration{{VGain: 1e-3, IGain: 1e-4, IOffset: 1e9}}, ch); err == nil {
		t.Error("an offset beyond the count range was accepted")
	}
}

// TestDuplicateKeysRefused: a key twice in one object of the header —
// also differing only in case, as encoding/json matches keys to fields —
// is refused on open naming the key's path and byte offset; the same key
// in two objects is not a duplicate.
func TestDuplicateKeysRefused(t *testing.T) {
	t.Parallel()
	for js, want := range map[string]string{
		`{"rate_hz":1000,"rate_hz":10000}`:                                    "rate_hz",
		`{"rate_hz":1000,"RATE_HZ":10000}`:                                    "RATE_HZ",
		`{"Rate_Hz":1,"rate_hz":2}`:                                           "rate_hz",
		`{"drives":[{"name":"a"},{"name":"b","port":1,"name":"c"}]}`:          "drives[1].name",
		`{"meter":{"channels":[{"rail":1}],"kind":"x","kind":"y"}}`:           "meter.kind",
		`{"config":{"a":[[{"b":1}],{"c":{"d":1,"d":2}}]}}`:                    "config.a[1].c.d",
		`{"drives":[{"name":"a"},{"name":"b"}],"meter":{"name":"a"}}`:         "",
		`{"a":{"x":1},"b":{"x":1},"c":[{"x":1},{"x":2}],"d":[1,"x",{"x":3}]}`: "",
		`{"a":1,`:         "", // not JSON: Unmarshal says why
		`[{"a":1,"a":2}]`: "[0].a",
	} {
		err := DuplicateKey([]byte(js), 100)
		var he *HeaderError
		if want == "" {
			if err != nil {
				t.Errorf("%s: %v, want no duplicate", js, err)
			}
			continue
		}
		if !errors.As(err, &he) || he.Field != want || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want a duplicate at %s", js, err, want)
			continue
		}
		if at := he.Offset - 100; at < 0 || at >= int64(len(js)) || js[at] != '"' {
			t.Errorf("%s: offset %d does not point at the key", js, he.Offset)
		}
	}
	// Through the reader: a capture whose header has rate_hz twice.
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	b := buf.Bytes()
	hlen := int(le.Uint32(b[preambleLen+4:]))
	js := string(b[preambleLen+chunkHdrLen : preambleLen+chunkHdrLen+hlen])
	dup := strings.Replace(js, `"rate_hz":1000`, `"rate_hz":1000,"rate_hz":10000`, 1)
	c := append([]byte(nil), b[preambleLen:preambleLen+chunkHdrLen]...)
	le.PutUint32(c[4:], uint32(len(dup)))
	c = append(c, dup...)
	c = le.AppendUint32(c, crc32.Checksum(c, castagnoli))
	forged := append(append(append([]byte(nil), b[:preambleLen]...), c...), b[preambleLen+chunkHdrLen+hlen+crcLen:]...)
	if _, err := NewReader(bytes.NewReader(forged)); err == nil || !strings.Contains(err.Error(), `rate_hz at byte`) || !strings.Contains(err.Error(), "appears twice") {
		t.Errorf("a header with rate_hz twice: %v", err)
	}
}

// FuzzDuplicateKey: DuplicateKey never panics; what it reports points at a
// key that, folded as encoding/json folds, appears earlier in js; and when
// it reports nothing for valid JSON, no object decoded from js has two keys
// that fold together (checked through encoding/json's own maps).
func FuzzDuplicateKey(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"b":[1,{"c":1,"C":2}]}}`, `[]`, `{}`, `{"k":1,"K":2}`, `{"ſ":1,"S":2}`,
		`{"rate_hz":1,"x":[{"rate_hz":2}]}`, `"str"`, `{"a":[[[{"a":1}]]]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, js []byte) {
		err := DuplicateKey(js, 0)
		var he *HeaderError
		if err != nil {
			if !errors.As(err, &he) || he.Offset < 0 || he.Offset >= int64(len(js)) || js[he.Offset] != '"' {
				t.Fatalf("%q: %v", js, err)
			}
			return
		}
		var v any
		if json.Unmarshal(js, &v) != nil {
			return
		}
		var walk func(any)
		walk = func(x any) {
			switch x := x.(type) {
			case map[string]any:
				seen := map[string]string{}
				for k, e := range x {
					fk := strings.ToLower(strings.ToUpper(k))
					if o, dup := seen[fk]; dup {
						t.Fatalf("%q: keys %q and %q fold together, not reported", js, o, k)
					}
					seen[fk] = k
					walk(e)
				}
			case []any:
				for _, e := range x {
					walk(e)
				}
			}
		}
		walk(v)
	})
}
