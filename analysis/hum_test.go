package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/stat"
	"github.com/idlewatt/idlewatt/units"
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

// add takes the quiet sample at index i.
func (h *humWindows) add(i uint64, w float64) {
	b := [1]float64{w}
	h.addRun(i, b[:])
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

// humBenchTrace is 2 minutes at 10 kS/s of a drive under 50 Hz hum, busy
// for 20–200 ms every 0.2–3 s (the windows restart off the lattice of
// whole windows, as on a real capture), as runs of 1000 rows of one rail
// on a clock of 10⁵ ns a sample.
func humBenchTrace() (runs []*capture.Run, busy []span) {
	rng := rand.New(rand.NewPCG(5, 7))
	tr := makeHumTrace(rng, 10000, 120, 50, 0.02, 3, func() float64 { return 5e-3 * rng.NormFloat64() })
	for t := int64(0); t < int64(len(tr.read))*1e5; {
		t += int64(2000+rng.IntN(28000)) * 1e5
		d := int64(200+rng.IntN(1800)) * 1e5
		busy = append(busy, span{s: t, e: t + d})
		t += d
	}
	for i := 0; i < len(tr.read); i += 1000 {
		n := min(1000, len(tr.read)-i)
		v, a := make([]units.Volts, n), make([]units.Amps, n)
		for j := range n {
			v[j], a[j] = 1, units.Amps(tr.read[i+j])
		}
		runs = append(runs, &capture.Run{Index: uint64(i), N: n, Present: []bool{true}, V: [][]units.Volts{v}, I: [][]units.Amps{a}})
	}
	return runs, busy
}

// humBenchLearner is a humLearner fed the trace.
func humBenchLearner(runs []*capture.Run, busy []span) *humLearner {
	l := &humLearner{rails: []int{0}, busy: activityCursor{spans: busy}}
	for _, hz := range humCandidatesHz {
		if h := newHumWindows(hz, 10000); h != nil {
			l.cands = append(l.cands, h)
		}
	}
	c := &Clock{NsPerSample: 1e5, RateHz: 10000}
	for _, r := range runs {
		l.take(r, c)
	}
	return l
}

// BenchmarkHumPass is the hum pass of one drive over 2 minutes at 10 kS/s
// once read: gathering the windows of both candidates (take, per run of
// rows) and fitting them (fit: the outlier cuts and the offset search).
func BenchmarkHumPass(b *testing.B) {
	runs, busy := humBenchTrace()
	b.Run("take", func(b *testing.B) {
		for b.Loop() {
			humBenchLearner(runs, busy)
		}
		b.ReportMetric(120*10000*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
	})
	b.Run("fit", func(b *testing.B) {
		l := humBenchLearner(runs, busy)
		for b.Loop() {
			if l.model() == nil {
				b.Fatal("no hum found")
			}
		}
	})
}

// offsetPowerDirect is offsetPower summed directly, grid point by grid
// point (the hum pass's sum before the Gaussian gridding): the reference
// TestHumOffsetPowerFast holds it to.
func offsetPowerDirect(starts []uint64, keep []int, c []float64, K, kn, g int, step float64) []float64 {
	p := make([]float64, 2*g+1)
	sr, si := make([]float64, 2*g+1), make([]float64, 2*g+1)
	for k := range kn {
		kk := float64(k + 1)
		clear(sr)
		clear(si)
		for _, w := range keep {
			s0 := float64(starts[w] - starts[keep[0]])
			a, b := c[2*K*w+2*k], c[2*K*w+2*k+1]
			_, f0 := math.Modf(kk * float64(g) * step * s0)
			zs, zc := math.Sincos(2 * math.Pi * f0)
			_, fs := math.Modf(kk * step * s0)
			ds, dc := math.Sincos(-2 * math.Pi * fs)
			re, im := a*zc-b*zs, a*zs+b*zc
			for i := range sr {
				sr[i] += re
				si[i] += im
				re, im = re*dc-im*ds, re*ds+im*dc
			}
		}
		for i := range p {
			p[i] += sr[i]*sr[i] + si[i]*si[i]
		}
	}
	return p
}

// TestHumOffsetPowerFast: on random sets of windows — 64 to 2111 of them,
// starts on and off the lattice of whole windows with gaps of up to
// seconds (one of minutes: the grid's cap), some dropped — whose
// coefficients hold white noise, a hum off the candidate by up to
// ±0.45 Hz in the first harmonics or none, and a ripple aliased into
// one harmonic at a frequency of its own, the offset search's Gaussian
// gridding gives the direct sum's power at every grid point to 10⁻⁹ of
// the peak's, the same peak, and the same refined offset.
func TestHumOffsetPowerFast(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 3))
	worst := 0.0
	for trial := range 60 {
		h := &humWindows{hz: 50, n: 200, m: 1, k: 12}
		if trial%2 == 1 {
			h = &humWindows{hz: 60, n: 500, m: 3, k: 1 + rng.IntN(12)}
		}
		rate := float64(h.n) / float64(h.m) * h.hz
		nw := 64 + rng.IntN(2048)
		var s uint64 = uint64(rng.IntN(1 << 20))
		for range nw {
			h.starts = append(h.starts, s)
			s += uint64(h.n)
			switch rng.IntN(64) {
			case 0, 1, 2, 3, 4, 5, 6, 7:
				s += uint64(rng.IntN(h.n)) // off the lattice
			case 8:
				s += uint64(rng.IntN(3 * int(rate))) // a busy span
			}
		}
		if trial%20 == 0 {
			h.starts[nw-1] += uint64(600 * rate) // the grid's cap
		}
		var keep []int
		for w := range nw {
			if rng.IntN(20) != 0 || w == 0 || w == nw-1 {
				keep = append(keep, w)
			}
		}
		K := h.k
		c := make([]float64, 2*K*nw)
		sigma := math.Pow(10, -4+2*rng.Float64())
		for i := range c {
			c[i] = sigma * rng.NormFloat64()
		}
		tone := func(k int, amp, cyc float64) { // cyc: cycles per sample
			ph := 2 * math.Pi * rng.Float64()
			for w, s0 := range h.starts {
				_, f := math.Modf(cyc * float64(s0-h.starts[0]))
				sn, cs := math.Sincos(2*math.Pi*f + ph)
				c[2*K*w+2*k] += amp * cs
				c[2*K*w+2*k+1] += amp * sn
			}
		}
		if rng.IntN(4) != 0 {
			delta := (0.9*rng.Float64() - 0.45) / rate
			for k := range min(K, 1+rng.IntN(5)) {
				tone(k, sigma*math.Pow(10, -1.5+2*rng.Float64()), float64(k+1)*delta)
			}
		}
		if rng.IntN(2) == 0 {
			tone(rng.IntN(K), sigma*math.Pow(10, -1+2*rng.Float64()), (2*rng.Float64()-1)/rate)
		}
		g, step := h.offsetGrid(keep)
		kn := min(K, humOffsetHarmonics)
		fast := offsetPower(h.starts, keep, c, K, kn, g, step)
		direct := offsetPowerDirect(h.starts, keep, c, K, kn, g, step)
		top, peak := 0, 0.0
		for i, v := range direct {
			if v > peak {
				top, peak = i, v
			}
		}
		var e float64
		ftop := 0
		for i := range fast {
			e = math.Max(e, math.Abs(fast[i]-direct[i]))
			if fast[i] > fast[ftop] {
				ftop = i
			}
		}
		worst = math.Max(worst, e/peak)
		desc := fmt.Sprintf("trial %d: %d windows over %d samples, grid ±%d", trial, len(keep), h.starts[nw-1]-h.starts[0], g)
		if !(e <= 1e-9*peak) {
			t.Errorf("%s: power off the direct sum's by %.3g of the peak's", desc, e/peak)
		}
		if ftop != top {
			t.Errorf("%s: peak at grid point %d, the direct sum's at %d", desc, ftop, top)
		}
		if df, dd := offsetPeak(fast, step), offsetPeak(direct, step); !(math.Abs(df-dd) <= 1e-6*step) {
			t.Errorf("%s: offset %.9g Hz, the direct sum's %.9g Hz", desc, df*rate, dd*rate)
		}
	}
	t.Logf("worst power difference %.3g of the peak's", worst)
}

// addModulo is humWindows.add as it was before the basis tables: each
// harmonic's index (k·m·j) mod n per sample. The reference
// TestHumWindowsBasis holds the tables to.
func addModulo(h *humWindows, i uint64, w float64) {
	if h.fill > 0 && i != h.s0+uint64(h.fill) {
		h.fill = 0
	}
	if h.fill == 0 {
		h.s0 = i
		clear(h.acc)
		h.wabs = 0
	}
	j := h.fill
	for k := 1; k <= h.k; k++ {
		x := (k * h.m * j) % h.n
		h.acc[2*k-2] += w * h.cos[x]
		h.acc[2*k-1] += w * h.sin[x]
	}
	h.wabs += math.Abs(w)
	h.fill++
	if h.fill == h.n {
		h.window()
		h.fill = 0
	}
}

// TestHumWindowsBasis: a window's coefficients gathered through the
// table of every harmonic's basis, and through the indices stepped from
// sample to sample (a window too long for a table), are bit for bit those
// of the basis indexed by (k·m·j) mod n, over noise and hum cut by resets
// and skipped samples — and so are those kept once thinned, where the
// windows not kept are no longer summed.
func TestHumWindowsBasis(t *testing.T) {
	for _, c := range []struct {
		rate, hz float64
		table    bool    // newHumWindows gives a table
		seconds  float64 // 800 s at 2 kS/s thins the 60 Hz windows (stride 4)
	}{{10000, 50, true, 4}, {10000, 60, true, 4}, {2000, 60, true, 800}, {250000, 50, true, 4}, {250000, 60, false, 4}} {
		rng := rand.New(rand.NewPCG(uint64(c.rate), uint64(c.hz)))
		ref := newHumWindows(c.hz, c.rate)
		if (ref.tab != nil) != c.table {
			t.Fatalf("%g Hz at %g S/s: table %v, want %v", c.hz, c.rate, ref.tab != nil, c.table)
		}
		tab, steps := ref.twin(), ref.twin()
		steps.tab = nil
		n := int(c.rate * c.seconds)
		for i := 0; i < n; i++ {
			switch rng.IntN(4 * ref.n) {
			case 0:
				ref.reset()
				tab.reset()
				steps.reset()
				continue
			case 1:
				continue // a busy sample
			}
			w := 0.02 + 5e-3*math.Cos(2*math.Pi*50.03*float64(i)/c.rate) + 1e-3*rng.NormFloat64()
			addModulo(ref, uint64(i), w)
			tab.add(uint64(i), w)
			steps.add(uint64(i), w)
		}
		if len(ref.starts) < 10 || c.seconds > 100 && ref.stride < 4 {
			t.Fatalf("%g Hz at %g S/s: %d windows kept, 1 in %d", c.hz, c.rate, len(ref.starts), ref.stride)
		}
		for name, h := range map[string]*humWindows{"table": tab, "steps": steps} {
			if !slices.Equal(h.starts, ref.starts) || !slices.Equal(h.coef, ref.coef) || h.abs != ref.abs {
				t.Errorf("%g Hz at %g S/s, %s: %d windows, Σ|x| %v; by the modulo %d, %v", c.hz, c.rate, name, len(h.starts), h.abs, len(ref.starts), ref.abs)
			}
		}
	}
}

// TestAccumulateTab: the sums accumulateTab keeps in registers, eight or
// two at a time over a segment's samples, are bit for bit those of the
// loop it replaced (every sum, sample by sample), for every even count of
// sums up to 2·humMaxHarmonics and segments of 0 to 300 samples — and so
// are a window's coefficients gathered from runs of rows (addRun) rather
// than sample by sample.
func TestAccumulateTab(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for k2 := 2; k2 <= 2*humMaxHarmonics; k2 += 2 {
		for range 50 {
			n := rng.IntN(301)
			tab, ws := make([]float64, k2*n), make([]float64, n)
			for i := range tab {
				tab[i] = rng.NormFloat64()
			}
			for i := range ws {
				ws[i] = math.Ldexp(rng.Float64(), rng.IntN(40)-20)
			}
			want, got := make([]float64, k2), make([]float64, k2)
			for i := range want {
				want[i] = rng.NormFloat64()
				got[i] = want[i]
			}
			for j, w := range ws {
				for t := range k2 {
					want[t] += w * tab[j*k2+t]
				}
			}
			wabs := rng.Float64()
			gotAbs, wantAbs := accumulateTab(got, tab, ws, wabs), wabs
			for _, w := range ws {
				wantAbs += math.Abs(w)
			}
			if !slices.Equal(got, want) || gotAbs != wantAbs {
				t.Fatalf("%d sums over %d samples: %v, sample by sample %v", k2, n, got, want)
			}
		}
	}
	for _, hz := range humCandidatesHz {
		ref := newHumWindows(hz, 10000)
		runs := ref.twin()
		var i uint64
		for range 2000 {
			n := 1 + rng.IntN(700)
			ws := make([]float64, n)
			for j := range ws {
				ws[j] = 0.02 + 5e-3*math.Cos(2*math.Pi*hz*float64(i+uint64(j))/10000) + 1e-3*rng.NormFloat64()
				if rng.IntN(2000) == 0 {
					ws[j] = math.NaN() // a busy sample
				}
			}
			runs.addRun(i, ws)
			for j, w := range ws {
				if math.IsNaN(w) {
					ref.reset()
					continue
				}
				addModulo(ref, i+uint64(j), w)
			}
			i += uint64(n)
			if rng.IntN(10) == 0 {
				i += uint64(rng.IntN(300)) // samples skipped
			}
		}
		if len(ref.starts) < 1000 || !slices.Equal(runs.starts, ref.starts) || !slices.Equal(runs.coef, ref.coef) || runs.abs != ref.abs {
			t.Errorf("%g Hz: %d windows from runs, Σ|x| %v; by the modulo %d, %v", hz, len(runs.starts), runs.abs, len(ref.starts), ref.abs)
		}
	}
}
