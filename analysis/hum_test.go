package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/idlewatt/idlewatt/internal/stat"
)

// humTrace is a drive's power as a meter reads it: levels a few mW apart
// held for 20–500 ms, GC bursts, white noise and, when hz > 0, mains hum
// with harmonics at hz + offset Hz. truth is the drive's power (without
// the meter's noise), hum the hum alone.
type humTrace struct {
	read, truth, hum []float64
	amps             []float64 // the harmonics' amplitudes, W
}

func makeHumTrace(rng *rand.Rand, rate, seconds, hz, offset float64, harmonics int, noise func() float64) humTrace {
	n := int(rate * seconds)
	u := func(a, b float64) float64 { return a + (b-a)*rng.Float64() }
	tr := humTrace{read: make([]float64, n), truth: make([]float64, n), hum: make([]float64, n)}
	levels := []float64{0.030, 0.026, 0.008}
	for i := 0; i < n; {
		d := int(u(0.02, 0.5) * rate)
		lv := levels[rng.IntN(len(levels))]
		if rng.IntN(8) == 0 {
			lv = u(0.1, 1) // a burst
			d /= 4
		}
		for j := i; j < min(n, i+d); j++ {
			tr.truth[j] = lv
		}
		i += d
	}
	var phases []float64
	for k := range harmonics {
		tr.amps = append(tr.amps, u(2.5e-3, 10e-3)/float64(k+1))
		phases = append(phases, u(0, 2*math.Pi))
	}
	for i := range n {
		t := float64(i) / rate
		for k, a := range tr.amps {
			tr.hum[i] += a * math.Cos(2*math.Pi*float64(k+1)*(hz+offset)*t+phases[k])
		}
		tr.read[i] = tr.truth[i] + tr.hum[i] + noise()
	}
	return tr
}

// fitHum runs the hum pass's fit on a trace whose samples are all quiet.
func fitHum(read []float64, rate float64) *humModel {
	l := &humLearner{}
	for _, hz := range humCandidatesHz {
		if h := newHumWindows(hz, rate); h != nil {
			l.cands = append(l.cands, h)
		}
	}
	for i, w := range read {
		for _, h := range l.cands {
			h.add(uint64(i), w)
		}
	}
	return l.model()
}

// blockSpread is the standard deviation of the 10 ms block means of x − y.
func blockSpread(x, y []float64, rate float64) float64 {
	per := int(rate / 100)
	var m []float64
	for i := 0; i+per <= len(x); i += per {
		var s float64
		for j := i; j < i+per; j++ {
			s += x[j] - y[j]
		}
		m = append(m, s/float64(per))
	}
	return math.Sqrt(stat.Var(m))
}

// TestHumFoundAndRemoved: mains hum of 2.5–10 mW with 1–5 harmonics, at 50
// or 60 Hz, on the meter's clock or off it by up to 0.3 Hz, over a drive
// stepping between levels 4 mW apart with bursts, under 5 mW of white
// noise, at 10 and 2 kS/s. The hum is found at its frequency, each tone
// within 5 % (or its stated interval) of the truth, and once removed the
// 10 ms block means scatter about the drive's power by the white noise's
// σ/√n alone (within 10 %) — where with the hum they scatter by mW.
func TestHumFoundAndRemoved(t *testing.T) {
	for i, c := range []struct {
		rate, hz, offset float64
		harmonics        int
	}{
		{10000, 50, 0, 1}, {10000, 60, 0, 3}, {10000, 50, 0, 5}, {10000, 60, 0.02, 2},
		{10000, 50, -0.3, 4}, {2000, 50, 0, 3}, {2000, 60, 0, 3}, {2000, 60, 0.1, 2},
	} {
		t.Run(fmt.Sprintf("%g S/s %g%+g Hz ×%d", c.rate, c.hz, c.offset, c.harmonics), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 41))
			const sigma = 5e-3
			tr := makeHumTrace(rng, c.rate, 20, c.hz, c.offset, c.harmonics, func() float64 { return sigma * rng.NormFloat64() })
			m := fitHum(tr.read, c.rate)
			if m == nil {
				t.Fatal("no hum found")
			}
			f := m.fit
			if float64(f.Hz) != c.hz || math.Abs(float64(f.OffsetHz)-c.offset) > 0.01 {
				t.Errorf("hum at %g%+.4f Hz, want %g%+g", float64(f.Hz), float64(f.OffsetHz), c.hz, c.offset)
			}
			got := map[int]HumHarmonic{}
			for _, h := range f.Harmonics {
				got[h.K] = h
			}
			for k, a := range tr.amps {
				g := got[k+1]
				if e := math.Abs(float64(g.AmpW) - a); !(e <= 0.05*a || e <= float64(g.AmpU95W)) {
					t.Errorf("harmonic %d: %.4g ± %.2g mW, want %.4g mW", k+1, float64(g.AmpW)*1e3, float64(g.AmpU95W)*1e3, a*1e3)
				}
			}
			before := blockSpread(tr.read, tr.truth, c.rate)
			clean := append([]float64(nil), tr.read...)
			m.remove(0, clean)
			after := blockSpread(clean, tr.truth, c.rate)
			want := sigma / math.Sqrt(c.rate/100)
			t.Logf("%+v; 10 ms block means scatter %.3g mW with the hum, %.3g mW without (white noise alone %.3g mW)", f, before*1e3, after*1e3, want*1e3)
			if after > 1.1*want {
				t.Errorf("10 ms block means scatter %.3g mW once the hum is removed, want ≤ %.3g mW (white noise's)", after*1e3, 1.1*want*1e3)
			}
		})
	}
}

// TestNoHumWithoutHum: the noises of the other meter families and a drive
// stepping between levels, DEVSLP-like cycles included, find no hum — a
// capture without hum is analysed as it would be without the hum pass.
func TestNoHumWithoutHum(t *testing.T) {
	for i, c := range []struct {
		name  string
		noise func(rng *rand.Rand) func() float64
	}{
		{"white", func(rng *rand.Rand) func() float64 { return func() float64 { return 5e-3 * rng.NormFloat64() } }},
		{"AR(1) 5 ms", func(rng *rand.Rand) func() float64 {
			x, r := 0.0, math.Exp(-1/(5e-3*10000))
			return func() float64 { x = r*x + 10e-3*math.Sqrt(1-r*r)*rng.NormFloat64(); return x }
		}},
		{"telegraph 2 mW", func(rng *rand.Rand) func() float64 {
			x := 0.0
			return func() float64 {
				if rng.IntN(200) == 0 {
					x = 2e-3 - x
				}
				return x + 1e-3*rng.NormFloat64()
			}
		}},
		{"none", func(*rand.Rand) func() float64 { return func() float64 { return 0 } }},
	} {
		for seed := range 4 {
			if seed == 0 && i == 0 {
				// A header's rate past any meter's finds none without
				// tables of its size.
				for _, rate := range []float64{1e12, math.Inf(1), math.NaN(), 0, -1, 100} {
					if h := newHumWindows(50, rate); h != nil {
						t.Errorf("rate %g: a %d-sample window", rate, h.n)
					}
				}
			}
			rng := rand.New(rand.NewPCG(uint64(i), uint64(seed)))
			tr := makeHumTrace(rng, 10000, 20, 0, 0, 0, c.noise(rng))
			if m := fitHum(tr.read, 10000); m != nil {
				t.Errorf("%s, seed %d: hum found where there is none: %+v", c.name, seed, m.fit)
			}
		}
	}
}

// humBenchTrace is 2 minutes at 10 kS/s of a drive under 50 Hz hum, cut
// into quiet stretches of 0.2–3 s (a busy span between them: the windows
// restart off the lattice of whole windows, as on a real capture).
func humBenchTrace() (read []float64, cut []bool) {
	rng := rand.New(rand.NewPCG(5, 7))
	tr := makeHumTrace(rng, 10000, 120, 50, 0.02, 3, func() float64 { return 5e-3 * rng.NormFloat64() })
	cut = make([]bool, len(tr.read))
	for i := 0; i < len(cut); i += 2000 + rng.IntN(28000) {
		cut[i] = true
	}
	return tr.read, cut
}

// humBenchLearner is a humLearner fed the trace.
func humBenchLearner(read []float64, cut []bool) *humLearner {
	l := &humLearner{}
	for _, hz := range humCandidatesHz {
		if h := newHumWindows(hz, 10000); h != nil {
			l.cands = append(l.cands, h)
		}
	}
	for i, w := range read {
		if cut[i] {
			l.reset()
			continue
		}
		for _, h := range l.cands {
			h.add(uint64(i), w)
		}
	}
	return l
}

// BenchmarkHumPass is the hum pass of one drive over 2 minutes at 10 kS/s:
// gathering the windows of both candidates (add, per sample) and fitting
// them (fit: the outlier cuts and the offset search).
func BenchmarkHumPass(b *testing.B) {
	read, cut := humBenchTrace()
	b.Run("add", func(b *testing.B) {
		for b.Loop() {
			humBenchLearner(read, cut)
		}
		b.ReportMetric(float64(len(read))*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
	})
	b.Run("fit", func(b *testing.B) {
		l := humBenchLearner(read, cut)
		for b.Loop() {
			if l.model() == nil {
				b.Fatal("no hum found")
			}
		}
	})
}
