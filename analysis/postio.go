package analysis

import (
	"math"
	"time"

	"github.com/idlewatt/idlewatt/internal/stat"
)

// The power after I/O, stretch by stretch (docs/analysis.md, "States:
// levels learned from the capture"). A SATA link's idle timers run from
// the end of the last I/O: idle, Partial after the HIPM timer, Slumber
// after the DIPM one. A level held for tens of ms after each I/O (a
// Partial before Slumber) fills few whole 10 ms blocks and is lost in
// their noise; lined up on the end of the I/O over many quiet stretches,
// its 2 ms bins have the median of as many values, and the power's
// profile over time since I/O shows the steps. The profile's plateaus are
// levels too.

const (
	postBin  = 2 * time.Millisecond
	postBins = 250 // 0.5 s after the end of the I/O
	// postMinStretches is the fewest stretches a bin's median is taken over.
	postMinStretches = 10
	// postMinBins is the shortest plateau, in bins, that counts as a level.
	postMinBins = 3
	// postPenalty is the cost of one more step in the profile, in units of
	// χ²: a step must be 5 standard errors to be made.
	postPenalty = 25
	// postCap bounds the values a bin keeps: 250 bins × 3 contexts × 256
	// values is 1.5 MB per drive.
	postCap = 256
)

// postProfile is one policy context's power after I/O: per 2 ms bin, the
// bin's mean power in each stretch that covered it whole (thinned evenly
// once a bin holds postCap of them).
type postProfile struct {
	bins      [postBins]reservoir
	stretches int
}

// postTrack follows the quiet stretch that began at the end of an I/O.
type postTrack struct {
	on, afterIO bool
	t0          int64
	ctx         learnCtx
	bin         int
	sum         float64
	n           int
	per         int // samples per bin
}

// busy is an I/O (or a DEVSLP entry, or a hole): the stretch ends; after
// I/O the next quiet sample starts one.
func (p *postTrack) busy(io bool) {
	p.on = false
	p.afterIO = io
}

// add takes a quiet sample at t under policy context ctx (ctxPin when
// DEVSLP is asserted).
func (l *levelLearner) postAdd(t int64, w float64, ctx learnCtx) {
	p := &l.postT
	if ctx == ctxPin || ctx == ctxMaxPerf {
		p.on, p.afterIO = false, false
		return
	}
	if !p.on {
		if !p.afterIO {
			return
		}
		p.on, p.afterIO, p.t0, p.ctx, p.bin, p.sum, p.n = true, false, t, ctx, 0, 0, 0
		l.post[ctx].stretches++
	}
	if ctx != p.ctx {
		p.on = false
		return
	}
	b := int((t - p.t0) / int64(postBin))
	if b != p.bin {
		if p.n >= p.per*8/10 && p.bin < postBins {
			r := &l.post[p.ctx].bins[p.bin]
			r.max = postCap
			r.add(p.sum / float64(p.n))
		}
		p.bin, p.sum, p.n = b, 0, 0
	}
	if b >= postBins {
		p.on = false
		return
	}
	p.sum += w
	p.n++
}

// plateau is a level the profile after I/O holds: its power, standard
// error, where it starts and ends (ms after the I/O) and how many stretches
// reached it.
type plateau struct {
	w, se     float64
	from, to  float64
	stretches int
	ctx       learnCtx
}

// plateaus segments the profile of one context into steps.
func (pp *postProfile) plateaus(ctx learnCtx) []plateau {
	type bin struct {
		med, se float64
		n       int
	}
	var bs []bin
	for i := range pp.bins {
		r := &pp.bins[i]
		if len(r.v) < postMinStretches {
			break
		}
		med := stat.UpperMedian(r.v)
		dev := make([]float64, len(r.v))
		for k, x := range r.v {
			dev[k] = math.Abs(x - med)
		}
		sd := stat.MADScale * stat.UpperMedian(dev)
		// The median's standard error, 1.2533 σ/√n.
		bs = append(bs, bin{med: med, se: math.Max(1.2533*sd/math.Sqrt(float64(len(r.v))), 1e-9), n: len(r.v)})
	}
	if len(bs) < postMinBins {
		return nil
	}
	// Optimal segmentation: cost(i, j) is the weighted squared deviation of
	// bins i..j-1 from their weighted mean; each segment costs postPenalty.
	n := len(bs)
	pw, pwx, pwxx := make([]float64, n+1), make([]float64, n+1), make([]float64, n+1)
	for i, b := range bs {
		w := 1 / (b.se * b.se)
		pw[i+1], pwx[i+1], pwxx[i+1] = pw[i]+w, pwx[i]+w*b.med, pwxx[i]+w*b.med*b.med
	}
	cost := func(i, j int) float64 {
		w, wx, wxx := pw[j]-pw[i], pwx[j]-pwx[i], pwxx[j]-pwxx[i]
		return wxx - wx*wx/w
	}
	best := make([]float64, n+1)
	from := make([]int, n+1)
	for j := 1; j <= n; j++ {
		best[j] = math.Inf(1)
		for i := 0; i < j; i++ {
			if c := best[i] + cost(i, j) + postPenalty; c < best[j] {
				best[j], from[j] = c, i
			}
		}
	}
	var out []plateau
	binMs := float64(postBin) / 1e6
	for j := n; j > 0; j = from[j] {
		i := from[j]
		if j-i < postMinBins {
			continue
		}
		w := pw[j] - pw[i]
		out = append(out, plateau{w: (pwx[j] - pwx[i]) / w, se: 1 / math.Sqrt(w), from: float64(i) * binMs, to: float64(j) * binMs,
			stretches: bs[i].n, ctx: ctx})
	}
	return out
}
