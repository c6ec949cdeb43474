package analysis_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/internal/noisegen"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/testlong"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// The drive-level estimators under real meter noise: captures written
// here, sample by sample, through a meter of each noise family of
// noisegen (its own generator, not the simulator's, not synthcap's), read
// back by analysis.Analyze, every figure compared with the truth the
// capture was made from.

// noisyCapture is one drawn capture and its truth.
type noisyCapture struct {
	path                string
	idle, avg, energy   float64 // W, W, J
	noiseSigma          float64 // one sample's noise σ as the meter adds it, W
	meter               *noisegen.Meter
	drive               string
	gainLimit, offLimit float64
}

// writeNoisyCapture draws a drive and writes 20 s of it at 2 kS/s on one
// 5 V rail through a meter of family f, with a calibration error within
// stated limits (gain 0.05–0.5 %, offset 0.5–5 µA), the header stating
// those limits (and the LSB, for the LSB family): an SSD idling at 20 mW
// to 2 W (log-uniform) — for the Steps family stepping up 50–300 mW for
// 5–100 ms after 10–150 ms at idle, else with a GC burst (0.1–1 W above
// idle, 5–100 ms) every 0.3–3 s in half the draws. No I/O: every sample is
// quiet.
func writeNoisyCapture(t *testing.T, rng *rand.Rand, f noisegen.Family, k int) noisyCapture {
	t.Helper()
	const rate = 2000
	const n = 20 * rate
	u := func(a, b float64) float64 { return a + (b-a)*rng.Float64() }
	m := noisegen.Draw(rng, f, rate, 5)
	gl, ol := u(0.0005, 0.005), u(0.5e-6, 5e-6)
	m.WithCalibration(rng, gl, ol)
	idle := math.Exp(u(math.Log(0.02), math.Log(2)))
	if f == noisegen.LSB {
		// A level that is not a whole number of LSBs, noise under one.
		idle = (math.Floor(idle/(m.LSBA*5)) + u(0.1, 0.9)) * m.LSBA * 5
	}
	truth := make([]float64, n)
	for i := range truth {
		truth[i] = idle
	}
	switch {
	case f == noisegen.Steps:
		for i := 0; ; {
			i += int(u(0.010, 0.150) * rate)
			d := int(u(0.005, 0.100) * rate)
			if i+d >= n {
				break
			}
			// 50–300 mW: steps under about 4 σ of a 10 ms block mean
			// (20–50 mW under 10–15 mW of noise) are noise to any level
			// estimator at that scale and stay in active idle (with
			// 20–300 mW: +0.44 % median, 13 of 16 intervals held).
			h := u(0.05, 0.3)
			for j := i; j < i+d; j++ {
				truth[j] += h
			}
			i += d
		}
	case rng.IntN(2) == 1:
		every, dur, h := u(0.3, 3), u(0.005, 0.1), u(0.1, 1)
		for s := u(0, every); s+dur < 20; s += every {
			for j := int(s * rate); j < int((s+dur)*rate); j++ {
				truth[j] += h
			}
		}
	}
	read := m.Read(rng, truth)
	ch := meter.Channel{Port: 1, Rail: meter.Rail5V, CurrentLSB: units.Amps(m.LSBA), CurrentGainErr: gl, CurrentOffset: units.Amps(ol)}
	h := capture.Header{Created: "2026-01-01T00:00:00Z", RateHz: rate, StartHost: 1e12, Tool: "noise_coverage_test",
		Meter:    meter.Info{Kind: "synthetic", Model: "noisegen", Ports: 1, Channels: []meter.Channel{ch}},
		Channels: []meter.Channel{ch}, Drives: []capture.DriveInfo{{Port: 1, Name: fmt.Sprintf("%s %d", f, k)}}}
	path := filepath.Join(t.TempDir(), "n.iwcap")
	w, err := capture.Create(path, h, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	V, I := make([]units.Volts, 1000), make([]units.Amps, 1000)
	for s := 0; s < n; s += 1000 {
		for j := range V {
			V[j], I[j] = 5, units.Amps(read[s+j]/5)
		}
		if err := w.Samples(&meter.Block{Channel: 0, Start: uint64(s), V: V, I: I}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, x := range truth {
		sum += x
	}
	return noisyCapture{path: path, idle: idle, avg: sum / n, energy: sum / rate, noiseSigma: m.NoiseSigmaW(), meter: m,
		drive: fmt.Sprintf("%s drive %d (%v; idle %.4g W)", f, k, m, idle), gainLimit: gl, offLimit: ol}
}

type cov struct {
	held, n int
	relErr  []float64
	worst   string
	worstZ  float64
}

func (c *cov) add(x float64, u *float64, truth float64, what string) {
	if math.IsNaN(x) {
		return
	}
	c.n++
	e := x - truth
	c.relErr = append(c.relErr, e/truth)
	if u != nil && math.Abs(e) <= *u {
		c.held++
		return
	}
	z := math.Inf(1)
	if u != nil {
		z = math.Abs(e) / *u
	}
	if z > c.worstZ {
		c.worstZ, c.worst = z, fmt.Sprintf("%s: %.6g ± %v, truth %.6g", what, x, fmtU(u), truth)
	}
}

// addRatio counts an estimate x of truth as held when x/truth is within
// [lo, hi]; a missing estimate is a miss.
func (c *cov) addRatio(x *float64, truth, lo, hi float64, what string) {
	c.n++
	if x == nil || !(truth > 0) {
		c.worst = what + ": no estimate"
		return
	}
	r := *x / truth
	c.relErr = append(c.relErr, r-1)
	if r >= lo && r <= hi {
		c.held++
		return
	}
	if z := math.Abs(math.Log(r)); z > c.worstZ {
		c.worstZ, c.worst = z, fmt.Sprintf("%s: σ %.4g W, the meter's %.4g W", what, *x, truth)
	}
}

func fmtU(u *float64) string {
	if u == nil {
		return "null"
	}
	return fmt.Sprintf("%.3g", *u)
}

func (c *cov) frac() float64 { return float64(c.held) / float64(max(c.n, 1)) }

func (c *cov) medianErr() float64 {
	s := append([]float64(nil), c.relErr...)
	sort.Float64s(s)
	if len(s) == 0 {
		return math.NaN()
	}
	return s[len(s)/2]
}

var driveQuantities = []string{"active idle", "average", "energy", "noise σ"}

// TestDriveIntervalsUnderMeterNoise: per noise family, drives drawn as
// writeNoisyCapture; active idle, average and energy intervals hold the
// truth in ≥ 90 % per family and ≥ 93 % over all, and the noise σ (one
// sample's, robust to level steps) is within −20 % … +25 % of the meter's
// own as often.
func TestDriveIntervalsUnderMeterNoise(t *testing.T) {
	drives := testlong.CoverageDrives(16, 3)
	all := map[string]*cov{}
	for _, q := range driveQuantities {
		all[q] = &cov{}
	}
	var lines []string
	for f := noisegen.Family(0); f < noisegen.NumFamilies; f++ {
		fam := map[string]*cov{}
		for _, q := range driveQuantities {
			fam[q] = &cov{}
		}
		rng := rand.New(rand.NewPCG(uint64(f)+200, 29))
		for k := range drives {
			nc := writeNoisyCapture(t, rng, f, k)
			r, err := analysis.Analyze(nc.path, truthOpts())
			if err != nil {
				t.Fatal(err)
			}
			d := r.Drives[0]
			for _, q := range []struct {
				name  string
				x     float64
				u     *float64
				truth float64
			}{{"active idle", float64(d.ActiveIdleW), (*float64)(d.ActiveIdleU95W), nc.idle}, {"average", float64(d.AverageW), (*float64)(d.AverageU95W), nc.avg}, {"energy", float64(d.EnergyJ), (*float64)(d.EnergyU95J), nc.energy}} {
				fam[q.name].add(q.x, q.u, q.truth, nc.drive)
				all[q.name].add(q.x, q.u, q.truth, nc.drive)
			}
			// The mains hum: found, at its frequency, on every drive of the
			// hum family and on no other; the noise σ is then what is left
			// of the meter's once it is removed.
			sigma := nc.noiseSigma
			if f == noisegen.Hum {
				checkHumFound(t, d.Hum, nc)
				sigma = math.Sqrt(sigma*sigma - nc.meter.HumVarW())
			} else if d.Hum != nil {
				t.Errorf("%s: a hum found where the meter has none: %+v", nc.drive, *d.Hum)
			}
			// The noise σ: "held" when within −20 % … +25 % of the meter's.
			// Under one LSB the readings' scatter is the quantiser's, not
			// the noise's: no σ to compare.
			if f != noisegen.LSB {
				for _, c := range []*cov{fam["noise σ"], all["noise σ"]} {
					c.addRatio((*float64)(d.Uncertainty.NoiseSigmaW), sigma, 0.8, 1.25, nc.drive)
				}
			}
		}
		var parts []string
		for _, q := range driveQuantities {
			c := fam[q]
			parts = append(parts, fmt.Sprintf("%s %d/%d (median error %+.3g %%)", q, c.held, c.n, 100*c.medianErr()))
			if c.n >= 10 && c.frac() < 0.9 {
				t.Errorf("%s: %s held the truth in %d of %d (want ≥ 90 %%); worst %s", f, q, c.held, c.n, c.worst)
			}
		}
		lines = append(lines, fmt.Sprintf("%-10s %s", f, strings.Join(parts, ", ")))
	}
	for _, l := range lines {
		t.Log(l)
	}
	for _, q := range driveQuantities {
		c := all[q]
		t.Logf("all families: %s held %d of %d (%.1f %%)", q, c.held, c.n, 100*c.frac())
		want := 0.93
		if testing.Short() && q != "noise σ" {
			want = 0.85 // 21 drives: a miss is 5 %
		}
		if c.frac() < want {
			t.Errorf("all families: %s held the truth in %d of %d (want ≥ %.0f %%); worst %s", q, c.held, c.n, 100*want, c.worst)
		}
	}
}

// checkHumFound checks the hum found on a drive of the hum family: the
// meter's mains frequency, and each of its three tones within 5 % of the
// meter's or within its stated interval.
func checkHumFound(t *testing.T, h *analysis.HumFit, nc noisyCapture) {
	t.Helper()
	if h == nil {
		t.Errorf("%s: no hum found", nc.drive)
		return
	}
	if float64(h.Hz) != nc.meter.MainsHz {
		t.Errorf("%s: hum found at %g Hz", nc.drive, float64(h.Hz))
	}
	got := map[int]analysis.HumHarmonic{}
	for _, x := range h.Harmonics {
		got[x.K] = x
	}
	for k, a := range nc.meter.HumA {
		want := a * nc.meter.Volts
		g := got[k+1]
		if e := math.Abs(float64(g.AmpW) - want); !(e <= 0.05*want || e <= float64(g.AmpU95W)) {
			t.Errorf("%s: hum harmonic %d %.4g ± %.2g mW, the meter's %.4g mW", nc.drive, k+1, float64(g.AmpW)*1e3, float64(g.AmpU95W)*1e3, want*1e3)
		}
	}
}

// TestStepSignalNoise: a drive whose power steps between 1.7 and 3.4 W
// (every 50 ms to 2 s) under a few mW of meter noise. The noise σ is the
// meter's (not the steps': 17 W before), the energy interval is the
// noise's and the meter's (±3.7 J before, for 12 J), and the peak interval
// holds the true peak, 3.4 W, without reaching below 0 (it was [−75, 37] W).
func TestStepSignalNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 7))
	for range 6 {
		const rate = 2000
		half := time.Duration(50+rng.IntN(1950)) * time.Millisecond
		n := 20 * rate
		truth := make([]float64, n)
		for i := range truth {
			truth[i] = 1.7
			if (time.Duration(i)*time.Second/rate/half)%2 == 1 {
				truth[i] = 3.4
			}
		}
		m := noisegen.Draw(rng, noisegen.White, rate, 5)
		m.SigmaA = 0.4e-3 // 2 mW
		read := m.Read(rng, truth)
		d := analyzeReadings(t, read, rate, fmt.Sprintf("step %v", half))
		var sum float64
		for _, x := range truth {
			sum += x
		}
		energy := sum / rate
		s := d.Uncertainty.NoiseSigmaW
		t.Logf("steps every %v: noise σ %v W, energy %.4f ± %v J (truth %.4f), peak %.4f %v", half, fmtU((*float64)(s)), d.EnergyJ, fmtU((*float64)(d.EnergyU95J)), energy, d.PeakW, d.PeakCI95W)
		if s == nil || *s > 0.004 || *s < 0.001 {
			t.Errorf("steps every %v: noise σ %v W, the meter's is 0.002 W", half, fmtU((*float64)(s)))
		}
		if d.EnergyU95J == nil || *d.EnergyU95J > 0.01 || math.Abs(float64(d.EnergyJ)-energy) > float64(*d.EnergyU95J) {
			t.Errorf("steps every %v: energy %.5f ± %v J, truth %.5f J", half, d.EnergyJ, fmtU((*float64)(d.EnergyU95J)), energy)
		}
		if ci := d.PeakCI95W; ci == nil || ci[0] < 3.3 || ci[0] > 3.4 || ci[1] < 3.4 || ci[1] > 3.5 {
			t.Errorf("steps every %v: peak interval %v, the true peak is 3.4 W", half, ci)
		}
	}
}

// analyzeReadings writes readings (W, on one 5 V rail, at rate) as a
// capture and analyses it.
func analyzeReadings(t *testing.T, read []float64, rate float64, name string) analysis.DriveReport {
	t.Helper()
	ch := meter.Channel{Port: 1, Rail: meter.Rail5V}
	h := capture.Header{Created: "2026-01-01T00:00:00Z", RateHz: units.Hertz(rate), StartHost: 1e12, Tool: "noise_coverage_test",
		Meter:    meter.Info{Kind: "synthetic", Model: "noisegen", Ports: 1, Channels: []meter.Channel{ch}},
		Channels: []meter.Channel{ch}, Drives: []capture.DriveInfo{{Port: 1, Name: name}}}
	path := filepath.Join(t.TempDir(), "r.iwcap")
	w, err := capture.Create(path, h, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for s := 0; s < len(read); s += 1000 {
		e := min(s+1000, len(read))
		V, I := make([]units.Volts, e-s), make([]units.Amps, e-s)
		for j := range V {
			V[j], I[j] = 5, units.Amps(read[s+j]/5)
		}
		if err := w.Samples(&meter.Block{Channel: 0, Start: uint64(s), V: V, I: I}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := analysis.Analyze(path, truthOpts())
	if err != nil {
		t.Fatal(err)
	}
	return r.Drives[0]
}
