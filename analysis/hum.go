package analysis

import (
	"fmt"
	"math"
	"strings"

	"github.com/idlewatt/idlewatt/internal/stat"
	"github.com/idlewatt/idlewatt/units"
)

// Mains hum (docs/analysis.md, "Mains hum"). A meter on a bench picks up
// the mains: a tone at 50 or 60 Hz and its harmonics, the same waveform in
// every period, added to whatever the drive draws. It is the meter's, not
// the drive's, and it is coherent: over a window of whole mains periods a
// level contributes nothing to the hum's Fourier coefficients, while the
// hum contributes the same coefficients, at its own phase, in every
// window. So a pass before the sample pass (with state detection, the
// read level learning makes: learnHumLevels) cuts each drive's quiet
// samples into windows of whole periods for each candidate frequency,
// keeps each window's coefficients of the harmonics (referred to sample
// 0), and takes their robust mean: windows a level step or a burst falls
// into deviate in every harmonic and are dropped. A harmonic whose mean
// stands out of its own scatter by far more than chance allows is hum;
// the candidate with the more hum power is the mains. The hum so found is
// subtracted from the drive's power in the learning pass (learned again
// for a drive with hum) and in the sample pass, so every figure — the
// levels' block means, the classifier's medians, the DevSlp judges, the
// noise model — sees the drive without it. A capture without hum finds
// none and is analysed exactly as it would be without this pass.

// humCandidatesHz are the mains frequencies looked for.
var humCandidatesHz = [...]float64{50, 60}

const (
	// humMaxHarmonics bounds the harmonics fitted (and humMaxHz their
	// frequency): a converter's hum has its energy in the first few.
	humMaxHarmonics = 12
	humMaxHz        = 1000
	// humMaxPeriods bounds the periods in one window (the search for a
	// window of whole periods that is a whole number of samples).
	humMaxPeriods = 12
	// humWindowCap is how many windows' coefficients a candidate keeps
	// (evenly thinned past it: bounded memory).
	humWindowCap = 4096
	// humMaxWindow bounds a window's samples (and its tables: 2 MB), a
	// rate up to 6.5 MS/s; a header claiming more finds no hum.
	humMaxWindow = 1 << 17
	// humMinWindows is the fewest quiet windows a fit is made from.
	humMinWindows = 64
	// humChi2 is what |A|²/v must exceed for a harmonic to count as hum
	// (v the variance of one component of its mean): under no hum |A|²/v
	// is χ² with 2 degrees of freedom, exceeded with probability
	// exp(−humChi2/2) ≈ 10⁻⁸ — one false tone in millions of drives, with
	// up to 2 × 12 harmonics tried on each.
	humChi2 = 37
	// humKeepZ is the normal quantile of the window outlier cut: a window
	// whose deviation over all harmonics exceeds the χ² quantile at it is
	// a level step or a burst, not noise.
	humKeepZ = 3.09
	// humMaxOffsetHz is how far from 50 or 60 Hz the mains is looked for
	// (a grid's mains keeps within a few tenths of a hertz), on at most
	// humOffsetGrid points.
	humMaxOffsetHz     = 0.5
	humOffsetGrid      = 8192
	humOffsetHarmonics = 3
	// humMinRel is the least amplitude a harmonic must have, relative to
	// the quiet power's mean magnitude: a signal without noise (a constant
	// source, a stuck sensor) gives every window the same coefficients, and
	// their rounding would otherwise pass any test of scatter.
	humMinRel = 1e-6
)

// humWindows gathers one candidate frequency's windows of one drive.
type humWindows struct {
	hz  float64
	n   int // samples per window
	m   int // mains periods per window
	k   int // harmonics
	cos []float64
	sin []float64 // sin(2π j / n)
	// tab is, for sample j of a window, the basis of every harmonic:
	// cos, sin of 2π k·m·j/n for k = 1…K, row j at 2K·j — the same values
	// as cos, sin at (k·m·j) mod n, without the modulo per sample and
	// harmonic. Nil past humTableMax; then idx steps each harmonic's
	// index by kstep (k·m mod n) from one sample to the next. Both read
	// only, shared by the drives' twins.
	tab   []float64
	kstep []int
	idx   []int
	fill  int     // samples in the window being filled
	abs   float64 // Σ |x| over the finished windows' samples
	absN  float64
	s0    uint64    // its first sample index
	acc   []float64 // its sums: Σ x cos, Σ x sin per harmonic
	wabs  float64   // its Σ |x|
	kept  bool      // whether it is kept when finished (else acc is not summed)
	// Finished windows: their first sample index and each harmonic's
	// coefficient A_k (re, im) referred to sample 0.
	starts []uint64
	coef   []float32
	stride int
	seen   int
}

// humTableMax bounds a window's table of every harmonic's basis (tab, in
// values: 2 MB): 2 × 12 harmonics of a window up to 10,922 samples, 50 and
// 60 Hz up to 100 kS/s.
const humTableMax = 1 << 18

// newHumWindows prepares a candidate at the capture's rate; nil when the
// rate cannot show it (below four samples per period), no window of at
// most humMaxPeriods periods is within a thousandth of a sample of a
// whole number of samples, or the window would exceed humMaxWindow.
func newHumWindows(hz, rate float64) *humWindows {
	per := rate / hz
	if !(per >= 4) {
		return nil
	}
	best, bestErr := 0, math.Inf(1)
	for m := 1; m <= humMaxPeriods; m++ {
		x := float64(m) * per
		if e := math.Abs(x - math.Round(x)); e < bestErr-1e-9 {
			best, bestErr = m, e
		}
		if bestErr < 1e-3 {
			break
		}
	}
	if bestErr >= 1e-3 {
		return nil
	}
	n := int(math.Round(float64(best) * per))
	if n > humMaxWindow {
		return nil
	}
	k := min(humMaxHarmonics, int(math.Ceil(math.Min(rate/2, humMaxHz)/hz))-1)
	if k < 1 {
		return nil
	}
	h := &humWindows{hz: hz, n: n, m: best, k: k, cos: make([]float64, n), sin: make([]float64, n), kstep: make([]int, k)}
	for j := range n {
		s, c := math.Sincos(2 * math.Pi * float64(j) / float64(n))
		h.cos[j], h.sin[j] = c, s
	}
	for t := range k {
		h.kstep[t] = (t + 1) * best % n
	}
	if 2*k*n <= humTableMax {
		h.tab = make([]float64, 2*k*n)
		x := make([]int, k)
		for j := range n {
			row := h.tab[2*k*j : 2*k*(j+1)]
			for t := range k {
				row[2*t], row[2*t+1] = h.cos[x[t]], h.sin[x[t]]
				if x[t] += h.kstep[t]; x[t] >= n {
					x[t] -= n
				}
			}
		}
	}
	return h.twin()
}

// twin is a candidate with h's window and tables and none of its windows:
// another drive's.
func (h *humWindows) twin() *humWindows {
	return &humWindows{hz: h.hz, n: h.n, m: h.m, k: h.k, cos: h.cos, sin: h.sin, tab: h.tab, kstep: h.kstep,
		idx: make([]int, h.k), acc: make([]float64, 2*h.k), stride: 1}
}

// reset drops the window being filled.
func (h *humWindows) reset() { h.fill = 0 }

// addRun takes the samples at i0, i0+1, …: the quiet ones, each NaN one
// (busy or invalid) ending the window being filled.
func (h *humWindows) addRun(i0 uint64, ws []float64) {
	for j := 0; j < len(ws); {
		if math.IsNaN(ws[j]) {
			h.fill = 0
			j++
			continue
		}
		i := i0 + uint64(j)
		if h.fill > 0 && i != h.s0+uint64(h.fill) {
			h.fill = 0
		}
		if h.fill == 0 {
			h.s0 = i
			clear(h.acc)
			clear(h.idx)
			h.wabs = 0
			// Thinned past humWindowCap, most windows are seen but not
			// kept (window); which, is known from the count before
			// they start, and one not kept adds only its Σ |x|.
			h.kept = (h.seen+1)%h.stride == 0
		}
		// The quiet samples up to the window's end.
		e := j + min(h.n-h.fill, len(ws)-j)
		for k := j + 1; k < e; k++ {
			if math.IsNaN(ws[k]) {
				e = k
				break
			}
		}
		h.accumulate(ws[j:e])
		h.fill += e - j
		j = e
		if h.fill == h.n {
			h.window()
			h.fill = 0
		}
	}
}

// accumulate adds the window's next samples ws (from sample h.fill on) to
// its sums.
func (h *humWindows) accumulate(ws []float64) {
	acc := h.acc
	wabs := h.wabs
	switch {
	case !h.kept:
		for _, w := range ws {
			wabs += math.Abs(w)
		}
	case h.tab != nil:
		wabs = accumulateTab(acc, h.tab[len(acc)*h.fill:len(acc)*(h.fill+len(ws))], ws, wabs)
	default:
		idx := h.idx
		kstep := h.kstep[:len(idx)]
		for _, w := range ws {
			for t, x := range idx {
				acc[2*t] += w * h.cos[x]
				acc[2*t+1] += w * h.sin[x]
				if x += kstep[t]; x >= h.n {
					x -= h.n
				}
				idx[t] = x
			}
			wabs += math.Abs(w)
		}
	}
	h.wabs = wabs
}

// accumulateTab adds Σ_j ws[j]·tab[j·len(acc)+t] to each acc[t], sample by
// sample in order, and returns wabs + Σ|ws[j]| (in order). Six sums at a time go through all the samples, held
// in registers (as many as the compiler keeps there with their products):
// the same additions in the same order as sample by sample over every sum
// (which loaded and stored each sum once per sample), so the same sums to
// the bit (TestAccumulateTab). len(acc) is even (two per harmonic).
func accumulateTab(acc, tab, ws []float64, wabs float64) float64 {
	k2 := len(acc)
	t := 0
	if k2 >= 6 {
		// The first six with Σ|w| (wabs, in order) alongside: its adds
		// wait on each other, the sums' do not.
		a := acc[0:6:6]
		a0, a1, a2, a3, a4, a5 := a[0], a[1], a[2], a[3], a[4], a[5]
		at := 0
		for _, w := range ws {
			r := tab[at : at+6 : at+6]
			a0 += w * r[0]
			a1 += w * r[1]
			a2 += w * r[2]
			a3 += w * r[3]
			a4 += w * r[4]
			a5 += w * r[5]
			wabs += math.Abs(w)
			at += k2
		}
		a[0], a[1], a[2], a[3], a[4], a[5] = a0, a1, a2, a3, a4, a5
		t = 6
	} else {
		for _, w := range ws {
			wabs += math.Abs(w)
		}
	}
	for ; t+6 <= k2; t += 6 {
		a := acc[t : t+6 : t+6]
		a0, a1, a2, a3, a4, a5 := a[0], a[1], a[2], a[3], a[4], a[5]
		at := t
		for _, w := range ws {
			r := tab[at : at+6 : at+6]
			a0 += w * r[0]
			a1 += w * r[1]
			a2 += w * r[2]
			a3 += w * r[3]
			a4 += w * r[4]
			a5 += w * r[5]
			at += k2
		}
		a[0], a[1], a[2], a[3], a[4], a[5] = a0, a1, a2, a3, a4, a5
	}
	for ; t+2 <= k2; t += 2 {
		a := acc[t : t+2 : t+2]
		a0, a1 := a[0], a[1]
		at := t
		for _, w := range ws {
			r := tab[at : at+2 : at+2]
			a0 += w * r[0]
			a1 += w * r[1]
			at += k2
		}
		a[0], a[1] = a0, a1
	}
	return wabs
}

// window keeps a finished window's coefficients. Over m whole periods the
// harmonic k's basis sums to 0, so a level adds nothing; a tone
// Re(A e^{i2πk·m·i/n}) gives c = (2/n) Σ x e^{−i2πk·m·j/n} = A e^{i2πk·m·s0/n},
// and A = c e^{−i2πk·m·s0/n}.
func (h *humWindows) window() {
	h.abs += h.wabs
	h.absN += float64(h.n)
	h.seen++
	if h.seen%h.stride != 0 {
		return
	}
	s := int((h.s0 % uint64(h.n) * uint64(h.m)) % uint64(h.n))
	h.starts = append(h.starts, h.s0)
	for k := 1; k <= h.k; k++ {
		cr, ci := 2*h.acc[2*k-2]/float64(h.n), -2*h.acc[2*k-1]/float64(h.n)
		x := (k * s) % h.n
		c, sn := h.cos[x], h.sin[x]
		// (cr + i ci)(c − i sn)
		h.coef = append(h.coef, float32(cr*c+ci*sn), float32(ci*c-cr*sn))
	}
	if len(h.starts) >= humWindowCap {
		k := 0
		for j := 0; j < len(h.starts); j += 2 {
			h.starts[k] = h.starts[j]
			copy(h.coef[2*h.k*k:2*h.k*(k+1)], h.coef[2*h.k*j:2*h.k*(j+1)])
			k++
		}
		h.starts, h.coef = h.starts[:k], h.coef[:2*h.k*k]
		h.stride *= 2
	}
}

// HumFit is the mains hum found in a drive's power and removed from it.
type HumFit struct {
	Hz units.Hertz `json:"hz"` // the mains: 50 or 60
	// OffsetHz is the mains' offset from Hz as the meter's clock reads it
	// (its own error and the grid's); 0 when none is resolved.
	OffsetHz units.Hertz `json:"offset_hz"`
	// Harmonics are the tones found, each Amp·cos(2π·k·(Hz+OffsetHz)·t +
	// Phase), t from the capture's first sample at the meter's nominal
	// rate.
	Harmonics []HumHarmonic `json:"harmonics"`
	RMSW      units.Watts   `json:"rms_w"`   // of their sum
	Windows   int           `json:"windows"` // quiet windows of whole periods it was estimated from (kept / seen)
	Dropped   int           `json:"windows_dropped"`
}

// HumHarmonic is one tone of the hum.
type HumHarmonic struct {
	K        int         `json:"k"`
	AmpW     units.Watts `json:"amp_w"`
	PhaseRad float64     `json:"phase_rad"`
	// AmpU95W is the 95 % half-width of each component of the tone's
	// estimate (what of the tone may be left after it is subtracted).
	AmpU95W units.Watts `json:"amp_u95_w"`
}

// humModel is a fitted hum, ready to subtract.
type humModel struct {
	fit   HumFit
	n, m  uint64  // the window: m periods in n samples (the fundamental m/n + delta cycles per sample)
	delta float64 // the mains' offset from m/n, cycles per sample
	k     []int
	re    []float64
	im    []float64
	phase []float64 // scratch: phasors
}

// fit is the candidate's hum, or false when none stands out: the windows
// kept (robustKeep) at the nominal frequency, the frequency's offset from
// it (offset), the windows kept again at the offset, then each harmonic's
// mean over them and whether it stands out of their scatter.
func (h *humWindows) fit() (f HumFit, re, im []float64, delta float64, ok bool) {
	nw := len(h.starts)
	if nw < humMinWindows {
		return f, nil, nil, 0, false
	}
	K := h.k
	c := h.rotated(0)
	keep := robustKeep(c, K)
	if len(keep) < humMinWindows {
		return f, nil, nil, 0, false
	}
	if delta = h.offset(c, keep); delta != 0 {
		c = h.rotated(delta)
		if keep = robustKeep(c, K); len(keep) < humMinWindows {
			return f, nil, nil, 0, false
		}
	}
	re, im = make([]float64, K), make([]float64, K)
	f = HumFit{Hz: units.Hertz(h.hz), Windows: len(keep), Dropped: nw - len(keep)}
	var power float64
	x := make([]float64, len(keep))
	for k := range K {
		var mv [2]float64
		var v float64
		for j := range 2 {
			for i, w := range keep {
				x[i] = c[2*K*w+2*k+j]
			}
			mv[j] = stat.Mean(x)
			v += windowsMeanVar(x)
		}
		v /= 2 // one component's
		a2 := mv[0]*mv[0] + mv[1]*mv[1]
		if !(a2 > humChi2*v) || !(math.Sqrt(a2) > humMinRel*h.abs/h.absN) {
			continue
		}
		re[k], im[k] = mv[0], mv[1]
		power += a2 / 2
		f.Harmonics = append(f.Harmonics, HumHarmonic{K: k + 1, AmpW: units.Watts(math.Sqrt(a2)), PhaseRad: math.Atan2(mv[1], mv[0]),
			AmpU95W: units.Watts(1.96 * math.Sqrt(v))})
	}
	if len(f.Harmonics) == 0 {
		return HumFit{}, nil, nil, 0, false
	}
	f.RMSW = units.Watts(math.Sqrt(power))
	return f, re, im, delta, true
}

// rotated is every window's coefficients referred to sample 0 for tones
// delta cycles per sample above the window's: A_k e^{−i2πkδ·s0}.
func (h *humWindows) rotated(delta float64) []float64 {
	K := h.k
	c := make([]float64, len(h.coef))
	for w, s0 := range h.starts {
		pr, pi := 1.0, 0.0
		var ds, dc float64
		if delta != 0 {
			_, frac := math.Modf(delta * float64(s0))
			ds, dc = math.Sincos(-2 * math.Pi * frac)
		}
		for k := range K {
			if delta != 0 {
				pr, pi = pr*dc-pi*ds, pr*ds+pi*dc
			}
			a, b := float64(h.coef[2*K*w+2*k]), float64(h.coef[2*K*w+2*k+1])
			c[2*K*w+2*k], c[2*K*w+2*k+1] = a*pr-b*pi, a*pi+b*pr
		}
	}
	return c
}

// robustKeep is the windows whose coefficients c (2K per window) lie
// within noise of the others': a robust centre and scale per harmonic
// (the median and MAD of each component; both components of a harmonic
// share one scale, noise has no preferred phase), each window's squared
// deviation over all 2K components, and a cut at its χ² quantile
// (humKeepZ), scaled up by how far the deviations' median exceeds the
// χ²'s (non-Gaussian noise). A window a level step or a burst falls in
// deviates in every harmonic.
func robustKeep(c []float64, K int) []int {
	nw := len(c) / (2 * K)
	mid, scale := make([]float64, 2*K), make([]float64, 2*K)
	col := make([]float64, nw)
	for j := range 2 * K {
		for w := range nw {
			col[w] = c[2*K*w+j]
		}
		// stat.Median and stat.MAD, by selection (col reordered).
		mid[j] = stat.MedianSelecting(col)
		if nw >= 2 {
			for w, x := range col {
				col[w] = math.Abs(x - mid[j])
			}
			scale[j] = stat.MADScale * stat.MedianSelecting(col)
		}
	}
	for k := range K {
		s := math.Sqrt((scale[2*k]*scale[2*k] + scale[2*k+1]*scale[2*k+1]) / 2)
		scale[2*k], scale[2*k+1] = s, s
	}
	dev := make([]float64, nw)
	for w := range nw {
		var r float64
		for j := range 2 * K {
			if scale[j] > 0 {
				d := (c[2*K*w+j] - mid[j]) / scale[j]
				r += d * d
			}
		}
		dev[w] = r
	}
	nu := float64(2 * K)
	copy(col, dev)
	cut := chi2Quantile(nu, humKeepZ) * math.Max(1, stat.MedianSelecting(col)/chi2Quantile(nu, 0))
	keep := make([]int, 0, nw)
	for w := range nw {
		if dev[w] <= cut {
			keep = append(keep, w)
		}
	}
	return keep
}

// offset is the hum's frequency offset from the candidate's (cycles per
// sample): the meter's clock is off by its ppm, and the mains by up to a
// few tenths of a hertz. Over the capture an offset δ turns each window's
// coefficient of harmonic k by 2πkδ·s0; the offset is where the windows'
// coherent power Σ_k |Σ c_k e^{−i2πkδ·s0}|² over the mains' own first
// humOffsetHarmonics harmonics peaks — not the strongest tone's: a
// switching ripple aliased near a higher harmonic is no mains and keeps
// its own frequency — over ±humMaxOffsetHz, on a grid of a quarter of the
// highest of those harmonics' resolution (at most humOffsetGrid points),
// refined between the grid points by a parabola. 0 when the peak is at 0:
// a hum on the meter's own clock stays exactly there.
func (h *humWindows) offset(c []float64, keep []int) float64 {
	g, step := h.offsetGrid(keep)
	if g == 0 {
		return 0
	}
	return offsetPeak(offsetPower(h.starts, keep, c, h.k, min(h.k, humOffsetHarmonics), g, step), step)
}

// offsetGrid is the offset search's grid: the offsets (i − g)·step cycles
// per sample of the fundamental, i = 0…2g; g = 0 when the kept windows
// span no time.
func (h *humWindows) offsetGrid(keep []int) (g int, step float64) {
	kn := min(h.k, humOffsetHarmonics)
	span := float64(h.starts[keep[len(keep)-1]] - h.starts[keep[0]])
	if !(span > 0) {
		return 0, 0
	}
	step = 1 / (4 * float64(kn) * span)
	rate := float64(h.n) / float64(h.m) * h.hz
	g = int(math.Ceil(humMaxOffsetHz / rate / step))
	if g > humOffsetGrid/2 {
		g = humOffsetGrid / 2
		step = humMaxOffsetHz / rate / float64(g)
	}
	return g, step
}

// offsetPeak is the offset at the highest of the grid's powers p, refined
// by the parabola through it and its neighbours; 0 at the grid's centre or
// edge.
func offsetPeak(p []float64, step float64) float64 {
	g := len(p) / 2
	top := g
	for i := range p {
		if p[i] > p[top] {
			top = i
		}
	}
	if top == g || top == 0 || top == len(p)-1 {
		return 0
	}
	den := p[top-1] - 2*p[top] + p[top+1]
	x := float64(top - g)
	if den < 0 {
		x += 0.5 * (p[top-1] - p[top+1]) / den
	}
	return x * step
}

// humSpread is the half-width, in points of the oversampled grid, over
// which offsetPower spreads a window's coefficient: 12 gives about 12
// digits at twice oversampling (Greengard and Lee's table).
const humSpread = 12

// offsetPower is the coherent power at each of the 2g+1 grid offsets,
// p[i] = Σ_{k<kn} |Σ_w c_wk e^{−i2π·(i−g)·θ_wk}|², θ_wk = (k+1)·step·s_w
// (s_w the window's start from the first kept one's; c holds K harmonics
// a window). Summed directly that is windows × grid rotations per
// harmonic; it is a Fourier sum at the integer frequencies −g…g of
// coefficients at the non-uniform points θ mod 1, so it is evaluated by
// Gaussian gridding instead (Greengard and Lee, "Accelerating the
// nonuniform fast Fourier transform", SIAM Review 46(3), 2004): each
// coefficient spread by a Gaussian over 2·humSpread points of a periodic
// grid of mr ≥ 2(2g+1) points, one FFT, and the Gaussian's transform
// divided out — windows·humSpread + mr·log mr operations, equal to the
// direct sum to about 10⁻¹² of Σ|c| (TestHumOffsetPowerFast).
func offsetPower(starts []uint64, keep []int, c []float64, K, kn, g int, step float64) []float64 {
	nm := 2*g + 1
	mr := 64
	for mr < 2*nm {
		mr <<= 1
	}
	mask := mr - 1
	// The Gaussian e^{−φ²/4τ} (φ in radians of the period) with Greengard
	// and Lee's τ for humSpread at this oversampling; on the grid, point j
	// from the one below a coefficient at fraction d past it has weight
	// e^{−(j−d)²q} = e^{−d²q}·(e^{2dq})^j·e^{−j²q}.
	tau := math.Pi * humSpread / (float64(mr) * (float64(mr) - float64(nm)/2))
	hh := 2 * math.Pi / float64(mr)
	q := hh * hh / (4 * tau)
	ej := make([]float64, 2*humSpread) // e^{−j²q}, j = 1−humSpread…humSpread
	for t := range ej {
		j := float64(t + 1 - humSpread)
		ej[t] = math.Exp(-j * j * q)
	}
	// The Gaussian's transform at frequency l is √(4πτ)·e^{−l²τ} over the
	// period's 2π, and the FFT of mr grid points is mr times the Fourier
	// coefficient: what divides the power out.
	dec := make([]float64, nm)
	for i := range dec {
		l := float64(i - g)
		a := math.Sqrt(math.Pi/tau) * math.Exp(l*l*tau) / float64(mr)
		dec[i] = a * a
	}
	buf := make([]complex128, mr)
	p := make([]float64, nm)
	s00 := starts[keep[0]]
	for k := range kn {
		kk := float64(k + 1)
		clear(buf)
		for _, w := range keep {
			_, f := math.Modf(kk * step * float64(starts[w]-s00))
			x := f * float64(mr)
			m0 := math.Floor(x)
			d := x - m0
			v := math.Exp(-d * d * q)
			a := complex(c[2*K*w+2*k]*v, c[2*K*w+2*k+1]*v)
			e2 := math.Exp(2 * d * q)
			at := int(m0)
			pw := 1.0
			for t := humSpread - 1; t < len(ej); t++ { // j = 0…humSpread
				buf[(at+t+1-humSpread)&mask] += a * complex(pw*ej[t], 0)
				pw *= e2
			}
			inv := 1 / e2
			pw = inv
			for t := humSpread - 2; t >= 0; t-- { // j = −1…1−humSpread
				buf[(at+t+1-humSpread)&mask] += a * complex(pw*ej[t], 0)
				pw *= inv
			}
		}
		stat.FFT(buf, false)
		for i := range p {
			b := buf[(i-g)&mask]
			p[i] += dec[i] * (real(b)*real(b) + imag(b)*imag(b))
		}
	}
	return p
}

// windowsMeanVar is the variance of the mean of x, consecutive windows'
// values: the larger of the plain s²/n and that of means of batches of 8
// (noise correlated from one window to the next).
func windowsMeanVar(x []float64) float64 {
	n := len(x)
	v := stat.Var(x) / float64(n)
	const b = 8
	if nb := n / b; nb >= 8 {
		bm := make([]float64, nb)
		for i := range nb {
			bm[i] = stat.Mean(x[i*b : (i+1)*b])
		}
		v = math.Max(v, stat.Var(bm)/float64(nb))
	}
	return v
}

// chi2Quantile is the Wilson–Hilferty approximation of the χ² quantile
// with nu degrees of freedom at the normal quantile z.
func chi2Quantile(nu, z float64) float64 {
	a := 2 / (9 * nu)
	c := 1 - a + z*math.Sqrt(a)
	return nu * c * c * c
}

// remove subtracts the hum from the drive's power ps, samples start,
// start+1, …
func (m *humModel) remove(start uint64, ps []float64) {
	if m == nil || len(ps) == 0 {
		return
	}
	const renorm = 4096 // samples between exact phasors (rounding drift)
	for o := 0; o < len(ps); o += renorm {
		seg := ps[o:min(len(ps), o+renorm)]
		i := start + uint64(o)
		// The fundamental's phase at i: m·i mod n exactly from the
		// integers, and the offset's.
		_, off := math.Modf(m.delta * float64(i))
		th := 2 * math.Pi * (float64((i%m.n)*m.m%m.n)/float64(m.n) + off)
		zs, zc := math.Sincos(th)
		ds, dc := math.Sincos(2 * math.Pi * (float64(m.m)/float64(m.n) + m.delta))
		for j := range seg {
			// Harmonic k: e^{ikθ} by powers of e^{iθ}.
			var hum float64
			pr, pi := 1.0, 0.0
			k := 0
			for t, kk := range m.k {
				for k < kk {
					pr, pi = pr*zc-pi*zs, pr*zs+pi*zc
					k++
				}
				hum += m.re[t]*pr - m.im[t]*pi
			}
			seg[j] -= hum
			zc, zs = zc*dc-zs*ds, zc*ds+zs*dc
		}
	}
}

// humNote says what was removed from a drive's power.
func humNote(name string, f HumFit) string {
	ks := make([]string, len(f.Harmonics))
	for i, h := range f.Harmonics {
		ks[i] = fmt.Sprint(h.K)
	}
	return fmt.Sprintf("drive %q: mains hum at %g Hz (harmonics %s, %.3g mW rms) estimated from its quiet samples (%d windows of whole periods) and removed from its power",
		name, float64(f.Hz), strings.Join(ks, ", "), float64(f.RMSW)*1e3, f.Windows)
}
