package trace

import (
	"bytes"
	"errors"
	"io"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/workload"
)

const fixtures = "../../fixtures/traces"

func readAll(t *testing.T, r Reader) []Op {
	t.Helper()
	var ops []Op
	for {
		op, err := r.Next()
		if err == io.EOF {
			return ops
		}
		if err != nil {
			t.Fatalf("after %d ops: %v", len(ops), err)
		}
		ops = append(ops, op)
	}
}

const (
	R = workload.OpRead
	W = workload.OpWrite
	F = workload.OpFlush
	T = workload.OpTrim
)

func TestReadersOnFixtures(t *testing.T) {
	us, ms := time.Microsecond, time.Millisecond
	cases := []struct {
		file   string
		format Format
		want   []Op
	}{
		{"native.trace", FormatNative, []Op{
			{0, R, 0, 4096, ""},
			{100 * us, R, 4096, 4096, "disk0"},
			{200 * us, W, 1 << 20, 128 << 10, ""},
			{1500 * ms, F, 0, 0, ""},
			{1500*ms + 1, T, 8192, 8192, ""},
		}},
		{"fio-v2.log", FormatFioV2, []Op{
			{0, R, 0, 4096, "/dev/sdb"},
			{0, W, 8192, 4096, "/dev/sdb"},
			{250 * ms, R, 4096, 4096, "/dev/sdb"},
			{250 * ms, F, 0, 0, "/dev/sdb"},
			{250 * ms, T, 65536, 8192, "/dev/sdb"}, // wait 100 is before 250: no effect
		}},
		{"fio-v3.log", FormatFioV3, []Op{
			{52 * us, R, 1044480, 4096, "/mnt/test.0.0"},
			{130 * us, W, 0, 4096, "/mnt/test.0.0"},
			{2 * time.Second, F, 0, 0, "/mnt/test.0.0"},
			{2*time.Second + 200*us, T, 4096, 4096, "/mnt/test.0.0"},
		}},
		{"fio-v3-noadd.log", FormatFioV3, []Op{
			{10 * us, R, 0, 4096, "/mnt/never-added"},
			{20 * us, W, 4096, 512, "/mnt/never-added"},
		}},
		{"blkparse.txt", FormatBlkparse, []Op{
			{0, W, 223490 * 512, 8 * 512, "8,0"},
			{100 * ms, R, 1024 * 512, 256 * 512, "8,0"},
			{200 * ms, F, 0, 0, "8,0"},
			{300 * ms, F, 0, 0, "8,0"},
			{300 * ms, W, 4096 * 512, 16 * 512, "8,0"},
			{2 * time.Second, T, 2048 * 512, 2048 * 512, "8,0"},
		}},
		// Six queued requests; only the preflush carrying data (4096 + 16)
		// is two ops. "FWS 0 + 0" is one flush, not a flush and an empty write.
		{"blkparse-preflush.txt", FormatBlkparse, []Op{
			{0, F, 0, 0, "8,0"},
			{10 * ms, W, 223490 * 512, 8 * 512, "8,0"},
			{20 * ms, F, 0, 0, "8,0"},
			{30 * ms, F, 0, 0, "8,0"},
			{30 * ms, W, 4096 * 512, 16 * 512, "8,0"},
			{40 * ms, R, 1024 * 512, 256 * 512, "8,0"},
			{50 * ms, F, 0, 0, "8,0"},
			{70 * ms, F, 0, 0, "8,0"},
		}},
		{"msr.csv", FormatMSR, []Op{
			{0, R, 383409152, 4096, "hm/1"},
			{7504 * 100, W, 3206963200, 65536, "hm/1"},
			{13320526 * 100, R, 3206963200, 4096, "hm/1"},
			{123320526 * 100, W, 0, 512, "hm/0"},
		}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			f, err := Open(filepath.Join(fixtures, c.file), "")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Format != c.format && !(c.format == FormatFioV3 && f.Format == FormatFioV3) {
				t.Errorf("detected %s, want %s", f.Format, c.format)
			}
			got := readAll(t, f)
			if len(got) != len(c.want) {
				t.Fatalf("got %d ops, want %d: %+v", len(got), len(c.want), got)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("op %d: got %+v, want %+v", i, got[i], c.want[i])
				}
			}
		})
	}
}

func TestMalformedLinesNameFileAndLine(t *testing.T) {
	cases := map[string]string{
		"native-malformed.trace": "native-malformed.trace:3: op \"X\"",
		"fio-v2-malformed.log":   "fio-v2-malformed.log:3: expected \"FILE read OFFSET LENGTH\"",
		"blkparse-malformed.txt": "blkparse-malformed.txt:2: expected \"SECTOR + COUNT\"",
		"msr-malformed.csv":      "msr-malformed.csv:2: type \"Erase\"",
	}
	for file, want := range cases {
		f, err := Open(filepath.Join(fixtures, file), "")
		if err != nil {
			t.Fatal(err)
		}
		for err == nil {
			_, err = f.Next()
		}
		f.Close()
		var pe *ParseError
		if !errors.As(err, &pe) || !errors.Is(err, ErrSyntax) {
			t.Errorf("%s: got %v, want a ParseError", file, err)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %q does not contain %q", file, err, want)
		}
	}
}

func TestBadInputs(t *testing.T) {
	cases := []struct {
		format Format
		in     string
		want   string
	}{
		{FormatNative, "# idlewatt trace v1\n0.0 R -5 4096\n", "offset \"-5\""},
		{FormatNative, "# idlewatt trace v1\n0.0 R 0 4294967296\n", "size"},
		{FormatNative, "0.0 R 0 4096\n", "first line"},
		{FormatNative, "# idlewatt trace v1\n0.1234567891 R 0 1\n", "time"},
		{FormatFioV3, "fio version 3 iolog\nx /f read 0 1\n", "timestamp"},
		{FormatFioV2, "fio version 2 iolog\n/f fly 0 1\n", "action \"fly\""},
		{FormatFioV2, "fio version 1 iolog\n", "first line"},
		{FormatBlkparse, "8,0 0 1 0.0 1 Q X 0 + 8 [p]\n", "RWBS"},
		{FormatBlkparse, "sda 0 1 0.0 1 Q R 0 + 8 [p]\n", "MAJOR,MINOR"},
		{FormatMSR, "1,h,0,Read,0,4096\n", "7 comma-separated"},
		{FormatNative, "# idlewatt trace v1\n" + strings.Repeat("x", maxLine+10) + "\n", "longer than"},
	}
	for _, c := range cases {
		r, _ := NewReader(strings.NewReader(c.in), c.format, "in")
		var err error
		for err == nil {
			_, err = r.Next()
		}
		if err == io.EOF || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "in:") {
			t.Errorf("%s %q: got %v, want error containing %q", c.format, c.in[:min(len(c.in), 40)], err, c.want)
		}
	}
}

func TestDetect(t *testing.T) {
	if _, err := Open(filepath.Join(fixtures, "..", "..", "go.mod"), ""); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("go.mod: got %v, want ErrUnknownFormat", err)
	}
}

// Every format round-trips through its writer, within the format's
// resolution (v2: ms waits, blkparse: sectors, MSR: reads and writes only).
func TestWriteRoundTrip(t *testing.T) {
	src := []Op{
		{0, R, 0, 4096, "a"},
		{1500 * time.Microsecond, W, 8192, 8192, "a"},
		{2 * time.Second, F, 0, 0, "a"},
		{2*time.Second + 3*time.Millisecond, T, 1 << 20, 4096, "a"},
		{3 * time.Second, R, 4096, 512, "a"},
	}
	for _, f := range Formats {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range src {
			if err := w.Write(op); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
		det, err := Detect(bufioFrom(buf.Bytes()))
		if err != nil || (det != f) {
			t.Errorf("%s: detected %s, %v", f, det, err)
		}
		r, _ := NewReader(bytes.NewReader(buf.Bytes()), f, string(f))
		got := readAll(t, r)
		want := src
		if f == FormatMSR {
			want = []Op{src[0], src[1], src[4]}
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d ops back, want %d\n%s", f, len(got), len(want), buf.String())
		}
		for i := range got {
			g, o := got[i], want[i]
			res := time.Duration(0)
			switch f {
			case FormatFioV2:
				res = time.Millisecond
			case FormatFioV3:
				res = time.Microsecond
			case FormatMSR:
				res = 100
			}
			if g.Type != o.Type || g.Offset != o.Offset || g.Size != o.Size || o.Time-g.Time < 0 || o.Time-g.Time >= max(res, 1) {
				t.Errorf("%s op %d: got %+v, want %+v", f, i, g, o)
			}
		}
	}
}

func TestSummarize(t *testing.T) {
	f, err := Open(filepath.Join(fixtures, "native.trace"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Summarize(f)
	if err != nil {
		t.Fatal(err)
	}
	if s.Ops != 5 || s.OpsByType[R] != 2 || s.BytesByType[W] != 128<<10 || s.Duration() != 1500*time.Millisecond+1 {
		t.Errorf("stats %+v", s)
	}
	// Op 2 continues op 1 only if on the same file: op1 has no file, op2 "disk0".
	if s.Sequential != 0 || s.ReadFraction() != 2.0/3 {
		t.Errorf("sequential %d, read fraction %v", s.Sequential, s.ReadFraction())
	}
	if s.MaxEnd != 1<<20+128<<10 {
		t.Errorf("span %d", s.MaxEnd)
	}
	// Gaps: 100 µs, 100 µs, 1.4998 s, 1 ns.
	wantGaps := []int64{1, 2, 0, 0, 0, 1, 0}
	for i, b := range s.Gaps {
		if b.Count != wantGaps[i] {
			t.Errorf("gap bucket %d [%d,%d): %d, want %d", i, b.Low, b.High, b.Count, wantGaps[i])
		}
	}
	if s.IdleOver1s < 1499*time.Millisecond {
		t.Errorf("idle over 1s = %v", s.IdleOver1s)
	}
	if _, err := s.MarshalJSON(); err != nil {
		t.Fatal(err)
	}
}

// TestCopyCountsWhatItWrote converts a trace with flushes and trims to MSR
// CSV: Copy's count is the lines written (read back), and the ops dropped
// are counted once, by type, with the reason.
func TestCopyCountsWhatItWrote(t *testing.T) {
	for _, c := range []struct {
		to             Format
		written, flush int64
		trim           int64
	}{{FormatMSR, 3, 1, 1}, {FormatNative, 5, 0, 0}, {FormatBlkparse, 5, 0, 0}} {
		f, err := Open(filepath.Join(fixtures, "native.trace"), "")
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		w, _ := NewWriter(&buf, c.to)
		n, err := Copy(w, f, "")
		f.Close()
		if err != nil || w.Close() != nil {
			t.Fatal(err)
		}
		back, _ := NewReader(bytes.NewReader(buf.Bytes()), c.to, "back")
		if got := int64(len(readAll(t, back))); n != c.written || got != n || w.Written() != n {
			t.Errorf("%s: Copy says %d, Written %d, read back %d; want %d", c.to, n, w.Written(), got, c.written)
		}
		if w.Skipped() != c.flush+c.trim {
			t.Errorf("%s: skipped %d, want %d", c.to, w.Skipped(), c.flush+c.trim)
		}
		note := w.SkippedNote()
		if c.flush+c.trim == 0 {
			if note != "" {
				t.Errorf("%s: note %q with nothing dropped", c.to, note)
			}
			continue
		}
		if want := "2 ops dropped (1 flush, 1 trim): MSR CSV carries only reads and writes"; note != want {
			t.Errorf("note %q, want %q", note, want)
		}
	}
}

// TestSummarizeSpanOverflow: an op whose offset+size is beyond
// math.MaxInt64 saturates the span and is named, instead of wrapping the
// span negative (replay then created a 4096-byte target for it).
func TestSummarizeSpanOverflow(t *testing.T) {
	in := "# idlewatt trace v1\n0 R 0 4096\n0.001 W 1048576 4096\n0.002 R 9223372036854771712 4096\n0.003 R 9223372036854775807 1\n0.004 R 8192 4096\n"
	s, err := Summarize(NewNativeReader(strings.NewReader(in), "t"))
	if err != nil {
		t.Fatal(err)
	}
	if !s.EndOverflow || s.MaxEnd != math.MaxInt64 || s.MaxEndN != 3 || s.MaxEndOp.Offset != 9223372036854771712 {
		t.Errorf("overflow %v, span %d, op %d %+v; want the span saturated at op 3", s.EndOverflow, s.MaxEnd, s.MaxEndN, s.MaxEndOp)
	}
	s, err = Summarize(NewNativeReader(strings.NewReader("# idlewatt trace v1\n0 R 0 4096\n0.001 W 1048576 4096\n0.002 R 8192 4096\n"), "t"))
	if err != nil {
		t.Fatal(err)
	}
	if s.EndOverflow || s.MaxEnd != 1048576+4096 || s.MaxEndN != 2 {
		t.Errorf("overflow %v, span %d, op %d", s.EndOverflow, s.MaxEnd, s.MaxEndN)
	}
}

// TestNativeFlushHasNoOffset: a flush (F) has offset and size 0
// (docs/trace-formats.md); one with either is a malformed line, not a
// flush whose numbers are dropped.
func TestNativeFlushHasNoOffset(t *testing.T) {
	for _, line := range []string{"0.5 F 4096 0", "0.5 F 0 512", "0.5 F 4096 512 disk0"} {
		r := NewNativeReader(strings.NewReader(NativeHeader+"\n0 R 0 4096\n"+line+"\n"), "t.trace")
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
		_, err := r.Next()
		if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "t.trace:3: flush with offset") {
			t.Errorf("%q: %v", line, err)
		}
	}
	r := NewNativeReader(strings.NewReader(NativeHeader+"\n0.5 F 0 0\n"), "t.trace")
	if op, err := r.Next(); err != nil || op.Type != workload.OpFlush {
		t.Errorf("F 0 0: %+v, %v", op, err)
	}
}
