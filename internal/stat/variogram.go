package stat

import (
	"math"
	"math/bits"
)

// A noise model robust to level steps.
//
// The semivariogram of a stationary series, γ(k) = ½ E[(x[t+k] − x[t])²] =
// σ²(1 − ρ_k), rises from σ²(1 − ρ₁) at lag 1 to σ² where the correlation
// has died away. A level step moves only the k differences at lag k that
// straddle it, and the median of |x[t+k] − x[t]| ignores those (MADScale ×
// median |d| is σ_d for gaussian d). So at dyadic lags 1, 2, 4, … the robust
// semivariogram gives σ (its plateau), ρ_k = 1 − γ(k)/σ², the correlation
// length and the integrated autocorrelation time τ — none inflated by the
// steps of a signal that changes level, as the plain standard deviation and
// the spread of block means are (a signal stepping between 1.7 and 3.4 W
// with mW of noise read σ 17 W so). For AR(1) noise γ(2k)/γ(k) − 1 is
// exactly ρ_k, which is how the plateau is found.

// numLags is how many dyadic lags a Variogram keeps: 1 … 2^(numLags−1).
const numLags = 15

// MaxLag is the longest lag a Variogram measures, in readings (1.6 s at
// 10 kS/s: ten times the longest correlation time meter-noise.md names).
const MaxLag = 1 << (numLags - 1)

// ringLen is how many readings a Variogram keeps: the top octave's lags
// are drawn from [MaxLag, 2·MaxLag). A ring of MaxLag read the upper half
// of that octave at the lag less MaxLag — down to lag 0, a difference of
// 0 — and the top octave's semivariance came out low.
const ringLen = 2 * MaxLag

// reservoirCap bounds the differences kept per lag.
const reservoirCap = 4096

// minDiffs is the fewest differences a lag's semivariance is taken from.
const minDiffs = 32

// Variogram accumulates a stream of readings' absolute differences at
// dyadic lags in bounded memory: the last ringLen readings, and per lag at
// most reservoirCap differences, every s-th kept, s doubling as they fill.
// The zero value is ready; memory grows with the readings, to ~750 KiB.
type Variogram struct {
	ring []float64 // reading t at t & (ringLen−1)
	n    int
	// lags holds differences at lag 2^j exactly; oct at a lag drawn
	// uniformly from [2^j, 2^(j+1)) for each — the octave's average
	// semivariance, which a periodic component (mains hum, an aliased
	// ripple) does not make swing with the lag's phase as it does the
	// exact lags' (a 50 Hz hum at 2 kS/s read σ 1.7 × its own so).
	lags, oct [numLags]reservoir
	rs        uint64 // xorshift state for oct's lags
	// tmp is gamma's and quantum's scratch copy of a reservoir (reused:
	// not a clone per lag each time a model is read).
	tmp []float64
	// due is the first reading at which some reservoir keeps a difference
	// (0: not yet known). Once the strides have grown, most readings are
	// kept by none, and Add only stores them in the ring: asking 30
	// reservoirs about every reading cost as much as the rest of a
	// report's per-sample work on the state classifier.
	due int
}

type reservoir struct {
	d      []float64
	stride int // every stride-th difference is kept (0 means 1)
	// next is the reading whose difference is kept next; 0 means the
	// lag's first, reading 2^j (the first with a reading 2^j before it).
	next int
}

// nextAt is the reading whose difference r (at lag k) keeps next.
func (r *reservoir) nextAt(k int) int {
	if r.next == 0 {
		return k
	}
	return r.next
}

// keep keeps the difference x of reading n, the one nextAt named. Kept are
// those at multiples of the stride; when full, every other is dropped and
// the stride doubles (the one at hand, at cap × stride, is a multiple of
// the new stride: cap is even).
func (r *reservoir) keep(x float64, n int) {
	if len(r.d) == reservoirCap {
		k := 0
		for i := 0; i < len(r.d); i += 2 {
			r.d[k] = r.d[i]
			k++
		}
		r.d = r.d[:k]
		r.stride = max(1, r.stride) * 2
	}
	r.d = append(r.d, x)
	r.next = n + max(1, r.stride)
}

// Add adds one reading; NaN and ±Inf are skipped.
func (v *Variogram) Add(x float64) {
	if x-x != 0 { // NaN or ±Inf: x − x is NaN for them, 0 for every finite x
		return
	}
	if v.n >= v.due {
		v.keepDue(x)
	}
	const mask = ringLen - 1
	if v.n < ringLen {
		v.ring = append(v.ring, x)
	} else {
		v.ring[v.n&mask] = x
	}
	v.n++
}

// keepDue keeps the differences of reading x (the v.n-th) that are due,
// lag by lag from the shortest — the order the octaves' lags are drawn
// from rs in — and finds, in the same pass, when the next are due (a lag
// not begun is due at its first reading, 2^j). A lag's two reservoirs
// keep at the same readings (both start at 2^j, keep as many, so their
// strides double together), so the exact lag's next reading is asked
// for both.
func (v *Variogram) keepDue(x float64) {
	const mask = ringLen - 1
	due := math.MaxInt
	for j := 0; j < numLags; j++ {
		k := 1 << j
		r := &v.lags[j]
		at := r.nextAt(k)
		if at == v.n {
			r.keep(math.Abs(x-v.ring[(v.n-k)&mask]), v.n)
			ko := v.octaveLag(j, v.n)
			v.oct[j].keep(math.Abs(x-v.ring[(v.n-ko)&mask]), v.n)
			at = r.next
		}
		due = min(due, at)
	}
	v.due = due
}

// octaveLag draws the lag at which octave j keeps reading at's difference:
// uniform in [2^j, 2^(j+1)) from rs (at most at, the readings there are;
// octave 0 is lag 1 alone). Keeps draw in reading order, lag by lag from
// the shortest, whichever path makes them.
func (v *Variogram) octaveLag(j, at int) int {
	k := 1 << j
	if j == 0 {
		return k
	}
	if v.rs == 0 {
		v.rs = 0x9e3779b97f4a7c15
	}
	v.rs ^= v.rs << 13
	v.rs ^= v.rs >> 7
	v.rs ^= v.rs << 17
	return min(k+int(v.rs&uint64(k-1)), at)
}

// AddAll adds consecutive readings: Add of each, in order, with Add's body
// here (Add is past the compiler's inlining budget: no call per reading).
func (v *Variogram) AddAll(xs []float64) {
	const mask = ringLen - 1
	for _, x := range xs {
		if x-x != 0 { // NaN or ±Inf (as in Add): one subtraction, not two tests
			continue
		}
		if v.n >= v.due {
			v.keepDue(x)
		}
		if v.n < ringLen {
			v.ring = append(v.ring, x)
		} else {
			v.ring[v.n&mask] = x
		}
		v.n++
	}
}

// N is the number of readings added.
func (v *Variogram) N() int { return v.n }

// gamma is the robust semivariance at lag 2^j (octave false) or over the
// octave from it, and the differences behind it; ok false with fewer than
// minDiffs.
//
// q > 0 is the readings' quantiser step (quantisedStep of lag 1): a
// median of 0 is then read by quantisedSigma.
func (v *Variogram) gamma(j int, octave bool, q float64) (float64, int, bool) {
	d := v.lags[j].d
	if octave {
		d = v.oct[j].d
	}
	if len(d) < minDiffs {
		return 0, len(d), false
	}
	v.tmp = append(v.tmp[:0], d...)
	sd := absDiffSigma(v.tmp)
	if sd == 0 && q > 0 {
		sd = quantisedSigma(d, q) // d, not the clone absDiffSigma reordered and overwrote
	}
	return sd * sd / 2, len(d), true
}

// quantum is the readings' quantiser step when lag 1's differences have a
// median of 0 and are a quantiser's (quantisedStep), else 0.
func (v *Variogram) quantum() float64 {
	d := v.lags[0].d
	if len(d) < minDiffs {
		return 0
	}
	v.tmp = append(v.tmp[:0], d...)
	a := v.tmp
	if MedianInPlace(a) != 0 {
		return 0
	}
	return quantisedStep(a)
}

// Noise is a stationary noise model: the marginal σ of one reading and the
// correlation between readings.
type Noise struct {
	// Sigma is the standard deviation of one reading's noise.
	Sigma float64
	// Rho1 is the lag-1 autocorrelation.
	Rho1 float64
	// CorrLen is the lag (readings) from which the correlation is below
	// the threshold; MaxLag when it is not reached there (Converged false).
	CorrLen int
	// Marginal is the largest noise of one reading over the lags measured
	// (before steps lift them): √ of the largest octave semivariance, ≥
	// Sigma. Sigma is the plateau's, the level the semivariance settles at
	// first; a slow periodic part (mains hum with harmonics) or 1/f noise
	// lifts γ past it, and one reading's departure from the truth holds
	// them all — what a bound on one reading (the peak's) needs. For a
	// sinusoid it errs high by up to √2 (γ peaks at twice its variance).
	Marginal float64
	// TauInt is the integrated autocorrelation time in readings, ≥ 1: the
	// variance of a mean of m ≫ CorrLen readings is Sigma²·TauInt/m.
	TauInt    float64
	Converged bool
	// N is how many readings the model is from; Ok whether it holds a σ
	// (at least minDiffs differences at lag 1).
	N  int
	Ok bool

	rho []float64 // ρ at lags 2^j, up to where it is measured
}

// LongRunVar is the variance of one reading as it averages out:
// Sigma²·TauInt, so that LongRunVar/m is the variance of a mean of m
// readings (m ≫ CorrLen).
func (n Noise) LongRunVar() float64 { return n.Sigma * n.Sigma * n.TauInt }

// Rho is the autocorrelation at lag k ≥ 0, interpolated geometrically
// between the dyadic lags measured, 0 beyond the last positive one.
func (n Noise) Rho(k int) float64 {
	if k <= 0 {
		return 1
	}
	if len(n.rho) == 0 {
		return 0
	}
	j := 0
	for (2 << j) <= k {
		j++
	}
	if j >= len(n.rho) {
		return 0
	}
	a := n.rho[j]
	lo := 1 << j
	if k == lo {
		return a
	}
	if j+1 >= len(n.rho) || a <= 0 {
		return 0
	}
	b := n.rho[j+1]
	f := float64(k-lo) / float64(lo)
	if b <= 0 {
		return a * (1 - f)
	}
	return a * math.Pow(b/a, f)
}

// MeanVar is the variance of the noise of a mean of m consecutive
// readings: σ²/m · (1 + 2 Σ_{k<m} (1 − k/m) ρ_k).
func (n Noise) MeanVar(m int) float64 {
	if m <= 1 {
		return n.Sigma * n.Sigma
	}
	s := 1.0
	lim := min(m-1, 64*max(n.CorrLen, 1), 1<<20)
	for k := 1; k <= lim; k++ {
		r := n.Rho(k)
		if r == 0 && k > n.CorrLen {
			break
		}
		s += 2 * (1 - float64(k)/float64(m)) * r
	}
	return n.Sigma * n.Sigma * math.Max(s, 1) / float64(m)
}

// Noise is the model the readings so far give (see the package comment on
// the semivariogram). Without minDiffs differences at lag 1, Ok is false.
func (v *Variogram) Noise() Noise {
	out := Noise{N: v.n, TauInt: 1, CorrLen: 1}
	// g: the octaves' semivariances, which find the plateau and σ²; ge:
	// the exact lags', which give ρ at them.
	var g, ge []float64
	var cnt []int
	q := v.quantum()
	for j := range numLags {
		x, c, ok := v.gamma(j, true, q)
		xe, _, oke := v.gamma(j, false, q)
		if !ok || !oke {
			break
		}
		g, ge, cnt = append(g, x), append(ge, xe), append(cnt, c)
	}
	if len(g) == 0 {
		return out
	}
	out.Ok = true
	top := len(g) - 1
	// A semivariance more than 4 times the one at half its lag is steps:
	// for stationary noise γ(2k) ≤ 4γ(k) (a difference over 2k is the sum
	// of two over k), and ≤ 2γ(k) for AR(1). Lags from there on straddle
	// steps too often for the rejection to clear (a level toggling every
	// three samples), and are not used for σ and the correlation.
	//
	// The octaves' lags are drawn from [2^j, 2^(j+1)), so what stationary
	// noise can reach is the ratio of the octaves' mean k² (octaveGrowth:
	// γ(k) ≤ k²γ(1)), 6.5 from lag 1 to lags 2–3, not 4: a tone slow beside
	// the sampling (an aliased switching ripple, hum at a high rate) grows
	// as k² at short lags and trips the cut at 4. σ stays the plateau
	// below it — the noise the classifier's bands and the levels' dither
	// are for (with the tone in σ the campaign's residency moved away from
	// the truth) — but one reading's largest noise, Marginal, holds the
	// tone: it is taken up to the cut at octaveGrowth. Cut at 4 it was the
	// white noise's alone, and a 7 mW ripple went into no peak interval.
	top, mtop := len(g)-1, len(g)-1
	for j := 0; j+1 < len(g); j++ {
		if g[j+1] > octaveGrowth(j)*g[j] && g[j] > 0 {
			mtop = j
			break
		}
	}
	out.Marginal = 0
	for _, x := range g[:mtop+1] {
		out.Marginal = math.Max(out.Marginal, math.Sqrt(x))
	}
	for j := 0; j+1 < len(g); j++ {
		if g[j+1] > 4*g[j] && g[j] > 0 {
			top = j
			g, ge, cnt = g[:j+1], ge[:j+1], cnt[:j+1]
			break
		}
	}
	plateau, s2 := plateauOf(g, cnt, top, &out)
	out.CorrLen = 1 << plateau
	if !out.Converged && plateau == top && top == numLags-1 {
		out.CorrLen = MaxLag
	}
	out.Sigma = math.Sqrt(s2)
	out.Marginal = math.Max(out.Marginal, out.Sigma)
	if s2 == 0 {
		return out
	}
	// ρ at the dyadic lags up to the plateau; beyond it the correlation is
	// taken as 0 (a σ² a few per cent high would otherwise add a few per
	// cent of every lag to τ).
	for j := 0; j <= plateau; j++ {
		out.rho = append(out.rho, math.Max(-1, math.Min(1, 1-ge[j]/s2)))
	}
	out.Rho1 = out.rho[0]
	// The correlation length: the first lag whose ρ is below the threshold
	// (or below the noise of ρ, that of γ/σ²); the ρ past it are noise
	// about 0, and a σ² a little high from steps would make them add up.
	if out.Converged {
		for j, r := range out.rho {
			if r < math.Max(CorrThreshold, 2*2.33/math.Sqrt(float64(cnt[j]))) {
				out.rho = out.rho[:j+1]
				out.CorrLen = 1 << j
				break
			}
		}
	}
	out.TauInt = tauOf(out.rho, out.Converged)
	return out
}

// octaveGrowth is the most the octave semivariance may grow from octave
// j to octave j+1 for stationary noise: the ratio of the octaves' mean k²
// (the fastest growth, γ(k) = k²γ(1)), with a 10 % allowance for the
// semivariances' own scatter (≈ 3 % each from reservoirCap MAD-based
// differences). Octave 0 is lag 1 alone; octave j ≥ 1 is [2^j, 2^(j+1)).
// It falls from 6.5 (j = 0) toward 4 (4.17 at j = 3).
func octaveGrowth(j int) float64 {
	return 1.1 * meanSq(j+1) / meanSq(j)
}

// meanSq is the mean of k² over octave j's lags.
func meanSq(j int) float64 {
	if j == 0 {
		return 1
	}
	lo, hi := float64(int(1)<<j), float64(int(1)<<(j+1)-1)
	// Σ_{k=lo}^{hi} k² / (hi − lo + 1)
	s := func(n float64) float64 { return n * (n + 1) * (2*n + 1) / 6 }
	return (s(hi) - s(lo-1)) / (hi - lo + 1)
}

// plateauOf is the plateau of the octaves' semivariances g (counts cnt, up
// to lag top) and σ² there: the longest stretch of consecutive lags whose
// semivariances agree with its first within the ratio's noise (≈ 3.3/√n
// for two MAD-based variances of n differences each, at least the
// threshold) — the level a stationary noise's γ settles at, periodic
// components included, before steps lift the longest lags; the latest of
// equally long ones (γ rising slowly, as under 1/f noise, makes short
// stretches on its way up). One lag alone is no plateau: the correlation
// outlasts the lags measured, or steps hide it; then the flattest lag,
// past which steps (or a correlation longer than the lags measured) lift
// γ. out.Converged says which.
func plateauOf(g []float64, cnt []int, top int, out *Noise) (int, float64) {
	plateau, run := top, 1
	for j := 0; j <= top; j++ {
		th := 1.5 * math.Max(CorrThreshold, 2*3.3/math.Sqrt(float64(cnt[j])))
		l := 1
		for i := j + 1; i <= top && math.Abs(g[i]/g[j]-1) <= th; i++ {
			l++
		}
		if l >= run && l > 1 || (run == 1 && j == 0) {
			plateau, run = j, l
		}
	}
	var s2 float64
	if run >= 2 {
		out.Converged = true
		for j := plateau; j < plateau+run; j++ {
			s2 += g[j]
		}
		return plateau, s2 / float64(run)
	}
	best := math.Inf(1)
	for j := 0; j < top; j++ {
		if r := g[j+1] / g[j]; r < best && r >= 1-CorrThreshold {
			best, plateau = r, j
		}
	}
	return plateau, g[min(plateau+1, top)]
}

// tauOf is τ = 1 + 2 Σ ρ_k from ρ at the dyadic lags, geometric between
// them (exact for AR(1)), added while positive; a correlation not died out
// by the last lag measured (not converged) continues geometrically.
func tauOf(rho []float64, converged bool) float64 {
	sum := math.Max(0, rho[0])
	for j := 0; j+1 < len(rho) && rho[j] > 0; j++ {
		k := 1 << j
		a, b := rho[j], rho[j+1]
		if b <= 0 {
			sum += a * float64(k) / 2
			break
		}
		q := math.Pow(b/a, 1/float64(k))
		if math.Abs(1-q) < 1e-12 {
			sum += float64(k) * a
		} else {
			sum += a * q * (1 - math.Pow(q, float64(k))) / (1 - q)
		}
		if j+2 == len(rho) && !converged && q < 1 {
			sum += b * q / (1 - q)
		}
	}
	return math.Max(1, 1+2*sum)
}

// NoiseOf is the noise model of consecutive readings xs.
func NoiseOf(xs []float64) Noise {
	var v Variogram
	// The reservoirs' size is known: no growing as they fill. Their
	// memory, the ring and gamma's scratch are a noiseScratch's.
	c := min(len(xs), reservoirCap)
	sc := getNoiseScratch()
	defer putNoiseScratch(sc)
	buf := sc.res[:2*numLags*c]
	for j := range v.lags {
		v.lags[j].d = buf[2*j*c : 2*j*c : (2*j+1)*c]
		v.oct[j].d = buf[(2*j+1)*c : (2*j+1)*c : (2*j+2)*c]
	}
	v.tmp = sc.tmp[:0]
	if allFinite(xs) {
		v.addHeld(xs)
	} else {
		if cap(sc.ring) < ringLen { // only readings with NaN or ±Inf need it
			sc.ring = make([]float64, ringLen)
		}
		v.ring = sc.ring[:0:min(len(xs), ringLen)]
		v.AddAll(xs)
	}
	n := v.Noise()
	sc.tmp = v.tmp[:0] // grown, if gamma grew it
	return n
}

// allFinite says whether xs holds no NaN and no ±Inf.
func allFinite(xs []float64) bool {
	for _, x := range xs {
		if x-x != 0 {
			return false
		}
	}
	return true
}

// addHeld is AddAll(xs) into an empty Variogram whose reservoirs have room
// for min(len(xs), reservoirCap) differences each, for readings that are
// all finite (allFinite) and held whole, as NoiseOf has them: it leaves
// the reservoirs holding exactly what AddAll leaves them (the same
// differences in the same order, bit for bit, and the same generator
// state), without the ring and without computing what AddAll keeps only
// to drop at a later halving.
//
// AddAll's reservoir at lag k = 2^j keeps readings k, k+1, … until it
// holds reservoirCap, then halves at each further keep that finds it
// full, the stride doubling: what it holds at the end are the readings
// k + m·S, S the least power of two with len(xs) − k ≤ reservoirCap·S.
// So the keeps are walked in AddAll's order (reading by reading, lag by
// lag from the shortest — the order the octaves' lags are drawn from rs
// in), each still drawing its octave lag, but only those at multiples of
// S from k compute and store their differences. Under a DevSlp cycle's
// 50 000 readings seven keeps in ten were dropped again.
func (v *Variogram) addHeld(xs []float64) {
	n := len(xs)
	var final, stride, held, next [numLags]int
	maxS := 1
	for j := range numLags {
		k := 1 << j
		final[j], stride[j], next[j] = 1, 1, k
		for n-k > reservoirCap*final[j] {
			final[j] *= 2
		}
		maxS = max(maxS, final[j])
	}
	// A calendar of the keeps due: slot at & (size−1) is the set of lags
	// keeping at reading at (bit j: lag 2^j), walked in bit order — lag by
	// lag from the shortest, as AddAll. A lag begun has one keep pending,
	// at most its stride (never above its final one) ahead, so 2·maxS
	// slots hold every pending keep in its own slot; a lag joins at its
	// first reading, 2^j. Asking each of the 15 lags at every reading
	// some lag keeps at cost as much as the keeps themselves.
	size := 2 * maxS
	mask := size - 1
	cal := make([]uint16, size)
	for at := 1; at < n; at++ {
		if at&(at-1) == 0 { // 2^j: lag j's first reading
			if j := bits.TrailingZeros(uint(at)); j < numLags {
				cal[at&mask] |= 1 << j
			}
		}
		due := cal[at&mask]
		if due == 0 {
			continue
		}
		cal[at&mask] = 0
		for due != 0 {
			j := bits.TrailingZeros16(due)
			due &= due - 1
			k := 1 << j
			if held[j] == reservoirCap { // AddAll's halving
				held[j] = reservoirCap / 2
				stride[j] *= 2
			}
			held[j]++
			ko := v.octaveLag(j, at)
			if (at-k)&(final[j]-1) == 0 {
				x := xs[at]
				v.lags[j].d = append(v.lags[j].d, math.Abs(x-xs[at-k]))
				v.oct[j].d = append(v.oct[j].d, math.Abs(x-xs[at-ko]))
			}
			next[j] = at + stride[j]
			cal[next[j]&mask] |= 1 << j
		}
	}
	// The rest of the state as AddAll leaves it (stride 0 and next 0
	// mean 1 and not begun there; due the first reading some lag keeps
	// at next).
	due := math.MaxInt
	for j := range numLags {
		due = min(due, next[j])
		if held[j] == 0 {
			continue
		}
		s := stride[j]
		if s == 1 {
			s = 0
		}
		v.lags[j].stride, v.lags[j].next = s, next[j]
		v.oct[j].stride, v.oct[j].next = s, next[j]
	}
	if n > 0 {
		v.n, v.due = n, due
	}
}

// floatScratches keeps a few slices for the estimators that need one
// only while they run (acfDirect's deviations, batchVar's means, MAD's
// copy).
var floatScratches = NewScratch(4)

// noiseScratch is the memory one NoiseOf works in: the reservoirs at
// their largest, the ring, and gamma's copy of a reservoir. NoiseOf runs
// hundreds of times in a report (each DevSlp cycle's step fits) on up to a
// few 100 000 readings, and allocating ~1 MiB of reservoirs a call was a
// third of a report's allocations, collected again and again under its
// memory limit. Nothing of it outlives the call: a Noise holds none of it.
type noiseScratch struct {
	res, ring, tmp []float64
}

// noiseScratches keeps a few noiseScratch for the next NoiseOf — about as
// many as run at once (a report's drive workers, one per core) — across
// garbage collections, which empty a sync.Pool (under the report's memory
// limit, every few cycles: half the scratches were allocated anew with
// one). Few: what it keeps is live heap, which the memory limit leaves
// less room to allocate in before the next collection.
var noiseScratches = make(chan *noiseScratch, 2)

func getNoiseScratch() *noiseScratch {
	select {
	case sc := <-noiseScratches:
		return sc
	default:
		return &noiseScratch{
			res: make([]float64, 2*numLags*reservoirCap),
			tmp: make([]float64, 0, reservoirCap),
		}
	}
}

func putNoiseScratch(sc *noiseScratch) {
	select {
	case noiseScratches <- sc:
	default:
	}
}
