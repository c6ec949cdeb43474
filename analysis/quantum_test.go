package analysis_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/synthcap"
	"github.com/idlewatt/idlewatt/capture"
)

// TestQuantisedLevelsWithoutAStatedLSB: a meter whose readings are whole
// steps of 5–50 µA, read with noise under one step (0.05–0.3 of it), whose
// file does not state the step — the independent generator's quantised
// captures (seed 10 drives 4, 24, 69). The idle level's blocks differ by
// a fraction of a step where a rare flip falls, and without the step
// those fractions were modes of their own: idle named twice, 35 points of
// idle read as Partial. The levels are resolved to the smallest step the
// readings move by; idle, Partial and Slumber residency within 1 point.
// Drawn: levels (idle 50 mW – 1 W, Partial 40–90 % of it, Slumber 5–40 %
// of Partial), the DIPM timers (Partial after 2–10 ms, Slumber after
// 20–200 ms), bursts every 0.3–1.5 s.
func TestQuantisedLevelsWithoutAStatedLSB(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 69))
	for trial := range 8 {
		logu := func(lo, hi float64) float64 { return lo * math.Exp(r.Float64()*math.Log(hi/lo)) }
		idle := logu(0.05, 1)
		partial := idle * (0.4 + 0.5*r.Float64())
		slumber := partial * logu(0.05, 0.4)
		lsb := logu(5e-6, 50e-6)
		ms := func(lo, hi float64) time.Duration { return time.Duration((lo + (hi-lo)*r.Float64()) * 1e6) }
		d := synthcap.Drive{Port: 1, Name: "q", IdleW: idle, BusyW: 3*idle + 0.3, PartialW: partial, SlumberW: slumber,
			PartialAfter: ms(2, 10), SlumberAfter: ms(20, 200)}
		s := synthcap.Scenario{RateHz: 10000, Duration: 20 * time.Second, StartHost: 5e12, Drives: []synthcap.Drive{d},
			NoiseA: lsb * (0.05 + 0.25*r.Float64()), CurrentLSB: lsb, LSBUnstated: true, Seed: int64(trial) + 1}
		for at := 2 * time.Second; at < s.Duration-time.Second; at += ms(300, 1500) {
			s.IO = append(s.IO, synthcap.IO{Port: 1, Start: at, Dur: ms(1, 5), Op: capture.OpRead, Size: 4096})
		}
		// The truth: each sample's true power is one of the levels.
		truth := map[float64]float64{}
		tp := s.TruePower(1)
		for _, w := range tp {
			truth[w]++
		}
		n := float64(len(tp))
		opts := analysis.DefaultOptions()
		opts.States = &analysis.StateOptions{}
		rep := analyze(t, s, opts)
		dr := rep.Drives[0]
		for _, c := range []struct {
			name string
			w    float64
			got  float64
		}{{"idle", idle, dr.Residency.Idle}, {"partial", partial, dr.Residency.Partial}, {"slumber", slumber, dr.Residency.Slumber}} {
			want := truth[c.w] / n
			if math.Abs(c.got-want) > 0.01 {
				t.Errorf("trial %d (idle %.1f mW, Partial %.1f, Slumber %.2f, step %.1f µA): %s residency %.2f %%, truth %.2f %%",
					trial, idle*1e3, partial*1e3, slumber*1e3, lsb*1e6, c.name, 100*c.got, 100*want)
			}
		}
	}
}

// TestFloorIntervalHoldsTheReadingsStep: a meter whose readings are whole
// steps of 20–50 µA with noise of 0.05–0.2 of a step, whose file does not
// state the step, and a DevSlp floor between steps: the floor reads off by
// up to half a step, and its interval must say so — without the readings'
// own step as the meter's resolution it was a few nW wide (the independent
// generator's seed 13, capture route: 5 quantised floors missed, errors
// of 1–7 µW). Drawn: the step, the noise, the floor (0.3–3 mW).
func TestFloorIntervalHoldsTheReadingsStep(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 44))
	held := 0
	const trials = 8
	for trial := range trials {
		lsb := 20e-6 + 30e-6*r.Float64()
		s := devslpScenario()
		s.Drives[0].DevSlpW = 0.0003 + 0.0027*r.Float64()
		s.NoiseA, s.CurrentLSB, s.LSBUnstated, s.Seed = lsb*(0.05+0.15*r.Float64()), lsb, true, int64(trial)+1
		opts := analysis.DefaultOptions()
		opts.States = &analysis.StateOptions{} // as report and measure run: the levels learn the step
		rep := analyze(t, s, opts)
		d := rep.Drives[0].DevSlp
		f, u := float64(d.FloorW), float64(d.FloorU95W)
		if math.Abs(f-s.Drives[0].DevSlpW) <= u {
			held++
		} else {
			t.Logf("trial %d: floor %.4f ± %.4f mW, truth %.4f mW (step %.1f µA = %.3f mW)", trial, f*1e3, u*1e3, s.Drives[0].DevSlpW*1e3, lsb*1e6, lsb*5e3)
		}
	}
	if held < trials-1 {
		t.Errorf("the floor's interval held the truth in %d of %d", held, trials)
	}
}

// TestIdleAndAverageIntervalsHoldTheReadingsStep: the same quantised
// readings (whole steps of 20–50 µA, noise under a fifth of a step, no LSB
// stated) — active idle's and the average's intervals hold the
// quantiser's bias too, not only the DevSlp block's (the independent
// generator's seed 14, capture route: quantised drives' active idle and
// average 6–90 µW off with intervals of ±0.8–10 µW).
func TestIdleAndAverageIntervalsHoldTheReadingsStep(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 4))
	held := 0
	const trials = 8
	for trial := range trials {
		lsb := 20e-6 + 30e-6*r.Float64()
		s := devslpScenario()
		s.Drives[0].IdleW = 0.02 + 0.2*r.Float64()
		s.NoiseA, s.CurrentLSB, s.LSBUnstated, s.Seed = lsb*(0.05+0.15*r.Float64()), lsb, true, int64(trial)+1
		opts := analysis.DefaultOptions()
		opts.States = &analysis.StateOptions{}
		rep := analyze(t, s, opts)
		d := rep.Drives[0]
		var sum, n float64
		for _, w := range s.TruePower(1) {
			sum += w
			n++
		}
		ok := d.ActiveIdleU95W != nil && d.AverageU95W != nil &&
			math.Abs(float64(d.ActiveIdleW)-s.Drives[0].IdleW) <= float64(*d.ActiveIdleU95W) &&
			math.Abs(float64(d.AverageW)-sum/n) <= float64(*d.AverageU95W)
		if ok {
			held++
		} else {
			t.Logf("trial %d (step %.1f µA): active idle %.6f W ± %v, truth %.6f; average %.6f ± %v, truth %.6f", trial, lsb*1e6,
				float64(d.ActiveIdleW), ptrOr((*float64)(d.ActiveIdleU95W)), s.Drives[0].IdleW, float64(d.AverageW), ptrOr((*float64)(d.AverageU95W)), sum/n)
		}
	}
	if held < trials-1 {
		t.Errorf("active idle's and the average's intervals both held the truth in %d of %d", held, trials)
	}
}
