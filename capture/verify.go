package capture

import (
	"fmt"
	"math"
)

// Summaries checked against the samples (issue 26 item 3). A summary chunk
// carries its own CRC, so a summary whose numbers disagree with the samples
// beside it — levels ×1000 or zeroed in a file whose samples say 0.4 W, a
// writer's bug, a foreign tool — reads as intact. A Reader that decodes
// samples therefore keeps the power statistics of each channel's recent
// samples in windows of verifyWin samples and compares every summary point
// whose window they cover: the count of samples (format 2), the minimum and
// maximum power, the mean and (format 2) σ. A chunk that disagrees is not
// handed out (the samples win) and the Account names it.
//
// Windows the statistics no longer cover (older than the ring below), that
// hold samples the Reader did not deliver (damage, rejected indices) or
// whose length is not a multiple of verifyWin are not checked; nothing is
// guessed.

const (
	verifyWin = 8 // samples per window; divides the summary windows writers use (256·16^l in format 2, 1000 in format 1)
	// verifyTotal bounds the windows kept over all channels (about 16 MB);
	// each channel keeps at least verifyMin and at most verifyMax (8 M
	// samples at most: level 3 of a 10 kS/s capture of up to 8 channels).
	verifyTotal = 1 << 19
	verifyMin   = 256
	verifyMax   = 1 << 17
	// maxMismatches bounds the chunks an Account lists; the count counts all.
	maxMismatches = 8
)

// verifyWindow is the power statistics of one window of verifyWin samples.
type verifyWindow struct {
	win      uint64 // window number (sample index / verifyWin) + 1; 0 = empty slot
	n        uint32
	min, max float32
	sum, sq  float64
}

// chanVerify is one channel's ring of windows, allocated at its first
// samples.
type chanVerify struct {
	ring  []verifyWindow
	spoil bool // indices restarted or ran backwards: summaries cannot be matched to samples
}

// SummaryMismatch is a summary chunk whose numbers disagree with the
// samples the Reader decoded.
type SummaryMismatch struct {
	Offset  int64 // the summary chunk
	Chunk   uint64
	Channel int
	Name    string // the channel's name, e.g. "p1.5v"
	Level   int
	Start   uint64  // first sample index of the first window that disagrees
	What    string  // "mean", "min", "max", "count" or "σ"
	Summary float64 // what the summary says (W, or samples for a count)
	Samples float64 // what the samples say
	N       uint32  // samples in that window
}

// verifier checks a Reader's summaries against its samples.
type verifier struct {
	chans   []chanVerify
	size    int // ring length per channel
	checked int // summary points compared (for tests: the check is not vacuous)
}

func newVerifier(nch int) *verifier {
	size := min(max(verifyTotal/max(nch, 1), verifyMin), verifyMax)
	return &verifier{chans: make([]chanVerify, nch), size: size}
}

// spoil marks channel c's summaries unverifiable (a restart or backward
// run: indices that meant other samples before).
func (v *verifier) spoil(c int) { v.chans[c].spoil = true }

// add feeds delivered samples vs, is of channel c from index start.
func verifyAdd[V, I ~float64](v *verifier, c int, start uint64, vs []V, is []I) {
	cv := &v.chans[c]
	if cv.spoil || len(vs) == 0 {
		return
	}
	if cv.ring == nil {
		cv.ring = make([]verifyWindow, v.size)
	}
	size := uint64(len(cv.ring))
	is = is[:len(vs)]
	// One division for the chunk: its windows are consecutive, and so are
	// their slots in the ring.
	w := start / verifyWin
	slot := w % size
	for k := 0; k < len(vs); w++ {
		idx := start + uint64(k)
		m := min(len(vs)-k, int((w+1)*verifyWin-idx))
		s := &cv.ring[slot]
		if slot++; slot == size {
			slot = 0
		}
		if s.win != w+1 {
			*s = verifyWindow{win: w + 1, min: float32(math.Inf(1)), max: float32(math.Inf(-1))}
		}
		// The window's sums in locals, not through s: the same operations
		// in the same order, without a store per sample.
		lo, hi, sum, sq := s.min, s.max, s.sum, s.sq
		wv := vs[k : k+m]
		wi := is[k : k+m]
		wi = wi[:len(wv)]
		for j, x := range wv {
			// The writer's power: float32 values multiplied in float32.
			p := float32(x) * float32(wi[j])
			lo, hi = min(lo, p), max(hi, p)
			pp := float64(p)
			sum += pp
			sq += pp * pp
		}
		s.min, s.max, s.sum, s.sq = lo, hi, sum, sq
		s.n += uint32(m)
		k += m
	}
}

// check compares summary s (read from the chunk at off, sequence seq) with
// the samples' windows; it returns the first disagreement.
func (v *verifier) check(s *Summary, off int64, seq uint64) (SummaryMismatch, bool) {
	if s.Channel < 0 || s.Channel >= len(v.chans) {
		return SummaryMismatch{}, false
	}
	cv := &v.chans[s.Channel]
	if cv.spoil || cv.ring == nil || s.Per%verifyWin != 0 || s.Start%verifyWin != 0 {
		return SummaryMismatch{}, false
	}
	size := uint64(len(cv.ring))
	per := uint64(s.Per / verifyWin) // windows per summary point
	if per > size {
		return SummaryMismatch{}, false
	}
	n := min(len(s.MinW), len(s.MaxW), len(s.MeanW))
	for k := range n {
		w0 := s.Start/verifyWin + uint64(k)*per
		var cnt uint64
		lo, hi := math.Inf(1), math.Inf(-1)
		var sum, sq float64
		whole := true
		slot := w0 % size
		for w := w0; w < w0+per; w++ {
			x := &cv.ring[slot]
			if slot++; slot == size {
				slot = 0
			}
			if x.win != w+1 {
				if x.win > w+1 {
					whole = false // overwritten: too old to check
					break
				}
				continue // no samples in this window
			}
			cnt += uint64(x.n)
			lo, hi = min(lo, float64(x.min)), max(hi, float64(x.max))
			sum += x.sum
			sq += x.sq
		}
		if !whole {
			continue
		}
		want := uint64(s.Per) // format 1 states no count: check only full windows
		if k < len(s.Count) {
			want = uint64(s.Count[k])
		}
		mm := SummaryMismatch{Offset: off, Chunk: seq, Channel: s.Channel, Level: s.Level, Start: s.Start + uint64(k)*uint64(s.Per), N: uint32(cnt)}
		switch {
		case cnt < want:
			continue // samples the Reader did not deliver (damage): nothing to compare with
		case cnt > want:
			mm.What, mm.Summary, mm.Samples = "count", float64(want), float64(cnt)
			return mm, true
		}
		v.checked++
		mean := sum / float64(cnt)
		if !near(float64(s.MeanW[k]), mean, 1e-5) {
			mm.What, mm.Summary, mm.Samples = "mean", float64(s.MeanW[k]), mean
			return mm, true
		}
		if float64(s.MinW[k]) != lo {
			mm.What, mm.Summary, mm.Samples = "min", float64(s.MinW[k]), lo
			return mm, true
		}
		if float64(s.MaxW[k]) != hi {
			mm.What, mm.Summary, mm.Samples = "max", float64(s.MaxW[k]), hi
			return mm, true
		}
		if k < len(s.StdW) {
			sd := math.Sqrt(max(0, sq/float64(cnt)-mean*mean))
			// σ from sums of squares cancels digits: compared on the scale
			// of the window's level.
			if d := math.Abs(float64(s.StdW[k]) - sd); !(d <= 1e-3*max(sd, math.Abs(mean))+1e-12) {
				mm.What, mm.Summary, mm.Samples = "σ", float64(s.StdW[k]), sd
				return mm, true
			}
		}
	}
	return SummaryMismatch{}, false
}

// near reports whether a and b agree to rel (and 1e-12 W absolute).
func near(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*max(math.Abs(a), math.Abs(b))+1e-12
}

// mismatchNote is the Account's sentence about the mismatched summaries.
func mismatchNote(list []SummaryMismatch, n int) string {
	m := list[0]
	name := fmt.Sprintf("channel %d", m.Channel)
	if m.Name != "" {
		name += " (" + m.Name + ")"
	}
	unit, f := "W", func(x float64) string { return fmt.Sprintf("%.6g", x) }
	if m.What == "count" {
		unit = "samples"
	}
	s := fmt.Sprintf("%d summary chunk(s) disagree with the samples beside them (the samples are what every figure uses; the summaries were not used): the first, chunk %d at byte %d (%s, level %d), says %s %s %s for the window from sample %d, where its %d samples give %s %s",
		n, m.Chunk, m.Offset, name, m.Level, m.What, f(m.Summary), unit, m.Start, m.N, f(m.Samples), unit)
	if len(list) > 1 {
		s += "; also chunks"
		for i, x := range list[1:] {
			if i > 0 {
				s += ","
			}
			s += fmt.Sprintf(" %d", x.Chunk)
		}
		if n > len(list) {
			s += ", …"
		}
	}
	return s
}
