package analysis

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/stat"
	"github.com/idlewatt/idlewatt/states/detect"
	"github.com/idlewatt/idlewatt/units"
)

// devslpZ is how many standard errors below the level it sits at outside
// the pin the DEVSLP-asserted level must be to be DevSlp, and
// devslpRel the fraction of that level it must be below it by at least.
const (
	devslpZ   = 4.5
	devslpRel = 0.05
)

// minLevelW is the least power a learned level is given: 1 nW. A level
// at or below 0 W (a DevSlp floor under one LSB of a quantised meter, its
// readings 0) is present; in Levels 0 means absent.
const minLevelW = 1e-9

// naming is nameLevels' work: the modes, highest first, what each is
// named and where it came from, the levels and their evidence.
type naming struct {
	f      scaleFit
	blockS float64
	all    []mode
	named  []string
	from   []string
	ev     map[string]string
	lv     detect.Levels
	idle   int
	se     func(n float64) float64 // the standard error of a level held n blocks
	// stepW is how far the meter's level steps move a level (the widest
	// doublet merged, or the telegraph's step): a median of a stretch of
	// blocks may sit on either half.
	stepW float64
	one   *oneLevel // active idle's spread (nil: not read)
	// idleMP: idle took the max_performance mode's level, the mode over
	// every context holding a lower level too and left to be named as it
	// (LevelLearning.idleMP).
	idleMP bool
}

// gather collects the modes: the long blocks' fit, the levels the short
// blocks resolve and the long ones do not, the plateaus of the power after
// I/O, sorted highest first, the doublets merged; onto maps a level inside
// a merged doublet onto it.
func (nm *naming) gather(l *levelLearner, hdr capture.Header) (onto func(float64) float64) {
	long := &l.scales[0]
	all := nm.f.all
	from := make([]string, len(all))
	// Levels the short blocks resolve and the long ones do not have: held
	// for tens of ms at a time (a Partial between I/O and Slumber).
	sf := l.fitScale(&l.scales[1], hdr)
	for _, m := range sf.all {
		if nearest(all, m.x, 3*sf.h) < 0 {
			k := float64(long.per) / float64(l.scales[1].per)
			m.n /= k
			for c := range m.byCtx {
				m.byCtx[c] /= k
			}
			all = append(all, m)
			from = append(from, fmt.Sprintf(" (%.0f ms blocks)", sf.blockS*1e3))
		}
	}
	// Plateaus of the power after I/O the blocks do not resolve.
	// (Within two block σ of a level, or of the step the readings are
	// resolved to: noise-free quantised readings have a block σ of 0.)
	tol := 2 * math.Max(nm.f.sb, 0.5*l.stepW(hdr))
	for _, c := range []learnCtx{ctxLPM, ctxMedium, ctxMinPower} {
		for _, pl := range l.post[c].plateaus(c) {
			if nearest(all, pl.w, tol) >= 0 {
				continue
			}
			m := mode{x: pl.w, n: (pl.to - pl.from) / 1e3 * float64(pl.stretches) / nm.blockS}
			m.byCtx[c] = m.n
			all = append(all, m)
			from = append(from, fmt.Sprintf(" (the power after I/O under %s: held from %.0f to %.0f ms after it, over %d stretches)", ctxNames[c], pl.from, pl.to, pl.stretches))
		}
	}
	ix := make([]int, len(all))
	for i := range ix {
		ix[i] = i
	}
	sort.SliceStable(ix, func(a, b int) bool { return all[ix[a]].x > all[ix[b]].x })
	sorted, sfrom := make([]mode, len(all)), make([]string, len(all))
	for i, j := range ix {
		sorted[i], sfrom[i] = all[j], from[j]
	}
	step := long.telegraphStep()
	nm.one = newOneLevel(long, nm.f.h, nm.f.minN)
	nm.all, nm.from, onto, nm.stepW = mergeDoublets(sorted, sfrom, step, nm.one, nm.f.corr)
	var alike func(float64) float64
	nm.all, nm.from, alike = mergeAlike(nm.all, nm.from)
	doublet := onto
	onto = func(x float64) float64 { return alike(doublet(x)) }
	nm.stepW = math.Max(nm.stepW, step)
	nm.named = make([]string, len(nm.all))
	return onto
}

// alikeRel is how close, relative to the higher, two modes stand that are
// one level whatever their fit's resolution: no link state of a drive
// lies within 0.5 % of another (an HDD's Partial, the closest, is 1–5 %
// below its idle).
const alikeRel = 0.005

// mergeAlike merges neighbouring modes (sorted, highest first) within
// alikeRel of each other into one, time-weighted: the mixture resolves
// two components a fraction of a block σ apart when the data hold them
// — a mains hum subtracted a little differently in two quiet stretches
// left idle at 301.50 and 301.46 mW (0.013 %), named idle and Partial,
// and 10.6 points of idle were read as Partial (independent generator,
// seed 19 drive 78). After the doublets' merge, which learns the meter's
// level steps from such pairs (merged first, a telegraph's halves 0.25 %
// apart lost the step: campaign seed 27 drive 136, 2.4 points of idle
// read as background). The merged mode keeps the description of the one
// held longer; onto maps a merged mode's level onto the merge.
func mergeAlike(ms []mode, from []string) ([]mode, []string, func(float64) float64) {
	var out []mode
	var of []string
	type span struct{ lo, hi, x float64 }
	var spans []span
	for i, m := range ms {
		if k := len(out) - 1; k >= 0 && out[k].x-m.x <= alikeRel*math.Abs(out[k].x) {
			a := &out[k]
			if m.n > a.n {
				of[k] = from[i]
			}
			hi := a.x
			if n := len(spans); n > 0 && spans[n-1].x == a.x {
				hi = spans[n-1].hi
				spans = spans[:n-1]
			}
			if n := a.n + m.n; n > 0 {
				a.x = (a.x*a.n + m.x*m.n) / n
			}
			a.n += m.n
			for c := range a.byCtx {
				a.byCtx[c] += m.byCtx[c]
			}
			a.peak = math.Max(a.peak, m.peak)
			spans = append(spans, span{m.x, hi, a.x})
			continue
		}
		out, of = append(out, m), append(of, from[i])
	}
	onto := func(x float64) float64 {
		for _, s := range spans {
			if x >= s.lo && x <= s.hi {
				return s.x
			}
		}
		return x
	}
	return out, of, onto
}

// nameIdle names active idle — the lowest mode of quiet time under
// max_performance (mp), where the link never leaves active; else the
// highest level that is not background work — and the levels above it
// background. false when there is no level.
// idleOffMP: standard errors of the max_performance mode by which the
// mode named idle may stand off it before idle takes the max_performance
// mode's level (nameIdle).
const idleOffMP = 5

func (nm *naming) nameIdle(long *blockScale, mp mode, hasMP bool) bool {
	all := nm.all
	idle := -1
	if hasMP {
		idle = nearest(all, mp.x, math.Max(3*nm.f.h, 5*nm.se(mp.n)))
		if idle < 0 {
			all, idle = nm.insertMode(all, mp)
		}
		nm.ev["idle"] = "the quiet time under max_performance (the link stays active)"
	} else if len(all) > 0 {
		// The highest level that is not background work: background is
		// entered from a lower level without I/O and left back to it; the
		// link is entered at the end of I/O, or from above.
		up, down, starts := make([]float64, len(all)), make([]float64, len(all)), make([]float64, len(all))
		for _, st := range long.steps {
			fi, ti := nearest(all, st.from, 0), nearest(all, st.to, 0)
			if fi == ti {
				continue
			}
			if all[ti].x > all[fi].x {
				up[ti]++
			} else {
				down[ti]++
			}
		}
		for _, b := range long.starts.bins {
			starts[nearest(all, b.sum/b.n, 0)] += b.n
		}
		idle = 0
		for idle+1 < len(all) && up[idle] >= 3 && up[idle] > 2*(down[idle]+starts[idle]) {
			idle++
		}
		nm.ev["idle"] = "the highest level of quiet time that is not background work (entered from below without I/O); no max_performance time recorded"
	}
	if hasMP && idle >= 0 && mp.x-all[idle].x > math.Max(idleOffMP*nm.se(mp.n), nm.f.h/2) && all[idle].n > 2*mp.n {
		// The mode over every context lies below the max_performance one
		// by more than its error and half a mode's width, and holds
		// mostly other time: a lower level (Partial under hum, 1.4 block
		// σ below idle, with most of the quiet time) the fit could not
		// part from idle pulled it down. (A quantised drive's two modes
		// stand a few µW and many standard errors apart, and are the same
		// time: parted, they named Partial at idle — 73 checks worse on
		// seeds 22–33.) Idle is the max_performance
		// mode, and that mode is left to be named as the level it mostly
		// is: named idle, Partial went unlearned, idle's band reached down
		// to DevSlp and active idle read the Partial level (held-out
		// campaign seed 31 drive 1; TestIdleFromMaxPerformanceWhenPartialMerges).
		nm.ev["idle"] += fmt.Sprintf("; its level from max_performance time alone (%.4g W: the mode over every context, %.4g W, holds a lower level)", mp.x, all[idle].x)
		nm.idleMP = true
		all, idle = nm.insertMode(all, mp)
	}
	if hasMP && idle >= 0 && !nm.idleMP {
		var merged bool
		if all, idle, merged = nm.idlePieces(all, idle); merged {
			mp.x = all[idle].x
		}
	}
	nm.all = all
	if idle < 0 {
		return false
	}
	nm.idle = idle
	nm.lv.Idle = units.Watts(all[idle].x)
	if hasMP && math.Abs(all[idle].x-mp.x) > idleOffMP*nm.se(mp.n) {
		// The mode over every context is pulled off the max_performance
		// one by a level the fit could not part from it — Partial 1.4
		// block σ below idle under hum, 18.6 s of LPM time against 3.8 s
		// of max_performance: idle read 71.7 mW for 81.6, and no quiet
		// time was found at it (held-out campaign seed 31 drive 1). Under
		// max_performance the link stays active: that mode is idle's.
		nm.lv.Idle = units.Watts(mp.x)
		nm.ev["idle"] += fmt.Sprintf("; its level from max_performance time alone (%.4g W: the mode over every context, %.4g W, holds another level)", mp.x, all[idle].x)
	}
	nm.named[idle] = "idle"
	for i := range idle {
		nm.named[i] = "background"
	}
	return true
}

// idlePieces merges into the idle mode all[idle] its neighbours held
// mostly under max_performance, where the link stays active, within the
// width of active idle's blocks of it: pieces of idle the meter's level
// steps split (a telegraph's halves, 70.1 and 75.3 mW for a 72.7 mW idle,
// both of max_performance time: the lower named idle, the upper
// background, and idle's band, mirrored about the lower half, read half
// of idle's time as background; TestStepsSplitLevelsNamedOnce). The
// merged mode is at their time-weighted level; merged is false when idle
// has no such neighbour.
func (nm *naming) idlePieces(all []mode, idle int) (_ []mode, _ int, merged bool) {
	if nm.one == nil {
		return all, idle, false
	}
	near := func(i int) bool {
		return i >= 0 && i < len(all) && heldUnderMP(all[i]) && math.Abs(all[i].x-all[idle].x) < nm.one.width
	}
	lo, hi := idle, idle
	for near(lo - 1) {
		lo--
	}
	for near(hi + 1) {
		hi++
	}
	if lo == hi {
		return all, idle, false
	}
	m := mode{}
	var sx float64
	for _, p := range all[lo : hi+1] {
		sx += p.x * p.n
		m.n += p.n
		m.peak = math.Max(m.peak, p.peak)
		for c := range m.byCtx {
			m.byCtx[c] += p.byCtx[c]
		}
	}
	m.x = sx / m.n
	from := fmt.Sprintf("%s (%d modes within %.3g W merged: held under max_performance, pieces of idle the meter's level steps split)", nm.from[idle], hi-lo+1, all[lo].x-all[hi].x)
	all = slices.Replace(all, lo, hi+1, m)
	nm.named = slices.Replace(nm.named, lo, hi+1, "")
	nm.from = slices.Replace(nm.from, lo, hi+1, from)
	return all, lo, true
}

// insertMode inserts m into all (highest first) at its place, before any
// mode of the same power, with an empty name and origin at the same index
// of nm.named and nm.from, and returns all and m's index. (Prepended and
// then sorted, all's order left named and from a place out: a level's
// evidence named another's blocks.)
func (nm *naming) insertMode(all []mode, m mode) ([]mode, int) {
	i := sort.Search(len(all), func(i int) bool { return all[i].x <= m.x })
	nm.named = slices.Insert(nm.named, i, "")
	nm.from = slices.Insert(nm.from, i, "")
	return slices.Insert(all, i, m), i
}

// nameBackground gives the classifier the lowest level of background work
// above active idle, when it lies clear of one level's spread: twice the
// spread of active idle's blocks (the meter's steps and slow noise, which
// a telegraph's upper half would be inside) and bgSigmas block σ.
func (nm *naming) nameBackground() {
	if nm.idle <= 0 || nm.lv.Idle <= 0 {
		return
	}
	bg := nm.all[nm.idle-1].x
	gap := bg - float64(nm.lv.Idle)
	need := bgSigmas * nm.f.sb
	if nm.one != nil {
		need = math.Max(need, 2*nm.one.width)
	}
	if gap <= need {
		return
	}
	nm.lv.Background = units.Watts(bg)
	nm.ev["background"] = fmt.Sprintf("the lowest level held above active idle without I/O (%.3g W above it; one level's blocks spread over %.3g W)", gap, need/2)
	// Idle's band mirrors the threshold to the next lower level about
	// idle; where that is within a few block σ of idle (a Partial 2.4 mW
	// under a 21.6 mW idle, 1 mW σ: the top 1.2 mW above idle, 2 points of
	// idle read as background, campaign seed 25 drive 118) the noise
	// carries idle over it, and the band ends half way to the background
	// level instead. Not where the mirror is resolved: an HDD's background
	// rises through intermediate power the nearer threshold counts
	// (moving it there lost 20 residency intervals in seeds 22–27).
	idle := float64(nm.lv.Idle)
	if x, ok := nextBelowIdle(nm.lv); ok && (idle-float64(x))/2 < idleTopSigmas*nm.f.sb {
		nm.lv.IdleTop = units.Watts((idle + bg) / 2)
	}
}

// idleTopSigmas: the mirrored top of idle's band within this many block σ
// of idle is not resolved (nameBackground).
const idleTopSigmas = 3

// bgSigmas is how many block σ a background level must lie above active
// idle to be one.
const bgSigmas = 8

// nameDevSlpAtPin names DevSlp: the level of DEVSLP-asserted time (dp),
// if it lies below the level the drive held just before an assertion (a
// drive that ignores the pin stays there; one already in the HBA's own
// DevSlp was there).
func (nm *naming) nameDevSlpAtPin(cycles []pinCycle, dp mode) {
	all, idle, se := nm.all, nm.idle, nm.se
	// Cycle by cycle: a drop from the level held just before the
	// assertion to the level under the pin, beyond both means' errors.
	// Cycle by cycle, the level the drive rested at before the
	// assertion: the median of the 10 ms means before it that lie
	// nearest a level below active idle (at least 3 of them; else
	// those at idle) — a GC burst over most of the window, a wake, is
	// not where the drive rests. Against the median under the pin (1.2533 σ_b √(k/n) each),
	// in one cycle or pooled over all (weighted by 1/SE²: under a noise
	// that makes one cycle's drop uncertain, two are surer; a drive
	// that ignores the pin drops by nothing in any).
	var sw, swd float64
	var best, bestPre, bestAny float64
	var used int
	for _, cy := range cycles {
		if len(cy.pre) < 3 || len(cy.pin) < 3 {
			continue
		}
		var rest, atIdle []float64
		for _, x := range cy.pre {
			switch i := nearest(all, x, 0); {
			case i > idle:
				rest = append(rest, x)
			case i == idle:
				atIdle = append(atIdle, x)
			}
		}
		if len(rest) < 3 {
			rest = atIdle // a drive that rests at idle (no link power management)
		}
		if len(rest) < 3 {
			continue
		}
		pre, pin := stat.OrderQuantile(rest, 0.5), stat.OrderQuantile(cy.pin, 0.5)
		d := pre - pin
		// Each median may sit on either half of a level the steps split:
		// ±stepW/2 each, a variance of stepW²/2 in their difference (campaign
		// seed 13 drive 40, a drive that ignores the pin: one cycle "fell"
		// 12.7 standard errors, by one 0.72 mW step, pooled −4.8, and its
		// Slumber was named DevSlp).
		u := math.Hypot(1.2533*math.Hypot(se(float64(len(rest))), se(float64(len(cy.pin)))), nm.stepW/math.Sqrt2)
		if !(u > 0) {
			u = 1e-12
		}
		sw += 1 / (u * u)
		swd += d / (u * u)
		used++
		bestAny = math.Max(bestAny, d/u)
		if d > devslpRel*pre && d/u > best {
			best, bestPre = d/u, pre
		}
	}
	pooled, pooledD := 0.0, 0.0
	if sw > 0 {
		pooledD = swd / sw
		pooled = pooledD * math.Sqrt(sw)
	}
	if dp.x < float64(nm.lv.Idle) && (best >= devslpZ || (pooled >= devslpZ && pooledD > devslpRel*dp.x)) {
		// A floor under one LSB of a quantised meter reads 0 W, which
		// Levels takes for "no DevSlp": such a level is present, at
		// minLevelW (before, its drives' Slumber was named at the
		// floor and their real Slumber left unnamed: campaign 1:66).
		nm.lv.DevSlp = units.Watts(math.Max(dp.x, minLevelW))
		nm.ev["devslp"] = fmt.Sprintf("DEVSLP-asserted time: the power fell below the level held before the assertions (%.1f standard errors in one cycle, from %.3g W; %.1f pooled over the cycles)", best, bestPre, pooled)
	} else {
		// Why not: the report's note on the DevSlp residency quotes it
		// (devslpUnresolvedNote); a level named below replaces it.
		nm.ev["devslp"] = devslpNotNamed(dp.x, float64(nm.lv.Idle), bestAny, pooled, pooledD, used)
	}
	if nm.lv.DevSlp > 0 {
		// The HBA's own DevSlp outside the pin: levels at the pin's
		// (within the two means' errors), or below it.
		for i := idle + 1; i < len(all); i++ {
			if math.Abs(all[i].x-dp.x) <= devslpZ*math.Hypot(se(dp.n), se(all[i].n)) || all[i].x < dp.x {
				nm.named[i] = "devslp"
			}
		}
	}
}

// devslpNotNamed says why the level under the pin (x W) is not DevSlp:
// not below active idle, no cycle with a quiet stretch before and under
// the pin, or a drop not resolved (z the largest drop in one cycle in
// standard errors, pooled and pooledD the cycles' pooled drop in standard
// errors and in W, over n cycles).
func devslpNotNamed(x, idle, z, pooled, pooledD float64, n int) string {
	switch {
	case x >= idle:
		return fmt.Sprintf("not named: the DEVSLP-asserted level %.3g W is not below active idle", x)
	case n == 0:
		return fmt.Sprintf("not named: the DEVSLP-asserted level is %.3g W, but no cycle has 3 quiet blocks before and under the pin to compare", x)
	}
	return fmt.Sprintf("not named: under the DEVSLP pin the power (%.3g W) did not fall clearly below the level held before the assertions — %.1f standard errors at most in one cycle, %.1f pooled over %d cycles (%.3g W); DevSlp takes %.1f and a drop of %.0f %% of the level",
		x, z, pooled, n, pooledD, devslpZ, 100*devslpRel)
}

// nameHBADevSlp names DevSlp without a pin, or with the pin's drop not
// resolved (the meter's level steps widen every mean's error): the HBA's
// own DevSlp is a level below another, reached only under a policy that
// lets the HBA enter it.
func (nm *naming) nameHBADevSlp() {
	all := nm.all
	if n := len(all); n-nm.idle-1 >= 2 {
		i, j := n-1, n-2
		if m := all[i]; m.byCtx[ctxMinPower] >= 0.9*m.n && all[j].byCtx[ctxMinPower] < 0.9*all[j].n && m.x < 0.5*all[j].x {
			nm.lv.DevSlp = units.Watts(math.Max(m.x, minLevelW))
			nm.named[i] = "devslp"
			nm.ev["devslp"] = "a level below the others reached only under min_power (the HBA's own DevSlp)"
		}
	}
}

// heldUnderMP reports whether m's time is mostly max_performance time,
// when the link stays active: no Partial or Slumber is held there. Such
// a mode below idle is a piece of idle that the meter's level steps split
// off (a telegraph's lower half: 1.1 mW under a 30.0 mW idle, with 1.6 s
// of max_performance time and 9 ms of any other, was named Partial and
// took idle's and Partial's residency — held-out campaign seed 36 drive
// 193).
func heldUnderMP(m mode) bool { return m.byCtx[ctxMaxPerf] > 0.5*m.n }

// oneLevelEach keeps one mode of each run of rest (indices of nm.all,
// highest first) that is one level the meter's level steps split and the
// doublets' merge left in pieces, and returns the kept modes and the time
// each holds with its pieces. Two neighbours are pieces of one level when
// they stand closer than one level spreads — the fit's bandwidth, or the
// width of active idle's blocks (the meter's level steps and slow noise)
// — and hold alike time, the lesser at least telegraphHalves of the other
// (a telegraph's halves: 36 and 43 s; a Partial beside Slumber as close
// holds a few tenths of its time at most, seeds 22–33: 0.15, 0.03,
// 0.008). The one held longest is kept. (4.2684 and 4.2653 W, 3.1 mW
// apart under a 2.9 mW telegraph, idle's blocks 4.2 mW wide, were named
// Partial and Slumber: 27 points of Slumber read as Partial on held-out
// campaign seed 23 drive 66, once a max_performance mode no longer took
// the Partial name.)
func (nm *naming) oneLevelEach(rest []int) (kept []int, held []float64) {
	w := nm.f.h
	if nm.one != nil {
		w = math.Max(w, nm.one.width)
	}
	for _, i := range rest {
		if k := len(kept) - 1; k >= 0 {
			a, b := nm.all[kept[k]], nm.all[i]
			if a.x-b.x < w && min(a.n, b.n) >= telegraphHalves*max(a.n, b.n) {
				if b.n > a.n {
					kept[k] = i
				}
				held[k] += b.n
				continue
			}
		}
		kept, held = append(kept, i), append(held, nm.all[i].n)
	}
	return kept, held
}

// telegraphHalves: the least share of one mode's time its neighbour holds
// for the two to be a telegraph's halves of one level (oneLevelEach).
const telegraphHalves = 0.5

// nameRest names Partial and Slumber: the highest and the lowest of the
// levels left between idle and DevSlp that are not held under
// max_performance.
func (nm *naming) nameRest() {
	all, named, from, ev, lv := nm.all, nm.named, nm.from, nm.ev, &nm.lv
	var rest []int
	for i := nm.idle + 1; i < len(all); i++ {
		switch {
		case named[i] != "" || heldUnderMP(all[i]):
		case lv.DevSlp > 0 && math.Abs(all[i].x-float64(lv.DevSlp)) <= math.Max(devslpRel*float64(lv.DevSlp), devslpZ*nm.se(all[i].n)):
			// The HBA's own DevSlp under min_power, at the level the pin
			// gave — within the drop the pin's DevSlp must show, or the
			// mode's own error: DevSlp, not Slumber (0.159 mW beside a pin
			// DevSlp of 0.156, quantised readings 4.8 µW block σ: named
			// Slumber, and the 7.06 mW Slumber, 97 % of the run, named
			// Partial; held-out campaign seed 37 drive 88). Not within the
			// fit's bandwidth: under 2.8 mA of white noise a 2.06 mW
			// Slumber stands closer than that to a 0.65 mW DevSlp
			// (campaign seed 33 drive 77).
			named[i] = "devslp"
		default:
			rest = append(rest, i)
		}
	}
	rest, held := nm.oneLevelEach(rest)
	switch n := len(rest); {
	case n == 1:
		m := all[rest[0]]
		if m.byCtx[ctxMedium] >= 0.7*m.n {
			lv.Partial, named[rest[0]] = units.Watts(m.x), "partial"
			ev["partial"] = "the one level below active idle, held under medium_power (Partial only)" + from[rest[0]]
		} else {
			lv.Slumber, named[rest[0]] = units.Watts(math.Max(m.x, minLevelW)), "slumber"
			ev["slumber"] = "the one level between active idle and DevSlp" + from[rest[0]]
		}
	case n == 2:
		lv.Partial, named[rest[0]] = units.Watts(all[rest[0]].x), "partial"
		lv.Slumber, named[rest[1]] = units.Watts(math.Max(all[rest[1]].x, minLevelW)), "slumber"
		ev["partial"] = "the higher level between active idle and DevSlp" + from[rest[0]]
		ev["slumber"] = "the lower level between active idle and DevSlp" + from[rest[1]]
	case n > 2:
		// More levels than the link has between idle and DevSlp: the
		// meter's level steps split a level in two (a random telegraph), or
		// a DevSlp half was not named. Partial is the highest; Slumber the
		// one held longest of the others — the link rests in Slumber; the
		// lowest was a telegraph half of the DevSlp floor (campaign 1:120:
		// Slumber named at 3.3 mW, the true 27.6 mW left unnamed).
		lv.Partial, named[rest[0]] = units.Watts(all[rest[0]].x), "partial"
		k := 1
		for i := 2; i < n; i++ {
			if held[i] > held[k] {
				k = i
			}
		}
		k = rest[k]
		lv.Slumber, named[k] = units.Watts(math.Max(all[k].x, minLevelW)), "slumber"
		ev["partial"] = "the highest level between active idle and DevSlp" + from[rest[0]]
		ev["slumber"] = "the level held longest below Partial and above DevSlp" + from[k]
	}
}
