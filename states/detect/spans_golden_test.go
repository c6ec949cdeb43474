package detect

import (
	"crypto/sha256"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/units"
)

// goldenStream is a deterministic trace that reaches every path of the
// smoothing window: levels held for 20–3000 samples, some between two
// levels' bands (the median then has no band holding half the window),
// background bursts, I/O bursts (the median of the samples without I/O),
// runs of one value, NaN, gaps and DEVSLP splits.
type goldenStream struct {
	seed     uint64
	sigma    float64
	adaptive bool
	runs     bool // hold each value for a run of samples, as a quantised or noise-free meter does
	nanRuns  bool // some levels are NaN: broken readings for as long
}

// spansDigest runs the stream through a Classifier and digests every span.
func spansDigest(t *testing.T, g goldenStream) string {
	h := sha256.New()
	n := 0
	c, err := New(Options{Levels: profile, Period: period, Adaptive: g.adaptive}, func(s Span) {
		fmt.Fprintf(h, "%+v\n", s)
		n++
	})
	if err != nil {
		t.Fatal(err)
	}
	// The digests hold the running median and the dwell; the heads and
	// rises carved after them (carveHead, carveRise) have their own tests.
	c.noHeadCarve, c.noRiseCarve = true, true
	r := rand.New(rand.NewPCG(g.seed, 99))
	levels := []float64{0.4, 0.3, 0.06, 0.0025, 0.35, 0.031, 0.7}
	if g.nanRuns {
		levels = append(levels, math.NaN())
	}
	var splits []hostclock.Time
	for k := 1; k < 40; k++ {
		splits = append(splits, at(k*7919))
	}
	c.SplitAt(splits)
	lv, left, busyLeft, w, hold := 0, 0, 0, 0.0, 0
	for i := range 300_000 {
		if left == 0 {
			lv, left = r.IntN(len(levels)), 20+r.IntN(3000)
		}
		left--
		if busyLeft == 0 && r.IntN(2000) == 0 {
			busyLeft = 1 + r.IntN(400)
		}
		busy := busyLeft > 0
		if busy {
			busyLeft--
		}
		if hold > 0 {
			hold--
		} else {
			w = levels[lv] + g.sigma*r.NormFloat64()
			if busy {
				w += 1
			}
			if g.runs {
				hold = r.IntN(50)
			}
		}
		x := w
		switch r.IntN(20_000) {
		case 0:
			x = math.NaN()
		case 1:
			x = math.Copysign(0, -1)
		}
		c.Push(at(i), units.Watts(x), busy)
		if r.IntN(60_000) == 0 {
			c.Gap()
		}
	}
	c.Close()
	return fmt.Sprintf("%d spans %x", n, h.Sum(nil)[:12])
}

// TestClassifierSpansUnchanged holds the Classifier's spans on these
// streams to the digests the window kept sorted on every sample gave
// (c98b6ee): the medians taken from band counts and from a window kept
// only while asked for must be the same.
func TestClassifierSpansUnchanged(t *testing.T) {
	for _, tc := range []struct {
		g    goldenStream
		want string
	}{
		{goldenStream{seed: 1, sigma: 0.02}, "1190 spans 3fc68d54c9351538a3c41031"},
		{goldenStream{seed: 2, sigma: 0.004, adaptive: true}, "895 spans cd2270b57a29a8fa0e81ed53"},
		{goldenStream{seed: 3, sigma: 0.02, adaptive: true}, "1221 spans a966a32a80acfd03d33b8984"},
		{goldenStream{seed: 4, sigma: 0, adaptive: true, runs: true}, "561 spans d20c573b6815910c7565bd16"},
		{goldenStream{seed: 5, sigma: 0.01, adaptive: true, runs: true}, "644 spans 8735b9325326a172b2471a6b"},
		{goldenStream{seed: 6, sigma: 0.02, nanRuns: true}, "1149 spans b8ac4c78fb0287fb084b302c"},
		{goldenStream{seed: 7, sigma: 0.004, adaptive: true, nanRuns: true}, "993 spans 7d5152b3d379061f9ed4613a"},
	} {
		if got := spansDigest(t, tc.g); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.g, got, tc.want)
		}
	}
}
