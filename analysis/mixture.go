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
// plus a uniform component for the blocks a transition or a burst splits,
// by expectation–maximisation; a component stays only if the likelihood
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

// mixFit is a fitted mixture.
type mixFit struct {
	mu  []float64
	pi  []float64 // weights; pi[len(mu)] is the uniform component's
	ll  float64
	lo  float64 // the uniform component's range
	rng float64
}

// emFit fits means mu (seeds) of width sigma and a uniform component to
// cs, iters rounds of EM at most.
func emFit(cs []mixCell, mu []float64, sigma float64, iters int) mixFit {
	k := len(mu)
	f := mixFit{mu: append([]float64(nil), mu...), pi: make([]float64, k+1)}
	var total float64
	for _, c := range cs {
		total += c.n
	}
	f.lo = cs[0].x - sigma
	f.rng = cs[len(cs)-1].x + sigma - f.lo
	for i := range f.pi {
		f.pi[i] = 1 / float64(k+1)
	}
	r := make([]float64, k+1)
	norm := 1 / (sigma * math.Sqrt(2*math.Pi))
	sn := make([]float64, k+1)
	sx := make([]float64, k)
	for it := 0; it < iters; it++ {
		clear(sn)
		clear(sx)
		f.ll = 0
		for _, c := range cs {
			var s float64
			for j := range k {
				d := (c.x - f.mu[j]) / sigma
				r[j] = f.pi[j] * norm * math.Exp(-0.5*d*d)
				s += r[j]
			}
			r[k] = f.pi[k] / f.rng
			s += r[k]
			if !(s > 0) {
				continue
			}
			f.ll += c.n * math.Log(s)
			for j := range k + 1 {
				w := c.n * r[j] / s
				sn[j] += w
				if j < k {
					sx[j] += w * c.x
				}
			}
		}
		moved := 0.0
		for j := range k {
			if sn[j] > 0 {
				m := sx[j] / sn[j]
				moved = math.Max(moved, math.Abs(m-f.mu[j]))
				f.mu[j] = m
			}
		}
		for j := range k + 1 {
			f.pi[j] = sn[j] / total
		}
		if moved < 1e-4*sigma {
			break
		}
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
	norm := 1 / (sigma * math.Sqrt(2*math.Pi))
	// Expected blocks in each cell: its density × its share of the axis,
	// the cell's width taken as the spacing to its neighbours.
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
		var d float64
		for j, m := range f.mu {
			z := (c.x - m) / sigma
			d += f.pi[j] * norm * math.Exp(-0.5*z*z)
		}
		d += f.pi[len(f.mu)] / f.rng
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
	norm := 1 / (sigma * math.Sqrt(2*math.Pi))
	r := make([]float64, len(f.mu)+1)
	for _, c := range cs {
		var s float64
		for j, m := range f.mu {
			d := (c.x - m) / sigma
			r[j] = f.pi[j] * norm * math.Exp(-0.5*d*d)
			s += r[j]
		}
		s += f.pi[len(f.mu)] / f.rng
		if !(s > 0) {
			continue
		}
		for j := range f.mu {
			w := r[j] / s
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
