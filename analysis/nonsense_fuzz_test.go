package analysis_test

// FuzzNonsenseCapture (issue 13, deliverable 9): captures whose every chunk
// has a valid CRC but whose content is nonsense — rates, channel counts,
// rails, sample indices that jump, overlap, run backwards or restart,
// NaN/±Inf/absurd values, huge gaps, marks with wrong indices, host times or
// negative round trips, truncation, trailing bytes — through the report
// path. It must never panic, and every anomaly must surface as a note and a
// count: no unflagged number.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/report"
)

// nonsense turns fuzz bytes into a capture, chunk by chunk, with valid CRCs.
type nonsense struct {
	in  []byte
	out []byte
	seq uint64
	// What the generator wrote, for the checks.
	marks, negRTT int
	end, trailing bool
}

func (g *nonsense) u8() byte {
	if len(g.in) == 0 {
		return 0
	}
	b := g.in[0]
	g.in = g.in[1:]
	return b
}

func (g *nonsense) u64() uint64 {
	var x uint64
	for k := range 8 {
		x |= uint64(g.u8()) << (8 * k)
	}
	return x
}

// pick returns one of xs by the next byte.
func pick[T any](g *nonsense, xs ...T) T { return xs[int(g.u8())%len(xs)] }

func (g *nonsense) chunk(typ, flags byte, p []byte) {
	le := binary.LittleEndian
	c := []byte{'I', 'W', typ, flags}
	c = le.AppendUint32(c, uint32(len(p)))
	c = le.AppendUint64(c, g.seq)
	c = append(c, p...)
	g.out = append(g.out, le.AppendUint32(c, crc32.Checksum(c, crc32.MakeTable(crc32.Castagnoli)))...)
	g.seq++
}

func (g *nonsense) value() float32 {
	switch g.u8() % 8 {
	case 0:
		return float32(math.NaN())
	case 1:
		return float32(math.Inf(1 - 2*int(g.u8()%2)))
	case 2:
		return 3e38
	case 3:
		return -float32(g.u8()) / 10
	case 4:
		return math.Float32frombits(uint32(g.u64()))
	}
	return float32(g.u8()) / 20
}

func (g *nonsense) build() []byte {
	le := binary.LittleEndian
	g.out = append(g.out, "\x89IWC\r\n\x1a\n\x01\x00\x00\x00\x00\x00\x00\x00"...)
	nch := int(g.u8() % 6)
	var chans []map[string]any
	for range nch {
		chans = append(chans, map[string]any{"port": pick(g, 1, 1, 1, 2, 2, 0, -3, 5000), "rail": pick(g, 1, 2, 1, 2, 3, 0, 9)})
	}
	rate := pick(g, 1000.0, 1000.0, 1000.0, 10000.0, 2.0, 1e300, 0, -5, 1e-4, 1e7, 3e7, math.Float64frombits(g.u64()))
	h := map[string]any{"channels": chans, "start_host": int64(g.u64() >> uint(g.u8()%64)), "tool": "fuzz"}
	if !math.IsNaN(rate) && !math.IsInf(rate, 0) {
		h["rate_hz"] = rate
	}
	hj, _ := json.Marshal(h)
	g.chunk(0x01, 0, hj)
	next := make([]uint64, max(nch, 1))
	for len(g.in) > 0 {
		switch g.u8() % 10 {
		case 0, 1, 2, 3: // samples
			ch := int(g.u8()) % (max(nch, 1) + 1) // sometimes out of range
			n := int(g.u8()%64) + int(g.u8()%2)*200
			start := next[ch%len(next)]
			switch g.u8() % 8 {
			case 0:
				start = 0 // restart
			case 1:
				start -= min(start, uint64(g.u8())) // overlap or backward
			case 2:
				start += uint64(g.u8()) << (g.u8() % 48) // a jump
			case 3:
				start = math.MaxUint64 - uint64(g.u8()) // runs past the largest index
			}
			p := le.AppendUint16(nil, uint16(ch))
			p = append(p, 0, 0)
			p = le.AppendUint32(p, uint32(n))
			p = le.AppendUint64(p, start)
			for range 2 * n {
				p = le.AppendUint32(p, math.Float32bits(g.value()))
			}
			g.chunk(0x10, 1, p)
			if start <= math.MaxUint64-uint64(n) {
				next[ch%len(next)] = max(next[ch%len(next)], start+uint64(n))
			}
		case 4: // gap, possibly huge
			p := le.AppendUint32(nil, uint32(int32(int(g.u8())%(nch+2)-1)))
			p = le.AppendUint16(p, 3)
			p = append(p, 0, 0)
			p = le.AppendUint64(p, g.u64()>>(g.u8()%64))
			p = le.AppendUint64(p, g.u64()>>(g.u8()%64))
			g.chunk(0x20, 0, append(p, "crc"...))
		case 5: // mark
			sent := int64(g.u64() >> (g.u8() % 64))
			recv := sent + int64(g.u8())*1000 - int64(g.u8()%2)*1e6
			idx := g.u64() >> (g.u8() % 64)
			p := le.AppendUint32(nil, uint32(g.marks))
			p = le.AppendUint32(p, uint32(g.u8()%2))
			p = le.AppendUint64(p, uint64(sent))
			p = le.AppendUint64(p, uint64(recv))
			p = le.AppendUint64(p, idx)
			g.chunk(0x21, 0, p)
			g.marks++
			if recv < sent {
				g.negRTT++
			}
		case 6: // event
			p := []byte{g.u8() % 9, 0, 0, 0}
			p = le.AppendUint32(p, uint32(int32(g.u8())-2))
			p = le.AppendUint64(p, g.u64())
			p = le.AppendUint64(p, g.u64())
			p = le.AppendUint64(p, g.u64())
			g.chunk(0x22, 0, p)
		case 7: // I/O and state
			p := le.AppendUint32(nil, 1)
			p = le.AppendUint32(p, 0)
			p = le.AppendUint32(p, uint32(g.u8()%4))
			p = append(p, g.u8()%6, g.u8()%2, 0, 0)
			p = le.AppendUint64(p, g.u64())
			p = le.AppendUint32(p, uint32(g.u64()))
			p = le.AppendUint32(p, 0)
			issue := int64(g.u64() >> (g.u8() % 64))
			p = le.AppendUint64(p, uint64(issue))
			p = le.AppendUint64(p, uint64(issue+int64(g.u8())*1e5-5e6))
			g.chunk(0x30, 0, p)
			v := pick(g, "idle", "workload:x", "1", "0", "")
			s := le.AppendUint64(nil, uint64(issue))
			s = le.AppendUint32(s, uint32(g.u8()%3))
			s = append(s, g.u8()%6, 0)
			s = le.AppendUint16(s, uint16(len(v)))
			g.chunk(0x31, 0, append(s, v...))
		case 8: // stats
			p := le.AppendUint64(nil, g.u64())
			for range 5 {
				p = le.AppendUint64(p, g.u64())
			}
			g.chunk(0x23, 0, p)
		case 9: // the end, perhaps with something after it
			p := le.AppendUint64(nil, g.u64())
			p = le.AppendUint64(p, g.u64()>>(g.u8()%64))
			g.chunk(0xFF, 0, p)
			g.end = true
			if g.u8()%2 == 1 {
				g.out = append(g.out, g.in...)
				g.trailing = len(g.in) > 0
			}
			return g.out
		}
	}
	return g.out
}

// truth reads the capture independently of analysis: the samples it must
// have left out for invalid values, and what the reader accounts for.
func truth(t *testing.T, path string) (invalid uint64, acc capture.Account, ok bool) {
	r, err := capture.Open(path)
	if err != nil {
		return 0, acc, false
	}
	defer r.Close()
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		if rec.Kind != capture.KindSamples {
			continue
		}
		for k := range rec.Block.V {
			if p := float64(rec.Block.V[k]) * float64(rec.Block.I[k]); !(math.Abs(p) <= analysis.MaxPlausibleW) {
				invalid++
			}
		}
	}
	return invalid, r.Account(), true
}

func FuzzNonsenseCapture(f *testing.F) {
	f.Add([]byte{2, 0, 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 0})
	f.Add([]byte{2, 0, 1, 1, 2, 0, 3, 0, 1, 1, 9, 0, 0, 0, 5, 40, 1, 2, 3, 4, 5, 6, 7, 8, 0, 1, 9, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Add(bytes.Repeat([]byte{1, 0, 2, 7, 0, 0, 3, 5, 200, 9, 9, 9, 9, 9, 9, 9, 9, 9, 1, 3, 0}, 12))
	f.Add([]byte{0, 0, 0})
	f.Add([]byte{3, 0, 1, 0, 2, 1, 1, 1, 0, 0, 1, 30, 0, 1, 0, 0, 1, 30, 0, 1, 2, 8, 1, 10, 5, 6, 9, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 'x'})
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &nonsense{in: data}
		b := g.build()
		path := filepath.Join(t.TempDir(), "n.iwcap")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		opts := analysis.DefaultOptions()
		opts.ChartBuckets = 20
		r, err := analysis.Analyze(path, opts)
		if err != nil {
			// Refused as a whole: it must say why in a way callers can branch on.
			if !errors.Is(err, capture.ErrInvalid) && !errors.Is(err, capture.ErrTruncated) && !errors.Is(err, capture.ErrVersion) &&
				!errors.Is(err, analysis.ErrNoChannels) && !errors.Is(err, capture.ErrNotCapture) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		var js bytes.Buffer
		if err := report.WriteJSON(&js, r); err != nil {
			t.Fatalf("report.json cannot be written (a NaN or Inf reached a number?): %v", err)
		}
		notes := strings.Join(r.Notes, "\n")
		has := func(what, s string) {
			t.Helper()
			if !strings.Contains(notes, s) {
				t.Fatalf("%s without a note saying %q; notes:\n%s", what, s, notes)
			}
		}
		invalid, acc, ok := truth(t, path)
		if !ok {
			t.Fatal("analysis read a capture the reader refuses")
		}
		in := r.Capture.Integrity
		if in.InvalidSamples != invalid {
			t.Fatalf("%d samples with invalid values, the report counts %d", invalid, in.InvalidSamples)
		}
		if invalid > 0 {
			has("invalid sample values", "invalid values")
		}
		var rejected uint64
		for _, x := range acc.Rejected {
			rejected += x.Samples
		}
		var reported uint64
		for _, n := range in.RejectedSamples {
			reported += n
		}
		if reported != rejected {
			t.Fatalf("reader rejected %d samples, report counts %d", rejected, reported)
		}
		if rejected > 0 {
			has("rejected samples", "not placed on the timeline")
		}
		if acc.DamageRegions > 0 || in.DamagedRegions != acc.DamageRegions {
			if in.DamagedRegions != acc.DamageRegions {
				t.Fatalf("%d damaged stretches, report says %d", acc.DamageRegions, in.DamagedRegions)
			}
			has("skipped chunks", "capture damaged")
		}
		if g.trailing {
			has("trailing bytes", "follow the end chunk")
		}
		if !r.Capture.Complete {
			if !strings.Contains(notes, "capture incomplete") && !strings.Contains(notes, "damaged to its end") {
				t.Fatalf("an incomplete capture without a note; notes:\n%s", notes)
			}
		}
		a := r.Alignment
		if a.NegativeRTT != g.negRTT {
			t.Fatalf("%d marks with a negative round trip, report says %d", g.negRTT, a.NegativeRTT)
		}
		if g.negRTT > 0 {
			has("negative round trips", "negative round trip")
		}
		if a.Outliers > 0 && a.Method == "marks" {
			has("outlier marks", "rejected as outliers")
		}
		if math.Abs(a.DriftPPM) > analysis.DefaultMaxDriftPPM {
			t.Fatalf("drift %g ppm beyond the bound reached the report", a.DriftPPM)
		}
		if a.DriftRefusedPPM != 0 {
			has("refused drift", "refused")
		}
		if g.marks > 0 && a.Method == "header" {
			if !strings.Contains(notes, "no usable clock marks") && !strings.Contains(notes, "disagree") &&
				!strings.Contains(notes, "the only usable clock mark") {
				t.Fatalf("marks unused without a note; notes:\n%s", notes)
			}
		}
		// The numbers that remain are bounded by what was flagged: no sample
		// beyond the plausibility bound reaches a figure.
		for _, d := range r.Drives {
			lim := analysis.MaxPlausibleW * float64(len(d.Rails))
			for what, x := range map[string]float64{"average_w": float64(d.AverageW), "peak_w": float64(d.PeakW), "min_w": float64(d.MinW), "active_idle_w": float64(d.ActiveIdleW)} {
				// NaN is "not measured" (null in report.json): no samples
				// or no quiet time behind the figure, which is no bound broken.
				if !math.IsNaN(x) && !(math.Abs(x) <= lim) {
					t.Fatalf("drive %q: %s = %g beyond %g W", d.Name, what, x, lim)
				}
			}
			// Duration is samples × the fitted period, within the drift bound.
			if nominal := float64(d.Samples.Count) / float64(r.Capture.RateHz); math.Abs(float64(d.DurationS)-nominal) > nominal*analysis.DefaultMaxDriftPPM*1e-6*1.001+1e-9 {
				t.Fatalf("drive %q: %d samples at %g Hz last %g s", d.Name, d.Samples.Count, r.Capture.RateHz, d.DurationS)
			}
		}
	})
}
