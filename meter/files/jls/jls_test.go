package jls

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// The fixtures were written by the upstream JLS library and read back by
// the upstream reader into upstream-read.json (fixtures/jls/README.md): this
// reader must see the same samples.
const fixtures = "../../../fixtures/jls"

type upstreamSignal struct {
	Offset int64          `json:"sample_id_offset"`
	Length int64          `json:"length"`
	NaN    int64          `json:"nan"`
	Sum    float64        `json:"sum"`
	At     map[string]any `json:"at"`
}

func loadUpstream(t *testing.T) map[string]map[string]upstreamSignal {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, "upstream-read.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]map[string]upstreamSignal
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func openFixture(t *testing.T, name string) (*Reader, []byte) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	rd, err := Open(bytesReaderAt(b), int64(len(b)))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return rd, b
}

type bytesReaderAt []byte

func (b bytesReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(b)) {
		return 0, io.EOF
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// readAll returns a signal's samples from its first sample id, NaN where
// the file has none.
func readAll(t *testing.T, rd *Reader, s *Signal) (first int64, vals []float64) {
	t.Helper()
	it := rd.FSR(s)
	started := false
	for {
		start, v, err := it.Next()
		if err == io.EOF {
			return first, vals
		}
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		if !started {
			first, started = start, true
		}
		for int64(len(vals)) < start-first {
			vals = append(vals, math.NaN())
		}
		vals = append(vals, v...)
	}
}

func TestUpstreamFixtures(t *testing.T) {
	want := loadUpstream(t)
	for file, sigs := range want {
		rd, _ := openFixture(t, file)
		for name, w := range sigs {
			s := rd.Signal(1, name)
			if s == nil {
				t.Fatalf("%s: no signal %q", file, name)
			}
			first, vals := readAll(t, rd, s)
			if first != w.Offset || int64(len(vals)) != w.Length {
				t.Errorf("%s %s: first sample id %d, %d samples; upstream %d, %d", file, name, first, len(vals), w.Offset, w.Length)
			}
			var nans int64
			var sum float64
			for _, v := range vals {
				if math.IsNaN(v) {
					nans++
				} else {
					sum += v
				}
			}
			if nans != w.NaN || sum != w.Sum {
				t.Errorf("%s %s: %d NaN, sum %.17g; upstream %d, %.17g", file, name, nans, sum, w.NaN, w.Sum)
			}
			for k, x := range w.At {
				i, _ := strconv.Atoi(k)
				got := vals[i]
				switch x := x.(type) {
				case string:
					if !math.IsNaN(got) {
						t.Errorf("%s %s[%d] = %g, upstream NaN", file, name, i, got)
					}
				case float64:
					// upstream prints %.9g of the float32: equal as float32
					if float32(got) != float32(x) {
						t.Errorf("%s %s[%d] = %.9g, upstream %.9g", file, name, i, got, x)
					}
				}
			}
		}
	}
}

func TestDefinitions(t *testing.T) {
	rd, _ := openFixture(t, "js220-like.jls")
	if rd.Version != [3]int{1, 0, 0} || rd.Length == 0 {
		t.Errorf("version %v, length %d", rd.Version, rd.Length)
	}
	src, ok := rd.Source(1)
	if !ok || src.Name != "JS220-000415" || src.Vendor != "Jetperch" || src.Model != "JS220" || src.Serial != "000415" || src.Version != "1.2.3" {
		t.Errorf("source 1: %+v", src)
	}
	c := rd.Signal(1, "current")
	if c == nil || c.Type() != "f32" || c.SampleRate != 1000 || c.Units != "A" || !c.FSR {
		t.Fatalf("current: %+v", c)
	}
	// The library's defaults for f32 (jls core.c SIGNAL_32_DEFAULTS).
	if c.SamplesPerData != 8192 || c.SampleDecimate != 128 || c.EntriesPerSummary != 640 || c.SummaryDecimate != 20 {
		t.Errorf("current block sizes %d %d %d %d", c.SamplesPerData, c.SampleDecimate, c.EntriesPerSummary, c.SummaryDecimate)
	}
	if g := rd.Signal(1, "gpi[1]"); g == nil || g.Type() != "u1" {
		t.Errorf("gpi[1]: %+v", g)
	}
	sid, ts, ok, err := rd.UTC(c)
	if err != nil || !ok || sid != 1000 || ts.Format("2006-01-02T15:04:05Z07:00") != "2024-03-01T12:00:00Z" {
		t.Errorf("UTC: %d %v %v %v", sid, ts, ok, err)
	}
}

// TestSummaries checks every summary level against the samples it
// summarises (the writer computes them; this reader only reads them).
func TestSummaries(t *testing.T) {
	rd, _ := openFixture(t, "levels-omit.jls")
	s := rd.Signal(1, "current")
	first, vals := readAll(t, rd, s)
	if s.Levels() < 3 {
		t.Fatalf("levels-omit current has %d summary levels, the fixture was made for 3", s.Levels())
	}
	for l := 1; l <= s.Levels(); l++ {
		it := rd.Summaries(s, l)
		n := 0
		for {
			sum, err := it.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if sum.Per != s.Per(l) {
				t.Fatalf("level %d per %d", l, sum.Per)
			}
			for e := range sum.Mean {
				a := sum.Start - first + int64(e)*sum.Per
				var m, lo, hi float64 = 0, math.Inf(1), math.Inf(-1)
				for _, v := range vals[a : a+sum.Per] {
					m += v
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
				m /= float64(sum.Per)
				if math.Abs(sum.Mean[e]-m) > 1e-6*math.Abs(m) || float32(sum.Min[e]) != float32(lo) || float32(sum.Max[e]) != float32(hi) {
					t.Fatalf("level %d entry %d: mean %g min %g max %g, samples %g %g %g", l, e, sum.Mean[e], sum.Min[e], sum.Max[e], m, lo, hi)
				}
				n++
			}
		}
		if int64(n)*s.Per(l) > int64(len(vals)) || n == 0 {
			t.Errorf("level %d: %d entries of %d samples for %d samples", l, n, s.Per(l), len(vals))
		}
	}
}

// TestOmittedChunks: the u1 lines of levels-omit were written with data
// omission on; the rebuilt constant chunks must give the lines' values.
func TestOmittedChunks(t *testing.T) {
	rd, b := openFixture(t, "levels-omit.jls")
	g := rd.Signal(1, "gpi[1]")
	omitted := 0
	// Count index entries of 0 (omitted chunks) to show the fixture has them.
	it := rd.FSR(g)
	for {
		_, _, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range it.offs {
			if o == 0 {
				omitted++
			}
		}
		it.offs = it.offs[:0] // counted once per index
	}
	if omitted == 0 {
		t.Fatal("the fixture has no omitted chunks")
	}
	_ = b
	_, vals := readAll(t, rd, g)
	for i, v := range vals {
		if want := float64(btoi(i >= 12000)); v != want {
			t.Fatalf("gpi[1][%d] = %g, want %g", i, v, want)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestCutShort: every prefix of a fixture either fails to open with an
// error naming a byte offset, or reads a prefix of the samples and then
// ends (io.EOF) or stops with such an error — never a panic, never
// samples that are not in the file.
func TestCutShort(t *testing.T) {
	rd0, b := openFixture(t, "js220-like.jls")
	_, want := readAll(t, rd0, rd0.Signal(1, "current"))
	cutRead := 0
	for n := 0; n < len(b); n += 997 {
		rd, err := Open(bytesReaderAt(b[:n]), int64(n))
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("cut at %d: %v is not an *Error", n, err)
			}
			continue
		}
		s := rd.Signal(1, "current")
		if s == nil {
			continue
		}
		it := rd.FSR(s)
		var first int64
		started := false
		for {
			start, v, err := it.Next()
			if err != nil {
				var e *Error
				if err != io.EOF && !errors.As(err, &e) {
					t.Fatalf("cut at %d: %v", n, err)
				}
				if err == io.EOF && it.Cut != nil && started {
					cutRead++
				}
				break
			}
			if !started {
				first, started = start, true
			}
			for j, x := range v {
				w := want[start-first+int64(j)]
				if !(x == w || math.IsNaN(x) && math.IsNaN(w)) {
					t.Fatalf("cut at %d: sample %d = %g, want %g", n, start-first+int64(j), x, w)
				}
			}
		}
	}
	// A file cut after its first data chunks reads them (by the data
	// links) and says it was cut.
	if cutRead < 10 {
		t.Errorf("only %d of the prefixes read samples up to the cut", cutRead)
	}
}

// TestCorrupt: a flipped bit anywhere is either caught (an *Error) or
// changes nothing the reader returns (padding, reserved bytes).
func TestCorrupt(t *testing.T) {
	_, b := openFixture(t, "levels-omit.jls")
	for off := 0; off < len(b); off += 61 {
		c := append([]byte(nil), b...)
		c[off] ^= 0x10
		rd, err := Open(bytesReaderAt(c), int64(len(c)))
		if err != nil {
			continue
		}
		for _, s := range rd.Signals {
			if s.ID == 0 || !s.FSR {
				continue
			}
			it := rd.FSR(s)
			for {
				if _, _, err := it.Next(); err != nil {
					break
				}
			}
		}
	}
}
