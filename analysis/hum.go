package analysis

import (
	"fmt"
	"math"
	"strings"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/stat"
	"github.com/idlewatt/idlewatt/units"
)

// Mains hum (docs/analysis.md, "Mains hum"). A meter on a bench picks up
// the mains: a tone at 50 or 60 Hz and its harmonics, the same waveform in
// every period, added to whatever the drive draws. It is the meter's, not
// the drive's, and it is coherent: over a window of whole mains periods a
// level contributes nothing to the hum's Fourier coefficients, while the
// hum contributes the same coefficients, at its own phase, in every
// window. So, with state detection, a pass of its own before level
// learning cuts each drive's quiet samples into windows of whole periods
// for each candidate frequency, keeps each window's coefficients of the
// harmonics (referred to sample 0), and takes their robust mean: windows a
// level step or a burst falls into deviate in every harmonic and are
// dropped. A harmonic whose mean stands out of its own scatter by far more
// than chance allows is hum; the candidate with the more hum power is the
// mains. The hum so found is subtracted from the drive's power in the
// learning pass and in the sample pass, so every figure — the levels'
// block means, the classifier's medians, the DevSlp judges, the noise
// model — sees the drive without it. A capture without hum finds none
// and is analysed exactly as it would be without this pass.

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
	hz   float64
	n    int // samples per window
	m    int // mains periods per window
	k    int // harmonics
	cos  []float64
	sin  []float64 // sin(2π j / n)
	fill int       // samples in the window being filled
	abs  float64   // Σ |x| over the finished windows' samples
	absN float64
	s0   uint64    // its first sample index
	acc  []float64 // its sums: Σ x cos, Σ x sin per harmonic
	wabs float64   // its Σ |x|
	// Finished windows: their first sample index and each harmonic's
	// coefficient A_k (re, im) referred to sample 0.
	starts []uint64
	coef   []float32
	stride int
	seen   int
}

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
	h := &humWindows{hz: hz, n: n, m: best, k: k, cos: make([]float64, n), sin: make([]float64, n), acc: make([]float64, 2*k), stride: 1}
	for j := range n {
		s, c := math.Sincos(2 * math.Pi * float64(j) / float64(n))
		h.cos[j], h.sin[j] = c, s
	}
	return h
}

// reset drops the window being filled.
func (h *humWindows) reset() { h.fill = 0 }

// add takes the quiet sample at index i.
func (h *humWindows) add(i uint64, w float64) {
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
		mid[j] = stat.Median(col)
		scale[j] = stat.MAD(col)
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
	cut := chi2Quantile(nu, humKeepZ) * math.Max(1, stat.Median(dev)/chi2Quantile(nu, 0))
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
	K := h.k
	kn := min(K, humOffsetHarmonics)
	span := float64(h.starts[keep[len(keep)-1]] - h.starts[keep[0]])
	if !(span > 0) {
		return 0
	}
	step := 1 / (4 * float64(kn) * span) // cycles per sample of the fundamental
	rate := float64(h.n) / float64(h.m) * h.hz
	g := int(math.Ceil(humMaxOffsetHz / rate / step))
	if g > humOffsetGrid/2 {
		g = humOffsetGrid / 2
		step = humMaxOffsetHz / rate / float64(g)
	}
	p := make([]float64, 2*g+1)
	sr, si := make([]float64, 2*g+1), make([]float64, 2*g+1)
	for k := range kn {
		kk := float64(k + 1)
		clear(sr)
		clear(si)
		for _, w := range keep {
			s0 := float64(h.starts[w] - h.starts[keep[0]])
			a, b := c[2*K*w+2*k], c[2*K*w+2*k+1]
			// Grid point i is the offset (i − g)·step: the coefficient
			// turned by e^{−i2πk(i−g)·step·s0}, from i = 0 on by
			// e^{−i2πk·step·s0}.
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
	top := g
	for i := range p {
		if p[i] > p[top] {
			top = i
		}
	}
	if top == g || top == 0 || top == len(p)-1 {
		return 0
	}
	// The parabola through the peak and its neighbours.
	den := p[top-1] - 2*p[top] + p[top+1]
	x := float64(top - g)
	if den < 0 {
		x += 0.5 * (p[top-1] - p[top+1]) / den
	}
	return x * step
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

// humLearner is one drive's hum pass.
type humLearner struct {
	port  int
	rails []int
	busy  activityCursor
	cands []*humWindows
}

// take adds a run of rows: the quiet samples where every rail is present
// and valid; anything else ends the windows being filled.
func (l *humLearner) take(run *capture.Run, c *Clock) {
	for _, ch := range l.rails {
		if !run.Present[ch] {
			l.reset()
			return
		}
	}
	for j := range run.N {
		var w float64
		ok := true
		for _, ch := range l.rails {
			x := float64(run.V[ch][j]) * float64(run.I[ch][j])
			if !(math.Abs(x) <= MaxPlausibleW) {
				ok = false
				break
			}
			w += x
		}
		i := run.Index + uint64(j)
		if !ok || l.busy.at(int64(c.Host(i))) == Busy {
			l.reset()
			continue
		}
		for _, h := range l.cands {
			h.add(i, w)
		}
	}
}

func (l *humLearner) reset() {
	for _, h := range l.cands {
		h.reset()
	}
}

// model is the drive's hum: the candidate with the more hum power, nil
// when neither has any.
func (l *humLearner) model() *humModel {
	var best *humModel
	for _, h := range l.cands {
		f, re, im, delta, ok := h.fit()
		if !ok || (best != nil && f.RMSW <= best.fit.RMSW) {
			continue
		}
		f.OffsetHz = units.Hertz(delta * float64(h.n) / float64(h.m) * h.hz)
		hm := &humModel{fit: f, n: uint64(h.n), m: uint64(h.m), delta: delta}
		for _, t := range f.Harmonics {
			hm.k = append(hm.k, t.K)
			hm.re, hm.im = append(hm.re, re[t.K-1]), append(hm.im, im[t.K-1])
		}
		best = hm
	}
	return best
}

// learnHum is the hum pass: one read of the samples, each drive's quiet
// windows gathered, then each drive's hum fitted. Drives with none are
// not in the map.
func learnHum(open Opener, p *pass1, c *Clock, only []int) (map[int]*humModel, error) {
	out := map[int]*humModel{}
	ports, rails, err := drivePorts(p.hdr, only)
	if err != nil {
		return out, nil // the sample pass says why
	}
	rate := float64(p.hdr.RateHz)
	var ls []*humLearner
	for _, port := range ports {
		l := &humLearner{port: port, rails: rails[port]}
		if ss := p.busy[port]; ss != nil {
			l.busy = activityCursor{spans: ss.spans}
		}
		for _, hz := range humCandidatesHz {
			if h := newHumWindows(hz, rate); h != nil {
				l.cands = append(l.cands, h)
			}
		}
		if len(l.cands) > 0 && len(l.rails) > 0 {
			ls = append(ls, l)
		}
	}
	if len(ls) == 0 {
		return out, nil
	}
	err = eachRun(open, func(run *capture.Run) {
		for _, l := range ls {
			if run.Gap > 0 {
				l.reset()
			} else {
				l.take(run, c)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	for _, l := range ls {
		if m := l.model(); m != nil {
			out[l.port] = m
		}
	}
	return out, nil
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
