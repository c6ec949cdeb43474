package drivesim

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/units"
)

// A profile without a noise model renders what it rendered before the
// noise models existed: these hashes of a second of three built-ins under
// a random script were taken at the commit before them (93bfcc4).
func TestDefaultRenderUnchanged(t *testing.T) {
	want := map[string]uint64{"jmf667h-128-a19": 0x5e2ffe777973fdb8, "hdd-7200": 0xd5d4957b40331286, "ssd340": 0xc396e3afe04a9550}
	for name, h0 := range want {
		p, _ := Lookup(name, nil)
		m, err := New(p, Options{Seed: 7, Policy: PolicyMinPower})
		if err != nil {
			t.Fatal(err)
		}
		evs := randomScript(rand.New(rand.NewPCG(3, 4)), time.Second, false)
		a5, a12, _ := run(m, evs, time.Second, 50)
		h := fnv.New64a()
		var b [8]byte
		for k := range a5 {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(a5[k]))
			h.Write(b[:])
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(a12[k]))
			h.Write(b[:])
		}
		if got := h.Sum64(); got != h0 {
			t.Errorf("%s: samples changed (hash %#x, was %#x)", name, got, h0)
		}
	}
}

// everyNoise sets every component at once.
var everyNoise = Noise{AR1MA: 0.8, AR1TauMs: 2, FlickerMA: 0.5, FlickerLoMs: 0.2, FlickerHiMs: 10,
	HumMA: 0.7, HumHz: 50, HumHarmonics: 3, RippleMA: 0.4, RippleKHz: 100.2, BandwidthKHz: 3,
	GainPct: 0.08, OffsetUA: -4, DriftUA: 5, DriftS: 30, StepMA: 0.6, StepMs: 20}

func TestNoiseIndependentOfChunking(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 2))
	p := randomProfile(r)
	p.Noise = everyNoise
	p.FormFactor, p.Rails = "3.5", Rails5V12V // both rails noisy
	hdd, _ := Lookup("hdd-7200", nil)
	p.SpinupMs, p.SpinupW, p.SpindleW, p.Active12VShare, p.DevSlpSupported, p.DevSlpBroken = hdd.SpinupMs, hdd.SpinupW, min(hdd.SpindleW, p.SlumberW/2), 0.5, false, false
	evs := randomScript(r, 2*time.Second, false)
	mk := func() *Model {
		m, err := New(p, Options{Seed: 11, Policy: PolicyMinPower})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a5, a12, _ := run(mk(), evs, 2*time.Second, 100)
	for _, chunk := range []int{1, 37, 4096, 20000} {
		b5, b12, _ := run(mk(), evs, 2*time.Second, chunk)
		for k := range a5 {
			// The bandwidth's history is recomputed from the segments, which
			// straddling samples average with the chunk's own float offsets.
			if math.Abs(a5[k]-b5[k]) > 1e-12 || math.Abs(a12[k]-b12[k]) > 1e-12 {
				t.Fatalf("chunk %d: sample %d differs: %v/%v vs %v/%v", chunk, k, a5[k], a12[k], b5[k], b12[k])
			}
		}
	}
}

// Without the bandwidth (whose input is the drive's current), the noise is
// a function of the seed and the sample index alone: a model that starts
// rendering at 1.5 s, or renders backwards in time, reads what one that
// rendered from 0 read there, to the bit.
func TestNoiseIsAFunctionOfTheIndex(t *testing.T) {
	nz := everyNoise
	nz.BandwidthKHz = 0
	const rate = 10000
	whole := quiet(t, nz, 1, rate, 0, 2*rate, 512)
	late := quiet(t, nz, 1, rate, 15000, 5000, 333)
	for k := range late {
		if late[k] != whole[15000+k] {
			t.Fatalf("sample %d: %v rendered from 1.5 s, %v rendered from 0", 15000+k, late[k], whole[15000+k])
		}
	}
	m := quietModel(t, nz, 1)
	v, i := make([]units.Volts, 100), make([]units.Amps, 100)
	v12, i12 := make([]units.Volts, 100), make([]units.Amps, 100)
	for _, k0 := range []int{19000, 300, 7000, 299, 19900} { // backwards and forwards
		m.Render(time.Duration(k0)*100*time.Microsecond, rate, v, i, v12, i12)
		for k := range i {
			if float64(i[k])-0.2 != whole[k0+k] {
				t.Fatalf("re-rendered sample %d: %v, first time %v", k0+k, i[k], whole[k0+k])
			}
		}
	}
}

// quietModel is an SSD at active idle with nothing to do (max_performance,
// no GC), 1 W at 5 V, with noise model nz and noise_ma white.
func quietModel(t *testing.T, nz Noise, seed int64) *Model {
	t.Helper()
	p, _ := Lookup("jmf667h-128-a19", nil)
	p.ActiveIdleW, p.PeakWriteW, p.GCEveryS, p.NoiseMA, p.Noise = 1, 3, 0, 0, nz
	m, err := New(p, Options{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// quiet renders samples k0 … k0+n−1 of quietModel at rate in chunks and
// returns the 5 V readings minus the true 0.2 A (the meter's noise), in A.
func quiet(t *testing.T, nz Noise, seed int64, rate float64, k0, n, chunk int) []float64 {
	t.Helper()
	m := quietModel(t, nz, seed)
	out := make([]float64, n)
	v, i := make([]units.Volts, chunk), make([]units.Amps, chunk)
	v12, i12 := make([]units.Volts, chunk), make([]units.Amps, chunk)
	for k := 0; k < n; k += chunk {
		c := min(chunk, n-k)
		m.Render(time.Duration(float64(k0+k)*1e9/rate), units.Hertz(rate), v[:c], i[:c], v12[:c], i12[:c])
		for j := range c {
			out[k+j] = float64(i[j]) - 0.2
			if i12[j] != 0 {
				t.Fatalf("a 5 V drive's 12 V rail read %v", i12[j])
			}
		}
	}
	return out
}

func meanSD(x []float64) (m, sd float64) {
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	for _, v := range x {
		sd += (v - m) * (v - m)
	}
	return m, math.Sqrt(sd / float64(len(x)-1))
}

func lag1(x []float64) float64 {
	m, sd := meanSD(x)
	var c float64
	for k := 1; k < len(x); k++ {
		c += (x[k] - m) * (x[k-1] - m)
	}
	return c / float64(len(x)-1) / (sd * sd)
}

func TestAR1MatchesItsDefinition(t *testing.T) {
	for _, tau := range []float64{0.1, 1, 5, 20} {
		nz := Noise{AR1MA: 2, AR1TauMs: tau}
		x := quiet(t, nz, 3, 10000, 0, 1_000_000, 4096)
		rho := math.Exp(-0.1 / tau)
		_, sd := meanSD(x)
		// The lag-1 estimate's standard error is ≈ √((1 − ρ²)/N); σ's
		// relative one ≈ √((1 + ρ²)/(2N(1 − ρ²))).
		if r := lag1(x); math.Abs(r-rho) > 5*math.Sqrt((1-rho*rho)/1e6)+1e-4 {
			t.Errorf("τ %g ms: lag-1 correlation %.5f, want exp(−T/τ) = %.5f", tau, r, rho)
		}
		if rel := math.Sqrt((1 + rho*rho) / (2e6 * (1 - rho*rho))); math.Abs(sd/2e-3-1) > 5*rel {
			t.Errorf("τ %g ms: σ %.4f mA, want 2 ± %.4f", tau, sd*1e3, 10*rel)
		}
	}
}

// fft is an in-place radix-2 FFT (len(x) a power of two).
func fft(x []complex128) {
	n := len(x)
	for i, j := 1, 0; i < n; i++ {
		bit := n >> 1
		for ; j&bit != 0; bit >>= 1 {
			j ^= bit
		}
		j ^= bit
		if i < j {
			x[i], x[j] = x[j], x[i]
		}
	}
	for l := 2; l <= n; l <<= 1 {
		w := cmplx.Exp(complex(0, -2*math.Pi/float64(l)))
		for i := 0; i < n; i += l {
			wk := complex(1, 0)
			for k := 0; k < l/2; k++ {
				a, b := x[i+k], x[i+k+l/2]*wk
				x[i+k], x[i+k+l/2] = a+b, a-b
				wk *= w
			}
		}
	}
}

// psd is the averaged periodogram of x in segments of n (a power of two),
// Hann-windowed, one-sided, in A²/Hz at rate fs: bin k is k·fs/n.
func psd(x []float64, n int, fs float64) []float64 {
	win := make([]float64, n)
	var wss float64
	for i := range win {
		win[i] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(n))
		wss += win[i] * win[i]
	}
	out := make([]float64, n/2)
	buf := make([]complex128, n)
	segs := 0
	for s := 0; s+n <= len(x); s += n / 2 {
		m, _ := meanSD(x[s : s+n])
		for i := range buf {
			buf[i] = complex((x[s+i]-m)*win[i], 0)
		}
		fft(buf)
		for k := range out {
			out[k] += 2 * real(buf[k]*cmplx.Conj(buf[k])) / (fs * wss)
		}
		segs++
	}
	for k := range out {
		out[k] /= float64(segs)
	}
	return out
}

// The 1/f noise's spectrum falls as 1/f between its corners.
func TestFlickerSpectrumIsOneOverF(t *testing.T) {
	nz := Noise{FlickerMA: 1, FlickerLoMs: 0.05, FlickerHiMs: 50}
	const fs = 20000.0
	x := quiet(t, nz, 5, fs, 0, 1<<21, 8192)
	if _, sd := meanSD(x); math.Abs(sd/1e-3-1) > 0.1 {
		t.Errorf("σ %.3f mA, want 1", sd*1e3)
	}
	s := psd(x, 1<<14, fs)
	// Fit log S against log f over two decades well inside the band
	// (corners 1/(2π·50 ms) = 3.2 Hz and 1/(2π·0.05 ms) = 3.2 kHz).
	var sx, sy, sxx, sxy, n float64
	for k := range s {
		f := float64(k) * fs / float64(1<<14)
		if f < 20 || f > 600 {
			continue
		}
		lx, ly := math.Log(f), math.Log(s[k])
		sx, sy, sxx, sxy, n = sx+lx, sy+ly, sxx+lx*lx, sxy+lx*ly, n+1
	}
	slope := (n*sxy - sx*sy) / (n*sxx - sx*sx)
	if math.Abs(slope+1) > 0.12 {
		t.Errorf("spectral slope %.3f between 20 and 600 Hz, want −1", slope)
	}
}

// dft is |X(f)|·2/N at integer frequencies 0 … fs/2 of x sampled at fs
// (N = len(x) = fs: bins 1 Hz apart): the amplitude of a tone on the bin.
func dft(x []float64) []float64 {
	n := len(x)
	cs, sn := make([]float64, n), make([]float64, n)
	for i := range cs {
		cs[i], sn[i] = math.Cos(2*math.Pi*float64(i)/float64(n)), math.Sin(2*math.Pi*float64(i)/float64(n))
	}
	amp := make([]float64, n/2)
	for f := range amp {
		var re, im float64
		for i, v := range x {
			j := f * i % n
			re += v * cs[j]
			im -= v * sn[j]
		}
		amp[f] = 2 * math.Hypot(re, im) / float64(n)
	}
	return amp
}

// Hum at 50 Hz with harmonics, and 100.2 kHz regulator ripple read at
// 10 kS/s: lines at 50, 100, 150 Hz of 1/k the fundamental, and the ripple
// at its alias |100 200 − 10·10 000| = 200 Hz, nowhere else.
func TestHumAndAliasedRippleLines(t *testing.T) {
	nz := Noise{HumMA: 1.5, HumHz: 50, HumHarmonics: 3, RippleMA: 0.8, RippleKHz: 100.2}
	x := quiet(t, nz, 9, 10000, 123456, 10000, 999)
	amp := dft(x)
	want := map[int]float64{50: 1.5e-3, 100: 0.75e-3, 150: 0.5e-3, 200: 0.8e-3}
	for f, a := range amp {
		w := want[f]
		if math.Abs(a-w) > 1e-6 {
			t.Errorf("line at %d Hz: %.4f mA, want %.4f mA", f, a*1e3, w*1e3)
		}
	}
	// 60 Hz hum and a 20.35 kHz converter at 10 kS/s: 60, 120 Hz and 350 Hz.
	nz = Noise{HumMA: 1, HumHz: 60, HumHarmonics: 2, RippleMA: 1, RippleKHz: 20.35}
	amp = dft(quiet(t, nz, 2, 10000, 0, 10000, 10000))
	for f, a := range amp {
		w := map[int]float64{60: 1e-3, 120: 0.5e-3, 350: 1e-3}[f]
		if math.Abs(a-w) > 1e-6 {
			t.Errorf("60 Hz case: line at %d Hz: %.4f mA, want %.4f mA", f, a*1e3, w*1e3)
		}
	}
}

// The sensor's bandwidth is a first-order low-pass: white noise through
// it has half its power density at the corner (−3 dB), and the filter
// passes 0 Hz at unity gain.
func TestBandwidthMinus3dBAtTheCorner(t *testing.T) {
	// At 200 kS/s a 2 kHz corner is far below Nyquist, where the held
	// first-order response matches the analogue one: |H(fc)|² = ½.
	p, _ := Lookup("jmf667h-128-a19", nil)
	p.ActiveIdleW, p.PeakWriteW, p.GCEveryS, p.NoiseMA, p.Noise = 1, 3, 0, 2, Noise{BandwidthKHz: 2}
	const fs = 200000.0
	m, err := New(p, Options{Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	n := 1 << 21
	x := make([]float64, n)
	v, i := make([]units.Volts, 4096), make([]units.Amps, 4096)
	v12, i12 := make([]units.Volts, 4096), make([]units.Amps, 4096)
	for k := 0; k < n; k += 4096 {
		m.Render(time.Duration(float64(k)*1e9/fs), fs, v, i, v12, i12)
		for j := range i {
			x[k+j] = float64(i[j]) - 0.2
		}
	}
	if mu, _ := meanSD(x); math.Abs(mu) > 2e-5 {
		t.Errorf("mean %.4g A: the filter must pass 0 Hz at unity gain", mu)
	}
	s := psd(x, 1<<12, fs) // 48.8 Hz bins
	bin := func(f float64) int { return int(math.Round(f * (1 << 12) / fs)) }
	avg := func(f float64) float64 { // ±3 bins
		var a float64
		for k := bin(f) - 3; k <= bin(f)+3; k++ {
			a += s[k]
		}
		return a / 7
	}
	low := avg(300)
	// The reference level below the corner is the response at 300 Hz,
	// 1/(1 + (0.3/2)²) of the 0 Hz one.
	ratio := avg(2000) / (low * (1 + 0.15*0.15))
	if math.Abs(ratio-0.5) > 0.03 {
		t.Errorf("power at the 2 kHz corner is %.3f of the passband's, want 0.5 (−3 dB)", ratio)
	}
	if r := avg(8000) / (low * (1 + 0.15*0.15)); math.Abs(r-1/(1+16.0)) > 0.01 {
		t.Errorf("power at 8 kHz is %.4f of the passband's, want 1/(1+(8/2)²) = %.4f", r, 1/17.0)
	}

	// The impulse response on a pure tone, at the campaign's 10 kS/s:
	// the held filter's exact gain (1 − a)/|1 − a·e^{−iω}|.
	h := lowPassFIR(1000, 10000)
	a := math.Exp(-2 * math.Pi * 0.1)
	w := 2 * math.Pi * 1000 / 10000
	want := (1 - a) / cmplx.Abs(1-complex(a, 0)*cmplx.Exp(complex(0, -w)))
	var re, im float64
	for k, c := range h {
		re += c * math.Cos(w*float64(k))
		im -= c * math.Sin(w*float64(k))
	}
	if g := math.Hypot(re, im); math.Abs(g-want) > 1e-6 {
		t.Errorf("FIR gain at 1 kHz %.6f, want %.6f", g, want)
	}
	var sum float64
	for _, c := range h {
		sum += c
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("FIR gain at 0 Hz %v", sum)
	}
}

// Gain, offset and drift: a constant current reads (1 + g)·I + offset +
// drift, the drift within ±drift_ua and spanning most of it.
func TestCalibrationAndDrift(t *testing.T) {
	nz := Noise{GainPct: -0.2, OffsetUA: 7, DriftUA: 5, DriftS: 0.5}
	x := quiet(t, nz, 1, 1000, 0, 20000, 700) // 20 s at 1 kS/s: 40 drift periods
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range x {
		d := v + 0.2 - (0.998*0.2 + 7e-6) // the drift alone
		lo, hi = min(lo, d), max(hi, d)
	}
	if hi > 5e-6+1e-12 || lo < -5e-6-1e-12 || hi-lo < 0.7*2*5e-6 {
		t.Errorf("drift spans %.3f … %.3f µA, want within ±5 µA and most of it", lo*1e6, hi*1e6)
	}
}

// Steps: the level is exactly ±step/2, and it changes at half the refresh
// rate (half the refreshes keep it): a mean dwell of 2 × step_ms.
func TestStepsTelegraph(t *testing.T) {
	nz := Noise{StepMA: 2, StepMs: 5}
	x := quiet(t, nz, 6, 10000, 0, 2_000_000, 1000)
	changes := 0
	for k, v := range x {
		if math.Abs(math.Abs(v)-1e-3) > 1e-12 {
			t.Fatalf("sample %d reads %v A off the true current, want ±1 mA", k, v)
		}
		if k > 0 && v != x[k-1] {
			changes++
		}
	}
	dwell := 200.0 / float64(changes) * 1e3 // ms
	if math.Abs(dwell/10-1) > 0.05 {
		t.Errorf("mean dwell %.2f ms, want 10 (2 × step_ms)", dwell)
	}
}

// The meter's noise is not the drive's: a noisy model's truth is its
// noise-free twin's.
func TestNoiseLeavesTheTruth(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	p := randomProfile(r)
	evs := randomScript(r, time.Second, true)
	q := p
	q.Noise = everyNoise
	a, _ := New(p, Options{Seed: 3, KeepTruth: true, Policy: PolicyMinPower})
	b, _ := New(q, Options{Seed: 3, KeepTruth: true, Policy: PolicyMinPower})
	run(a, evs, time.Second, 100)
	run(b, evs, time.Second, 100)
	ta, tb := a.Truth(), b.Truth()
	if len(ta) != len(tb) || len(ta) == 0 {
		t.Fatalf("%d vs %d truth segments", len(ta), len(tb))
	}
	for k := range ta {
		if ta[k] != tb[k] {
			t.Fatalf("truth segment %d: %+v vs %+v", k, ta[k], tb[k])
		}
	}
}

func TestNoiseValidation(t *testing.T) {
	base, _ := Lookup("jmf667h-128-a19", nil)
	for _, c := range []struct {
		nz  Noise
		key string
	}{
		{Noise{AR1MA: 1}, "noise.ar1_tau_ms"},
		{Noise{AR1MA: -1, AR1TauMs: 1}, "noise.ar1_ma"},
		{Noise{FlickerMA: 1, FlickerLoMs: 2, FlickerHiMs: 1}, "noise.flicker_hi_ms"},
		{Noise{HumMA: 1}, "noise.hum_hz"},
		{Noise{HumMA: 1, HumHz: 50, HumHarmonics: 2.5}, "noise.hum_harmonics"},
		{Noise{RippleMA: 1}, "noise.ripple_khz"},
		{Noise{DriftUA: 1}, "noise.drift_s"},
		{Noise{StepMA: 1}, "noise.step_ms"},
		{Noise{GainPct: 20}, "noise.gain_pct"},
		{Noise{BandwidthKHz: math.NaN()}, "noise.bandwidth_khz"},
	} {
		p := base
		p.Noise = c.nz
		err := p.Validate()
		ve, ok := err.(*ValidationError)
		if !ok || ve.Key != c.key {
			t.Errorf("%+v: %v, want an error naming %s", c.nz, err, c.key)
		}
	}
	p := base
	p.Noise = everyNoise
	if err := p.Validate(); err != nil {
		t.Errorf("every component: %v", err)
	}
}

func TestParseNoise(t *testing.T) {
	got, err := parseYAML(t, "profiles:\n  n:\n    base: jmf667h-128-a19\n    noise:\n      ar1_ma: 1.5\n      ar1_tau_ms: 2\n  m:\n    base: n\n    noise:\n      hum_ma: 0.5\n      hum_hz: 60\n")
	if err != nil {
		t.Fatal(err)
	}
	if n := got["n"].Noise; n != (Noise{AR1MA: 1.5, AR1TauMs: 2}) {
		t.Errorf("n: %+v", n)
	}
	// A profile on a base keeps the base's noise keys and sets its own.
	if n := got["m"].Noise; n != (Noise{AR1MA: 1.5, AR1TauMs: 2, HumMA: 0.5, HumHz: 60}) {
		t.Errorf("m: %+v", n)
	}
	if b, _ := Lookup("jmf667h-128-a19", nil); !b.Noise.IsZero() {
		t.Error("a built-in has a noise model")
	}
	for src, want := range map[string]string{
		"profiles:\n  x:\n    base: ssd340\n    noise:\n      ar1_tua_ms: 1\n": `profiles.x.noise.ar1_tua_ms: unknown noise parameter (did you mean "ar1_tau_ms"?)`,
		"profiles:\n  x:\n    base: ssd340\n    noise: 3\n":                    "profiles.x.noise: want a map of noise parameters",
		"profiles:\n  x:\n    base: ssd340\n    noise:\n      hum_ma: loud\n":  `profiles.x.noise.hum_ma: "loud" is not a number`,
		"profiles:\n  x:\n    base: ssd340\n    noise:\n      hum_ma: 1\n":     "profiles.x.noise.hum_hz: missing or 0 while hum_ma is 1",
	} {
		if _, err := parseYAML(t, src); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q:\n got %v\nwant %q", src, err, want)
		}
	}
}

// LongRunMA is what the variance of a long mean says it is.
func TestLongRunMA(t *testing.T) {
	nz := Noise{AR1MA: 1, AR1TauMs: 1, StepMA: 0.4, StepMs: 3}
	x := quiet(t, nz, 8, 10000, 0, 2_000_000, 5000)
	// Means of batches of 2000 samples (20 τ of the slowest part).
	const b = 2000
	var ms []float64
	for k := 0; k+b <= len(x); k += b {
		m, _ := meanSD(x[k : k+b])
		ms = append(ms, m)
	}
	_, sdm := meanSD(ms)
	got := sdm * math.Sqrt(b) * 1e3
	want := nz.LongRunMA(0, 10000)
	// 1000 batch means: their σ is known to ≈ 2.2 %; batches of 20 τ
	// understate it by ≈ τ/b·(1 + ρ)/… ≈ 5 %.
	if math.Abs(got/want-1) > 0.12 {
		t.Errorf("long-run σ from batch means %.3f mA, LongRunMA %.3f mA", got, want)
	}
}
