package stat

import (
	"math"
	"math/bits"
	"math/cmplx"
)

// ACF is the sample autocorrelation of x about its mean at lags 0…maxLag
// (the biased estimator, autocovariance over n, which keeps the sequence
// positive definite), through an FFT: O(n log n) whatever maxLag. maxLag is
// clamped to n − 1. Nil for fewer than two values; all zeros after lag 0
// for a constant series.
func ACF(x []float64, maxLag int) []float64 {
	n := len(x)
	if n < 2 {
		return nil
	}
	maxLag = min(max(maxLag, 0), n-1)
	m := Mean(x)
	if maxLag <= directLags {
		return acfDirect(x, m, maxLag)
	}
	size := 1 << bits.Len(uint(2*n-1))
	buf := make([]complex128, size)
	for i, v := range x {
		buf[i] = complex(v-m, 0)
	}
	FFT(buf, false)
	for i, c := range buf {
		buf[i] = complex(real(c)*real(c)+imag(c)*imag(c), 0)
	}
	FFT(buf, true)
	out := make([]float64, maxLag+1)
	c0 := real(buf[0])
	if !(c0 > 0) {
		out[0] = 1
		return out
	}
	for k := range out {
		out[k] = real(buf[k]) / c0
	}
	return out
}

// directLags: up to this many lags the autocorrelation is summed
// directly, cheaper than two FFTs.
const directLags = 24

func acfDirect(x []float64, m float64, maxLag int) []float64 {
	out := make([]float64, maxLag+1)
	d := floatScratches.Get(len(x))
	defer floatScratches.Put(d)
	for i, v := range x {
		d[i] = v - m
	}
	// Four lags at a time: each lag's products are still added in index
	// order, one sum per lag, so every sum is bit for bit the one a loop
	// per lag gives; four independent sums keep the FPU busy where one
	// waited on each addition's result (a third of the DevSlp judge's
	// time was here).
	n := len(d)
	k := 0
	for ; k+3 <= maxLag; k += 4 {
		var c0, c1, c2, c3 float64
		e := n - k - 3 // the last lag's products end here, the others' later
		i := 0
		for ; i < e; i++ {
			a := d[i]
			c0 += a * d[i+k]
			c1 += a * d[i+k+1]
			c2 += a * d[i+k+2]
			c3 += a * d[i+k+3]
		}
		for j := i; j < n-k; j++ {
			c0 += d[j] * d[j+k]
		}
		for j := i; j < n-k-1; j++ {
			c1 += d[j] * d[j+k+1]
		}
		for j := i; j < n-k-2; j++ {
			c2 += d[j] * d[j+k+2]
		}
		out[k], out[k+1], out[k+2], out[k+3] = c0, c1, c2, c3
	}
	for ; k <= maxLag; k++ {
		var c float64
		for i := 0; i+k < n; i++ {
			c += d[i] * d[i+k]
		}
		out[k] = c
	}
	if !(out[0] > 0) {
		clear(out)
		out[0] = 1
		return out
	}
	for k := len(out) - 1; k >= 0; k-- {
		out[k] /= out[0]
	}
	return out
}

// ShortACF is the autocorrelation of x up to the lags CorrLength and
// IntegratedTime need: summed directly over the first directLags lags, and
// by FFT up to n/2 only when the correlation has not died out there.
func ShortACF(x []float64) []float64 {
	n := len(x)
	if n < 2 {
		return nil
	}
	a := ACF(x, min(directLags, n-1))
	if CorrLength(a, n) < len(a)-1 && geyerEnds(a) {
		return a
	}
	return ACF(x, n/2)
}

// geyerEnds reports whether Geyer's initial sequence ends within acf.
func geyerEnds(acf []float64) bool {
	for m := 0; 2*m+1 < len(acf); m++ {
		if acf[2*m]+acf[2*m+1] <= 0 {
			return true
		}
	}
	return false
}

// FFT transforms a in place (len(a) a power of two), X_k = Σ a_j e^{∓i2πjk/n}
// (the minus sign forward); inverse divides by n.
func FFT(a []complex128, inverse bool) {
	n := len(a)
	for i, j := 1, 0; i < n; i++ {
		bit := n >> 1
		for ; j&bit != 0; bit >>= 1 {
			j ^= bit
		}
		j ^= bit
		if i < j {
			a[i], a[j] = a[j], a[i]
		}
	}
	sign := -1.0
	if inverse {
		sign = 1
	}
	for length := 2; length <= n; length <<= 1 {
		w := cmplx.Rect(1, sign*2*math.Pi/float64(length))
		for i := 0; i < n; i += length {
			wk := complex(1, 0)
			for k := 0; k < length/2; k++ {
				u, v := a[i+k], a[i+k+length/2]*wk
				a[i+k], a[i+k+length/2] = u+v, u-v
				wk *= w
			}
		}
	}
	if inverse {
		for i := range a {
			a[i] /= complex(float64(n), 0)
		}
	}
}

// CorrThreshold is the autocorrelation below which two readings count as
// independent for choosing a batch length (docs/analysis.md).
const CorrThreshold = 0.05

// CorrLength is the first lag k ≥ 1 at which the autocorrelation acf (of n
// values) falls below max(CorrThreshold, 2/√n), the larger being the noise
// of a sample autocorrelation: 1 for independent values. len(acf) when it
// never does.
func CorrLength(acf []float64, n int) int {
	th := CorrThreshold
	if n > 0 {
		th = math.Max(th, 2/math.Sqrt(float64(n)))
	}
	for k := 1; k < len(acf); k++ {
		if acf[k] < th {
			return k
		}
	}
	return max(1, len(acf))
}

// IntegratedTime is the integrated autocorrelation time τ = 1 + 2 Σ ρ_k of
// the autocorrelation acf, by Geyer's initial monotone sequence (1992): the
// sums Γ_m = ρ_2m + ρ_2m+1 are added while positive, each made no larger
// than the one before, which keeps the noisy tail of a sample
// autocorrelation out. Var(mean of n) ≈ σ²·τ/n; n/τ is the effective sample
// size. At least 1: a negatively correlated series (τ < 1) is taken as
// independent, so the interval errs wide.
func IntegratedTime(acf []float64) float64 {
	if len(acf) < 2 {
		return 1
	}
	sum := 0.0
	prev := math.Inf(1)
	for m := 0; 2*m+1 < len(acf); m++ {
		g := acf[2*m] + acf[2*m+1]
		if g <= 0 {
			break
		}
		g = math.Min(g, prev)
		sum += g
		prev = g
	}
	return math.Max(1, 2*sum-1)
}
