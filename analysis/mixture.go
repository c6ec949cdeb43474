package analysis

import (
	"math"
	"sort"
)

// The levels as a mixture (docs/analysis.md, "States: levels learned from
// the capture"). A kernel density's modes miss a level on the shoulder of
// a larger one, and merge two levels closer than about 3.5 σ_b: a Partial
// held for 4 % of the time 3 σ_b above Slumber, the HBA's own DevSlp 3 σ_b
// under it. The block means are fitted instead as normal components of the
// one known width σ_b (the block noise, measured apart from the levels),
// plus, between each pair of neighbouring levels, a uniform bridge for the
// blocks a step from one to the other splits (their means lie evenly
// between the two: the blocks' phase is random), and a uniform component
// over the whole range for the rest (bursts), by expectation–maximisation; a component stays only if the likelihood
// it adds pays for its two parameters (the Bayesian information criterion,
// with the block count divided by the blocks noise may be correlated over)
// and it holds at least the minimum time.

// mixComp is one normal component: its mean, its blocks, and theirs by
// context.
type mixComp struct {
	mu    float64
	n     float64
	byCtx [numCtx]float64
}

// mixCell is a point of the fit: a value, its blocks and theirs by context.
type mixCell struct {
	x     float64
	n     float64
	byCtx [numCtx]float64
}

// cellsOf coalesces points onto a grid of step g.
func cellsOf(pts []modePoint, g float64) []mixCell {
	var cs []mixCell
	var last int64
	var sum float64
	for _, p := range pts {
		k := int64(math.Floor(p.x / g))
		if len(cs) == 0 || k != last {
			if len(cs) > 0 {
				cs[len(cs)-1].x = sum / cs[len(cs)-1].n
			}
			cs = append(cs, mixCell{})
			last, sum = k, 0
		}
		c := &cs[len(cs)-1]
		c.n += p.n
		sum += p.x * p.n
		for i := range c.byCtx {
			c.byCtx[i] += p.byCtx[i]
		}
	}
	if len(cs) > 0 {
		cs[len(cs)-1].x = sum / cs[len(cs)-1].n
	}
	return cs
}

// mixFit is a fitted mixture: normal components (means mu, ascending,
// weights pi), a bridge between each pair of neighbours (weight pb: the
// blocks a step from one level to the next splits, whose means lie evenly
// between the two), and a uniform component over the whole range (weight
// p0: bursts and the rest).
type mixFit struct {
	mu, pi, pb []float64
	p0         float64
	ll         float64
	lo, rng    float64 // the uniform component's range
	sigma      float64
}

// dens fills comp (normal components), bridge and returns the uniform
// component's density at x, weighted, and their sum.
func (f *mixFit) dens(x float64, comp, bridge []float64) (uni, sum float64) {
	norm := 1 / (f.sigma * math.Sqrt(2*math.Pi))
	for j, m := range f.mu {
		d := (x - m) / f.sigma
		comp[j] = f.pi[j] * norm * math.Exp(-0.5*d*d)
		sum += comp[j]
	}
	for j := range f.pb {
		bridge[j] = 0
		if a, b := f.mu[j], f.mu[j+1]; x > a && x < b {
			bridge[j] = f.pb[j] / (b - a)
			sum += bridge[j]
		}
	}
	uni = f.p0 / f.rng
	return uni, sum + uni
}

// emFit fits means mu (seeds) of width sigma, the bridges between them
// and a uniform component to cs, iters rounds of EM at most.
func emFit(cs []mixCell, mu []float64, sigma float64, iters int) mixFit {
	mu = append([]float64(nil), mu...)
	sort.Float64s(mu)
	k := len(mu)
	nb := max(k-1, 0)
	f := mixFit{mu: mu, pi: make([]float64, k), pb: make([]float64, nb), sigma: sigma}
	var total float64
	for _, c := range cs {
		total += c.n
	}
	f.lo = cs[0].x - sigma
	f.rng = cs[len(cs)-1].x + sigma - f.lo
	w0 := 1 / float64(k+nb+1)
	for i := range f.pi {
		f.pi[i] = w0
	}
	for i := range f.pb {
		f.pb[i] = w0
	}
	f.p0 = w0
	comp, bridge := make([]float64, k), make([]float64, nb)
	sn, sx, sb := make([]float64, k), make([]float64, k), make([]float64, nb)
	prevLL := math.Inf(-1)
	for it := 0; it < iters; it++ {
		clear(sn)
		clear(sx)
		clear(sb)
		var s0 float64
		f.ll = 0
		for _, c := range cs {
			uni, s := f.dens(c.x, comp, bridge)
			if !(s > 0) {
				continue
			}
			f.ll += c.n * math.Log(s)
			for j := range k {
				w := c.n * comp[j] / s
				sn[j] += w
				sx[j] += w * c.x
			}
			for j := range nb {
				sb[j] += c.n * bridge[j] / s
			}
			s0 += c.n * uni / s
		}
		moved := 0.0
		for j := range k {
			if sn[j] > 0 {
				m := sx[j] / sn[j]
				moved = math.Max(moved, math.Abs(m-f.mu[j]))
				f.mu[j] = m
			}
			f.pi[j] = sn[j] / total
		}
		for j := range nb {
			f.pb[j] = sb[j] / total
		}
		f.p0 = s0 / total
		if !sort.Float64sAreSorted(f.mu) {
			// Two means crossed: keep them ordered with their weights.
			ix := make([]int, k)
			for i := range ix {
				ix[i] = i
			}
			sort.Slice(ix, func(a, b int) bool { return f.mu[ix[a]] < f.mu[ix[b]] })
			m2, p2 := make([]float64, k), make([]float64, k)
			for i, j := range ix {
				m2[i], p2[i] = f.mu[j], f.pi[j]
			}
			f.mu, f.pi = m2, p2
		}
		// Converged when the means stand still and the likelihood does
		// too: blocks of one exact value (a quantised, noise-free level)
		// leave the means where the seeds put them from the first round,
		// while the weights are still the even start — a fit stopped
		// there scored a level of 41 blocks as costing likelihood, and
		// the quantised HDDs' Partial was dropped (campaign 2:18).
		if moved < 1e-4*sigma && it > 0 && math.Abs(f.ll-prevLL) <= 1e-9*math.Abs(f.ll)+1e-6 {
			break
		}
		prevLL = f.ll
	}
	return f
}

// maxAdded bounds the components mixture adds where the blocks exceed
// the fit.
const maxAdded = 4

// excess is where the blocks exceed the fit f most, over a window of ±σ,
// at least 1.5 σ from every component (a component's own blocks need not
// be exactly normal), if the excess there holds at least minN blocks.
func excess(cs []mixCell, f mixFit, sigma, minN float64) (float64, bool) {
	var total float64
	for _, c := range cs {
		total += c.n
	}
	// Expected blocks in each cell: its density × its share of the axis,
	// the cell's width taken as the spacing to its neighbours.
	comp, bridge := make([]float64, len(f.mu)), make([]float64, len(f.pb))
	exp := make([]float64, len(cs))
	for i, c := range cs {
		lo, hi := c.x, c.x
		if i > 0 {
			lo = (cs[i-1].x + c.x) / 2
		} else {
			lo = c.x - sigma/8
		}
		if i+1 < len(cs) {
			hi = (c.x + cs[i+1].x) / 2
		} else {
			hi = c.x + sigma/8
		}
		_, d := f.dens(c.x, comp, bridge)
		exp[i] = total * d * (hi - lo)
	}
	best, bx := 0.0, 0.0
	lo := 0
	var sumObs, sumExp float64
	hi := 0
	for _, c := range cs {
		for hi < len(cs) && cs[hi].x <= c.x+sigma {
			sumObs += cs[hi].n
			sumExp += exp[hi]
			hi++
		}
		for cs[lo].x < c.x-sigma {
			sumObs -= cs[lo].n
			sumExp -= exp[lo]
			lo++
		}
		near := false
		for _, m := range f.mu {
			near = near || math.Abs(c.x-m) < 1.5*sigma
		}
		if e := sumObs - sumExp; e > best && !near {
			best, bx = e, c.x
		}
	}
	return bx, best >= minN
}

// mixture fits the levels of cs: seeds, then components merged when less
// than one σ apart, dropped when they hold fewer than minN blocks or do not
// pay for themselves. corr is how many blocks one independent value spans.
// Components come back highest first, with their blocks by context.
func mixture(cs []mixCell, seeds []float64, sigma, minN, corr float64) []mixComp {
	if len(cs) == 0 || len(seeds) == 0 || !(sigma > 0) {
		return nil
	}
	var total float64
	for _, c := range cs {
		total += c.n
	}
	mu := append([]float64(nil), seeds...)
	nEff := math.Max(total/corr, 2)
	penalty := math.Log(nEff) // BIC: ½ · 2 parameters · ln N
	f := emFit(cs, mu, sigma, 200)
	added := 0
	for {
		mu = f.mu
		// Merge components less than σ apart, drop the small.
		order := make([]int, len(mu))
		for i := range order {
			order[i] = i
		}
		sort.Slice(order, func(a, b int) bool { return mu[order[a]] < mu[order[b]] })
		var next []float64
		changed := false
		for _, i := range order {
			if f.pi[i]*total < minN {
				changed = true
				continue
			}
			if n := len(next); n > 0 && mu[i]-next[n-1] < sigma {
				changed = true
				continue // the refit takes the pair's blocks
			}
			next = append(next, mu[i])
		}
		if len(next) == 0 {
			return nil
		}
		if changed {
			f = emFit(cs, next, sigma, 200)
			continue
		}
		// The component whose removal costs least, if that is less than it
		// pays for.
		worst, cost := -1, math.Inf(1)
		if len(mu) > 1 {
			for i := range mu {
				rest := append(append([]float64(nil), mu[:i]...), mu[i+1:]...)
				g := emFit(cs, rest, sigma, 60)
				if d := (f.ll - g.ll) / corr; d < cost {
					worst, cost = i, d
				}
			}
		}
		if worst >= 0 && cost < penalty {
			rest := append(append([]float64(nil), mu[:worst]...), mu[worst+1:]...)
			f = emFit(cs, rest, sigma, 200)
			continue
		}
		// A level the seeds missed (on the shoulder of a larger one): a
		// component where the blocks exceed the fit the most, kept if it
		// pays for itself.
		if added >= maxAdded {
			break
		}
		x, ok := excess(cs, f, sigma, minN)
		if !ok {
			break
		}
		g := emFit(cs, append(append([]float64(nil), mu...), x), sigma, 200)
		if (g.ll-f.ll)/corr < penalty {
			break
		}
		added++
		f = g
	}
	// Blocks by component and context, from the responsibilities.
	out := make([]mixComp, len(f.mu))
	comp, bridge := make([]float64, len(f.mu)), make([]float64, len(f.pb))
	for _, c := range cs {
		_, s := f.dens(c.x, comp, bridge)
		if !(s > 0) {
			continue
		}
		for j := range f.mu {
			w := comp[j] / s
			out[j].n += c.n * w
			for x := range c.byCtx {
				out[j].byCtx[x] += c.byCtx[x] * w
			}
		}
	}
	for j, m := range f.mu {
		out[j].mu = m
	}
	sort.Slice(out, func(a, b int) bool { return out[a].mu > out[b].mu })
	return out
}
