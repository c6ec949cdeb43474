package stat

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// ar1 is n readings of AR(1) noise of marginal σ sigma and correlation time
// tau readings (ρ = e^(−1/τ); τ 0 is white).
func ar1(rng *rand.Rand, n int, sigma, tau float64) []float64 {
	rho := 0.0
	if tau > 0 {
		rho = math.Exp(-1 / tau)
	}
	s := sigma * math.Sqrt(1-rho*rho)
	x := make([]float64, n)
	v := sigma * rng.NormFloat64()
	for i := range x {
		v = rho*v + s*rng.NormFloat64()
		x[i] = v
	}
	return x
}

func TestMedianMADQuantile(t *testing.T) {
	x := []float64{5, 1, 3, 2, 4}
	if m := Median(x); m != 3 {
		t.Errorf("median %v", m)
	}
	if x[0] != 5 {
		t.Errorf("Median changed its input")
	}
	if q := SortedQuantile([]float64{0, 10}, 0.25); q != 2.5 {
		t.Errorf("quantile %v", q)
	}
	if q := OrderQuantile([]float64{4, 1, 3, 2}, 0.5); q != 2 {
		t.Errorf("order quantile 0.5 of 1…4: %v, want the lower median 2", q)
	}
	if q := OrderQuantile([]float64{4, 1, 3, 2, 5}, 0.9); q != 4 {
		t.Errorf("order quantile 0.9 of 1…5: %v, want 4", q)
	}
	if q := NearestRank([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.95); q != 10 {
		t.Errorf("nearest-rank p95 of 1…10: %v, want 10", q)
	}
	if q := NearestRank([]float64{1, 2, 3, 4}, 0.5); q != 2 {
		t.Errorf("nearest-rank median of 1…4: %v, want 2", q)
	}
	if q := NearestRank([]float64{1, 2, 3, 4}, 0); q != 1 {
		t.Errorf("nearest-rank 0 of 1…4: %v, want 1", q)
	}
	w := []float64{4, 1, math.NaN(), 2}
	if m := UpperMedianSorting(w); m != 2 || !math.IsNaN(w[0]) {
		t.Errorf("upper median of 4 1 NaN 2: %v (sorted %v), want 2 with NaN first", m, w)
	}
	if math.Abs(1/QuartileZ-MADScale) > 1e-15 {
		t.Errorf("QuartileZ %v is not 1/MADScale", QuartileZ)
	}
	if !math.IsNaN(Median(nil)) || !math.IsNaN(SortedQuantile(nil, 0.5)) || !math.IsNaN(OrderQuantile(nil, 0.5)) || !math.IsNaN(UpperMedianSorting(nil)) || !math.IsNaN(NearestRank(nil, 0.5)) {
		t.Errorf("empty input is not NaN")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	g := make([]float64, 200000)
	for i := range g {
		g[i] = 3 * rng.NormFloat64()
	}
	if s := MAD(g); math.Abs(s-3) > 0.03 {
		t.Errorf("MAD of σ 3 gaussian data: %v", s)
	}
	if s := DiffSigma(g); math.Abs(s-3) > 0.03 {
		t.Errorf("DiffSigma of σ 3 white noise: %v", s)
	}
}

func TestT975(t *testing.T) {
	for _, c := range []struct{ nu, want float64 }{{1, 12.706}, {9, 2.262}, {30, 2.042}, {60, 2.0003}, {120, 1.9799}, {math.Inf(1), 1.95996}} {
		if got := T975(c.nu); math.Abs(got-c.want) > 2e-4*c.want {
			t.Errorf("t(0.975, %v) = %v, want %v", c.nu, got, c.want)
		}
	}
	if !math.IsInf(T975(0.5), 1) || !math.IsInf(T975(math.NaN()), 1) {
		t.Errorf("below one degree of freedom is not +Inf")
	}
}

func TestACFMatchesDirect(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	x := ar1(rng, 1000, 1, 5)
	got := ACF(x, 50)
	m := Mean(x)
	var c0 float64
	for _, v := range x {
		c0 += (v - m) * (v - m)
	}
	for k := 0; k <= 50; k++ {
		var c float64
		for i := 0; i+k < len(x); i++ {
			c += (x[i] - m) * (x[i+k] - m)
		}
		if math.Abs(got[k]-c/c0) > 1e-9 {
			t.Fatalf("lag %d: FFT %v, direct %v", k, got[k], c/c0)
		}
	}
}

// TestACFDirectBitForBit: acfDirect, which sums four lags at a time, gives
// exactly the sums of one loop per lag (each lag's products in index
// order), at every length about the blocks' edges.
func TestACFDirectBitForBit(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 16, 17, 18, 25, 26, 27, 28, 29, 100, 1001} {
		x := ar1(rng, n, 1, 3)
		m := Mean(x)
		for _, maxLag := range []int{0, 1, 3, 4, 5, 7, 8, 9, 11, 12, 13, 15, 16, 17, 23, 24} {
			maxLag = min(maxLag, n-1)
			got := acfDirect(x, m, maxLag)
			want := make([]float64, maxLag+1)
			for k := range want {
				var c float64
				for i := 0; i+k < n; i++ {
					c += (x[i] - m) * (x[i+k] - m)
				}
				want[k] = c
			}
			for k := len(want) - 1; k >= 0; k-- {
				want[k] /= want[0]
			}
			for k := range want {
				if math.Float64bits(got[k]) != math.Float64bits(want[k]) {
					t.Fatalf("n %d, lag %d of %d: %v, one loop per lag %v", n, k, maxLag, got[k], want[k])
				}
			}
		}
	}
}

// TestMADSelectingIsSorting: MAD by selection gives the sorted copies'
// value bit for bit — ties, runs, zeros of both signs, even and odd
// counts — and NaN and ±Inf take the sorting path.
func TestMADSelectingIsSorting(t *testing.T) {
	sorting := func(x []float64) float64 {
		m := Median(x)
		d := make([]float64, len(x))
		for i, v := range x {
			d[i] = math.Abs(v - m)
		}
		slices.Sort(d)
		return MADScale * SortedQuantile(d, 0.5)
	}
	rng := rand.New(rand.NewPCG(13, 14))
	for trial := range 2000 {
		n := 2 + rng.IntN(300)
		x := make([]float64, n)
		for i := range x {
			switch r := rng.IntN(10); {
			case r == 0:
				x[i] = 0
			case r == 1:
				x[i] = math.Copysign(0, -1)
			case r < 5 && i > 0:
				x[i] = x[i-1]
			default:
				x[i] = float64(rng.IntN(7)) * 0.25 * (1 - 2*float64(rng.IntN(2)))
				if trial%2 == 0 {
					x[i] = rng.NormFloat64()
				}
			}
		}
		if trial%50 == 0 {
			x[rng.IntN(n)] = []float64{math.NaN(), math.Inf(1), math.Inf(-1)}[rng.IntN(3)]
		}
		want := sorting(x)
		if got := MAD(x); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("trial %d: MAD %v, sorting %v of %v", trial, got, want, x)
		}
	}
}

// TestBatchVarOfOneIsVar: batches of one value give the values' variance
// bit for bit (MeanStdErr uses Var for them), signed zeros included.
func TestBatchVarOfOneIsVar(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	x := ar1(rng, 500, 1, 0)
	x[3], x[7] = math.Copysign(0, -1), 0
	if a, b := batchVar(x, 1), Var(x); math.Float64bits(a) != math.Float64bits(b) {
		t.Fatalf("batchVar(x, 1) %v, Var(x) %v", a, b)
	}
}

// TestMeanStdErrCoverage: the 95 % interval of a mean of AR(1) noise
// (correlation times 0–50 readings, 2 000–50 000 readings) holds 0 in at
// least 93 % of 300 draws, where σ/√N holds it far less often.
func TestMeanStdErrCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	draws := 300
	if testing.Short() {
		draws = 100
	}
	var held, naive, short int
	for range draws {
		tau := 50 * rng.Float64() * rng.Float64()
		n := 2000 + rng.IntN(48000)
		x := ar1(rng, n, 1, tau)
		m := MeanStdErr(x)
		if math.Abs(m.Mean) <= m.U95() {
			held++
		}
		if math.Abs(m.Mean) <= 1.96*math.Sqrt(Var(x)/float64(n)) {
			naive++
		}
		if m.Short {
			short++
		}
	}
	t.Logf("held %d of %d (σ/√N: %d; short %d)", held, draws, naive, short)
	if float64(held) < 0.93*float64(draws) {
		t.Errorf("interval held %d of %d, want ≥ 93 %%", held, draws)
	}
	if float64(naive) > 0.8*float64(draws) {
		t.Errorf("σ/√N held %d of %d: the test draws too little correlation to tell", naive, draws)
	}
}

// TestNoiseModelAR1WithSteps: σ, ρ₁ and the long-run variance of AR(1)
// noise (τ 0–200 readings) on a signal stepping to a new level up to 500σ
// away every 5 000–20 000 readings come out of the variogram — σ within
// 10 %, ρ₁ within 0.06, τ_int within −30 % … ×3 (a plateau found late,
// where small steps lift the long lags, errs wide) — where the plain standard deviation is inflated
// at least 50-fold.
func TestNoiseModelAR1WithSteps(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range 30 {
		tau := 0.0
		if i > 0 {
			tau = math.Exp(rng.Float64() * math.Log(200))
		}
		x := ar1(rng, 100000, 0.001, tau)
		level, next := 0.0, 0
		for k := range x {
			if k == next {
				level = 0.5 * rng.Float64()
				next += 5000 + rng.IntN(15000)
			}
			x[k] += level
		}
		nm := NoiseOf(x)
		rho := 0.0
		if tau > 0 {
			rho = math.Exp(-1 / tau)
		}
		wantTau := (1 + rho) / (1 - rho)
		if r := nm.TauInt / wantTau; math.Abs(nm.Sigma/0.001-1) > 0.1 || math.Abs(nm.Rho1-rho) > 0.06 || r < 0.7 || r > 3 {
			t.Errorf("τ %.1f: σ %.3g (0.001), ρ₁ %.3f (%.3f), τ_int %.1f (%.1f), corr length %d", tau, nm.Sigma, nm.Rho1, rho, nm.TauInt, wantTau, nm.CorrLen)
		}
		if sd := math.Sqrt(Var(x)); sd < 50*0.001 {
			t.Fatalf("the steps do not inflate the plain σ (%.3g): the test tells nothing", sd)
		}
	}
}

func TestResolutionAndCalibration(t *testing.T) {
	rails := []Rail{{NominalV: 5, CurrentLSB: 50e-6, CurrentGainErr: 0.002, CurrentOffsetA: 20e-6}}
	u, known := ResolutionU(rails, 0.00015, 0)
	// ±½ LSB of 0.25 mW, rectangular: 0.25 mW/√12.
	if !known || math.Abs(u-0.00025/math.Sqrt(12)) > 1e-9 {
		t.Errorf("resolution %.4g W, want %.4g", u, 0.00025/math.Sqrt(12))
	}
	if u, _ := ResolutionU(rails, 0.00015, 0.001); u > 1e-8 {
		t.Errorf("noise of 4 LSB leaves %.3g W of the LSB term", u)
	}
	c, known := CalibrationU(rails, 2)
	want := math.Sqrt((2*2*0.002*0.002 + 5*20e-6*5*20e-6) / 3)
	if !known || math.Abs(c-want) > 1e-12 {
		t.Errorf("calibration %.4g W, want %.4g", c, want)
	}
	if _, known := CalibrationU([]Rail{{NominalV: 5, CurrentLSB: 1e-6}}, 1); known {
		t.Errorf("calibration known without limits")
	}
}

func TestMedianInPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for n := 1; n < 60; n++ {
		for range 20 {
			x := make([]float64, n)
			for i := range x {
				x[i] = float64(rng.IntN(7)) // ties
			}
			want := Median(x)
			if got := MedianInPlace(x); got != want {
				t.Fatalf("n %d: quickselect median %v, sort %v", n, got, want)
			}
		}
	}
}

// TestMedianSelecting holds the selecting median to Median bit for bit,
// with ties and without.
func TestMedianSelecting(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for n := 1; n < 60; n++ {
		for r := range 40 {
			x := make([]float64, n)
			for i := range x {
				x[i] = float64(rng.IntN(7)) // ties
				if r%2 == 1 {
					x[i] = rng.NormFloat64() * 1e-3
				}
			}
			want := Median(x)
			if got := MedianSelecting(x); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("n %d: selecting median %v, Median %v", n, got, want)
			}
		}
	}
	if !math.IsNaN(MedianSelecting(nil)) {
		t.Error("median of nothing is not NaN")
	}
}

// TestUpperLowerMedian holds the order-statistic medians to a sort's
// x[n/2] and x[(n−1)/2], with ties, and checks the input is left alone.
func TestUpperLowerMedian(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for n := 1; n < 60; n++ {
		for range 20 {
			x := make([]float64, n)
			for i := range x {
				x[i] = float64(rng.IntN(9)) - 4
			}
			orig := append([]float64(nil), x...)
			s := append([]float64(nil), x...)
			sort.Float64s(s)
			if got := UpperMedian(x); got != s[n/2] {
				t.Fatalf("n %d: upper median %v, want %v", n, got, s[n/2])
			}
			if got := LowerMedian(x); got != s[(n-1)/2] {
				t.Fatalf("n %d: lower median %v, want %v", n, got, s[(n-1)/2])
			}
			for i := range x {
				if x[i] != orig[i] {
					t.Fatalf("n %d: input changed at %d", n, i)
				}
			}
		}
	}
	if got := UpperMedian([]float64{1, 2}); got != 2 {
		t.Errorf("UpperMedian{1,2} = %v, want 2", got)
	}
	if got := LowerMedian([]float64{1, 2}); got != 1 {
		t.Errorf("LowerMedian{1,2} = %v, want 1", got)
	}
	if !math.IsNaN(UpperMedian(nil)) || !math.IsNaN(LowerMedian(nil)) || !math.IsNaN(MedianInPlace(nil)) {
		t.Errorf("empty input not NaN")
	}
}

// Under 60 Hz hum with harmonics over small white noise the semivariance
// settles first at the white part (Sigma) and rises past it at the hum's
// lags; Marginal holds the whole of one reading's noise — what a bound on
// the reading that made a peak needs — and white noise alone gives
// Marginal ≈ Sigma.
func TestNoiseMarginalHoldsHum(t *testing.T) {
	const fs, white = 10000.0, 0.0006
	for _, tc := range []struct {
		name   string
		hum    float64 // amplitude of each of 5 harmonics
		lo, hi float64 // Marginal / the noise's true marginal σ
	}{{"white", 0, 0.9, 1.15}, {"hum", 0.0019, 0.8, 1.6}} {
		r := rand.New(rand.NewPCG(5, 5))
		x := make([]float64, 60000)
		for i := range x {
			x[i] = 0.2 + white*r.NormFloat64()
			for h := 1; h <= 5; h++ {
				x[i] += tc.hum * math.Sin(2*math.Pi*60*float64(h)*float64(i)/fs+float64(h))
			}
		}
		nm := NoiseOf(x)
		truth := math.Sqrt(white*white + 5*tc.hum*tc.hum/2)
		if got := nm.Marginal / truth; got < tc.lo || got > tc.hi {
			t.Errorf("%s: Marginal %.3g W = %.2f × the true marginal σ %.3g (Sigma %.3g); want %g–%g", tc.name, nm.Marginal, got, truth, nm.Sigma, tc.lo, tc.hi)
		}
		t.Logf("%s: Sigma %.3g, Marginal %.3g, true marginal %.3g", tc.name, nm.Sigma, nm.Marginal, truth)
		if nm.Marginal < nm.Sigma {
			t.Errorf("%s: Marginal %g < Sigma %g", tc.name, nm.Marginal, nm.Sigma)
		}
	}
}

// A switching ripple aliased to a tone slow beside the sampling (69.85 kHz
// at 10 kS/s: 151.5 Hz, 66 samples a period) grows the semivariance as k²
// at short lags, 6.5× from lag 1 to lags 2–3: Marginal must still hold it
// (the step cut at 4 made it the white noise's alone, 0.07 × the truth).
// Drawn: amplitude, alias period and white noise from the campaign's
// ranges (docs/drive-profiles.md: ripple 0.1–2 mA, alias ≥ 10 Hz).
func TestNoiseMarginalHoldsSlowRipple(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for trial := range 12 {
		amp := (0.1 + 1.9*r.Float64()) * 5e-3     // W at 5 V
		period := 20 + 980*r.Float64()            // samples: 10–500 Hz at 10 kS/s
		white := (0.005 + 0.1*r.Float64()) * 5e-3 // W
		x := make([]float64, 200000)
		ph := 2 * math.Pi * r.Float64()
		for i := range x {
			x[i] = 1 + white*r.NormFloat64() + amp*math.Sin(2*math.Pi*float64(i)/period+ph)
		}
		nm := NoiseOf(x)
		truth := math.Sqrt(white*white + amp*amp/2)
		// High by up to ≈ 2.1 for a tone alone: γ peaks at twice its
		// variance (√2 on σ), and the MAD of its arcsine-distributed
		// differences reads them 1.48× high — a wider peak interval,
		// never a narrower one.
		if got := nm.Marginal / truth; got < 0.8 || got > 2.2 {
			t.Errorf("trial %d (ripple %.3g W, period %.0f, white %.3g W): Marginal %.3g = %.2f × the true marginal σ %.3g (Sigma %.3g); want 0.8–2.2",
				trial, amp, period, white, nm.Marginal, got, truth, nm.Sigma)
		}
	}
}

// WeightedShorth of sorted values with integer weights is the shorth of the
// values repeated that many times (a histogram read back), on draws it was
// not written for; and a gaussian sample's shorth × ShorthScale is its σ.
func TestWeightedShorthIsRepeatedShorth(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 300 {
		n := 1 + r.IntN(30)
		x, w := make([]float64, n), make([]float64, n)
		var rep []float64
		for i := range x {
			x[i] = math.Round(r.NormFloat64()*8) / 4
		}
		slices.Sort(x)
		for i := range x {
			k := r.IntN(5)
			w[i] = float64(k)
			for range k {
				rep = append(rep, x[i])
			}
		}
		got, _ := WeightedShorth(x, w)
		if len(rep) == 0 {
			if !math.IsNaN(got) {
				t.Fatalf("trial %d: no weight, shorth %g, want NaN", trial, got)
			}
			continue
		}
		k := (len(rep) + 1) / 2 // values in a window holding at least half
		want := math.Inf(1)
		for i := 0; i+k <= len(rep); i++ {
			want = math.Min(want, rep[i+k-1]-rep[i])
		}
		if got != want {
			t.Fatalf("trial %d: shorth %g, the repeated values' %g (%v)", trial, got, want, rep)
		}
	}
	g := make([]float64, 20000)
	one := make([]float64, len(g))
	for i := range g {
		g[i], one[i] = 3*r.NormFloat64(), 1
	}
	slices.Sort(g)
	if l, mid := WeightedShorth(g, one); math.Abs(ShorthScale*l/3-1) > 0.03 || math.Abs(mid) > 0.1 {
		t.Fatalf("gaussian σ 3 about 0: shorth %g (σ %g), midpoint %g", l, ShorthScale*l, mid)
	}
}

// BenchmarkShortACF: the autocorrelation the judge's levels take
// (stat.MeanStdErr), over 20 000 AR(1) readings.
func BenchmarkShortACF(b *testing.B) {
	x := ar1(rand.New(rand.NewPCG(17, 18)), 20_000, 1, 2)
	for b.Loop() {
		ShortACF(x)
	}
}
