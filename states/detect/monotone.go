package detect

import (
	"math"
	"sort"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
)

// RisePenalty is the evidence, in units of σ² summed over samples (a
// log-likelihood ratio × 2 under Gaussian noise), a quiet stretch must hold
// before MonotoneLevels reads the link as rising in it without an event:
// 25, a 5 σ step. Deepening costs nothing.
const RisePenalty = 25.0

// MonotoneLevels relabels the level spans (idle, partial, slumber, devslp)
// of each quiet stretch so that the link only deepens within it, unless
// the power says otherwise beyond RisePenalty, and returns the corrected
// spans, touching spans of one state merged (spans is not changed).
//
// Between two events the host and the meter see — an I/O (an Active span),
// a DEVSLP deassertion, a hole in the data (spans that do not touch) or an
// Off span — a SATA link goes only deeper: the idle timers take it from
// idle to Partial to Slumber, the DEVSLP pin (or the HBA's timer) to
// DevSlp, and nothing takes it back up but a request, a wake on the pin or
// a power cycle. Background work (garbage collection, a wake spike) runs
// over the link state and leaves it where it was; background spans are
// kept as they are and do not end a stretch.
//
// The running median reads each span's state from the band its median
// lies in. With two levels a few mW apart under sensor noise of several
// mA (Slumber and DevSlp of an SSD) the median of even the longest window
// wanders over the threshold between them, and stretches of 50–250 ms of
// DevSlp are read as Slumber in the middle of a pin assertion, or a
// Slumber stretch after a GC burst as Partial. The span's own mean is
// better evidence than its median's band (all its samples, not a window's
// median against a threshold): each span gets the level that minimises
// Σ nⱼ (μ − mⱼ)² / σ² over the stretch, subject to the order, by dynamic
// programming over its spans; a rise costs RisePenalty. Span boundaries
// are the classifier's; only labels change, and neighbours that end up in
// one state are merged.
//
// sigma is the per-sample noise σ (W); 0 or less only merges touching
// spans of one state (the parts SplitAt made).
// pins are the DEVSLP changes (only deassertions end a stretch).
func MonotoneLevels(spans []Span, l Levels, sigma float64, pins []Pin) []Span {
	if sigma <= 0 {
		return MonotoneLevelsNoise(spans, l, nil, pins)
	}
	return MonotoneLevelsNoise(spans, l, WhiteMeanVar(sigma), pins)
}

// MeanVar is the variance (W²) of the noise of a mean of n consecutive
// samples: σ²/n for independent samples, more under correlated noise
// (hum, 1/f, an averaging ADC), where a span of a few ms holds a noise
// excursion, not a level.
type MeanVar func(n int) float64

// WhiteMeanVar is MeanVar of independent samples of σ sigma.
func WhiteMeanVar(sigma float64) MeanVar {
	return func(n int) float64 { return sigma * sigma / float64(max(n, 1)) }
}

// MonotoneLevelsNoise is MonotoneLevels with the noise of a span's mean
// given by mv (nil: only merge touching spans of one state). Under 50 Hz
// hum of 9 mW a running median follows each half-period: a DEVSLP
// assertion of 800 ms read as Slumber and DevSlp spans of 10 ms in turn,
// each 7 mW from its level — 80 σ² of evidence for a rise with σ²/n, about
// 1 with the variance of a 10 ms mean under that hum (campaign 1:49).
func MonotoneLevelsNoise(spans []Span, l Levels, mv MeanVar, pins []Pin) []Span {
	return MonotoneLevelsPossible(spans, l, mv, pins, nil)
}

// DevSlpPossible reports whether a drive may be in DevSlp at some time in
// [a, b). A SATA device enters DevSlp only while its DEVSLP signal is
// asserted — by the hub's pin or, under an ALPM policy that enables it, by
// the HBA — and leaves it when the signal is released (within its exit
// time); analysis answers from the capture's pin and policy events.
type DevSlpPossible func(a, b hostclock.Time) bool

// MonotoneLevelsPossible is MonotoneLevelsNoise where no span is labelled
// DevSlp where can says the drive cannot be in it (nil: anywhere): such a
// span takes the nearest of the other levels. Under level steps of ±1.8 mW
// a Slumber of 5 mW read as a DevSlp of 2.1 mW outside every assertion
// under medium_power, 6 of the run's 48 points of Slumber (campaign seed
// 14 drives 101 and 137).
func MonotoneLevelsPossible(spans []Span, l Levels, mv MeanVar, pins []Pin, can DevSlpPossible) []Span {
	return MonotoneLevelsReleased(spans, l, mv, pins, can, nil)
}

// MonotoneLevelsReleased is MonotoneLevelsPossible where the DEVSLP signal
// was also released at the times released, without a pin event: the HBA's
// own assertion ending as the ALPM policy left min_power. A stretch ends
// there as at a pin's release (the link may rise to Slumber).
func MonotoneLevelsReleased(spans []Span, l Levels, mv MeanVar, pins []Pin, can DevSlpPossible, released []hostclock.Time) []Span {
	forbid := func(Span) bool { return false }
	if can != nil {
		forbid = func(s Span) bool { return !can(s.Start, s.End) }
	}
	lv := l.ordered()
	if mv == nil || !(mv(1) > 0) || len(lv) < 2 || len(spans) == 0 {
		return MergeSame(noDevSlp(append([]Span(nil), spans...), lv, forbid))
	}
	depth := map[powerstate.State]int{}
	for i, x := range lv {
		depth[x.s] = i
	}
	deasserts := append([]hostclock.Time(nil), released...)
	for _, p := range pins {
		if !p.Asserted {
			deasserts = append(deasserts, p.At)
		}
	}
	sort.Slice(deasserts, func(a, b int) bool { return deasserts[a] < deasserts[b] })

	out := append([]Span(nil), spans...)
	lowBackground(out, l, mv)
	quiet := pinQuiet(pins)
	isLevel := func(s powerstate.State) bool { _, ok := depth[s]; return ok }
	// crosses: a deassertion lies between the midpoints of spans a and b.
	mid := func(s Span) hostclock.Time { return s.Start + (s.End-s.Start)/2 }
	crosses := func(a, b Span) bool {
		ma, mb := mid(a), mid(b)
		k := sort.Search(len(deasserts), func(k int) bool { return deasserts[k] > ma })
		return k < len(deasserts) && deasserts[k] <= mb
	}
	start := 0
	for start < len(out) {
		// A stretch: spans from start up to (not including) a boundary span.
		end := start
		for end < len(out) {
			s := out[end]
			if s.State == powerstate.Active || !(isLevel(s.State) || s.State == powerstate.Background) {
				break
			}
			if end > start && (out[end-1].End != s.Start || crosses(out[end-1], s)) {
				break
			}
			end++
		}
		if end > start {
			relabel(out[start:end], lv, depth, mv, forbid)
			parts := splitChanges(out[start:end], lv, depth, mv, quiet)
			if len(parts) != end-start {
				out = append(out[:start], append(parts, out[end:]...)...)
				end = start + len(parts)
			}
			start = end
		} else {
			start++
		}
	}
	return MergeSame(noDevSlp(out, lv, forbid))
}

// noDevSlp gives each DevSlp span forbid says no to the level of the others
// nearest its mean, in place.
func noDevSlp(st []Span, lv []level, forbid func(Span) bool) []Span {
	for i, s := range st {
		if s.State != powerstate.DevSlp || !forbid(s) {
			continue
		}
		best := math.Inf(1)
		for _, x := range lv {
			if d := math.Abs(float64(x.w - s.MeanW)); x.s != powerstate.DevSlp && d < best {
				best, st[i].State = d, x.s
			}
		}
	}
	return st
}

// lowBackgroundZ is how far (in standard deviations of its mean) a
// background span's mean must lie below the threshold into background for
// MonotoneLevels to read it as a level span.
const lowBackgroundZ = 5

// lowBackground gives a level state to each background span whose mean lies
// below the threshold into background by lowBackgroundZ or more: the band
// its mean lies in, which relabel then decides with the rest of its
// stretch. Background is power above the idle level's band; a span whose
// samples say otherwise is not. A pin edge SplitAt made inside a background
// span gives both parts the span's state, and the part after a GC burst
// that a DEVSLP assertion ended (the burst stops at DevSlp entry) holds the
// DevSlp floor: 0.1 s read as background per entry cycle of a drive with GC
// every 0.8 s (the campaign's 1:93, 0.7 pp).
func lowBackground(st []Span, l Levels, mv MeanVar) {
	th := l.compile()
	for i, s := range st {
		if s.State != powerstate.Background || !usable(s) {
			continue
		}
		m := float64(s.MeanW)
		if (th.activeAbove-m)/math.Sqrt(mv(s.Samples)) < lowBackgroundZ {
			continue
		}
		st[i].State = th.classify(m) // the band of its mean: the nearest level (midpoint thresholds)
	}
}

// pinQuietZ is splitZ for a split that would put DevSlp inside a span the
// DEVSLP pin was released over (pins recorded, none asserted): only the
// HBA's own DevSlp (ALPM min_power) enters there, and a 3 σ test over the
// hundreds of Slumber spans of a run placed DevSlp 0.1 s ahead of an
// assertion about once a run.
const pinQuietZ = 5

// pinQuiet reports, for a span, whether the pin is known released over all
// of it: pins were recorded, the last change before it was a release (or
// none, before the first assertion) and none lies inside it.
func pinQuiet(pins []Pin) func(Span) bool {
	if len(pins) == 0 {
		return func(Span) bool { return false }
	}
	ps := append([]Pin(nil), pins...)
	sort.Slice(ps, func(a, b int) bool { return ps[a].At < ps[b].At })
	return func(s Span) bool {
		k := sort.Search(len(ps), func(k int) bool { return ps[k].At > s.Start })
		if k > 0 && ps[k-1].Asserted {
			return false
		}
		return k == len(ps) || ps[k].At >= s.End
	}
}

// relabel runs the DP over one stretch, in place; a span forbid says yes
// to is not given DevSlp.
func relabel(st []Span, lv []level, depth map[powerstate.State]int, mv MeanVar, forbid func(Span) bool) {
	L := len(lv)
	var idx []int
	for i, s := range st {
		if _, ok := depth[s.State]; ok && usable(s) {
			idx = append(idx, i)
		}
	}
	if len(idx) < 2 {
		return
	}
	cost := make([]float64, L)
	next := make([]float64, L)
	from := make([][]int8, len(idx))
	for j, i := range idx {
		s := st[i]
		m, inv := float64(s.MeanW), 1/mv(s.Samples)
		from[j] = make([]int8, L)
		no := forbid(s)
		for d := range L {
			c := (float64(lv[d].w) - m) * (float64(lv[d].w) - m) * inv
			if no && lv[d].s == powerstate.DevSlp {
				c = math.Inf(1)
			}
			if j == 0 {
				next[d] = c
				continue
			}
			best, arg := math.Inf(1), 0
			for p := range L {
				v := cost[p]
				if d < p { // a rise
					v += RisePenalty
				}
				if v < best {
					best, arg = v, p
				}
			}
			next[d], from[j][d] = best+c, int8(arg)
		}
		cost, next = next, cost
	}
	d := 0
	for k := range L {
		if cost[k] < cost[d] {
			d = k
		}
	}
	for j := len(idx) - 1; j >= 0; j-- {
		st[idx[j]].State = lv[d].s
		if j > 0 {
			d = int(from[j][d])
		}
	}
}

// splitZ is how far (in standard deviations of its mean) a span's mean
// must lie from its level for MonotoneLevels to place a change inside it.
const splitZ = 3

// splitChanges places a change inside each level span whose mean lies
// between two adjacent levels, one of them its own, beyond splitZ from its
// own: a median held in one band by a coming GC burst, or by the noise,
// puts an edge late, and the span then holds both levels. The change from
// the shallower level a to the deeper b is put at the fraction
// f = (m − b)/(a − b) of the span's samples, the moment estimate of a
// single change with known levels (unbiased under noise); the parts carry
// the two levels, so the span's energy is kept. The link's order holds:
// the split is made only where the span before (in the stretch) is no
// deeper than a and the one after no shallower than b. Edges carve found
// in the samples are not moved.
func splitChanges(st []Span, lv []level, depth map[powerstate.State]int, mv MeanVar, quiet func(Span) bool) []Span {
	var lvIdx []int
	for i, s := range st {
		if _, ok := depth[s.State]; ok && usable(s) {
			lvIdx = append(lvIdx, i)
		}
	}
	var out []Span
	prevDepth := -1
	next := 0 // position in lvIdx
	for i, s := range st {
		if next < len(lvIdx) && lvIdx[next] == i {
			next++
			d := depth[s.State]
			nextDepth := len(lv)
			if next < len(lvIdx) {
				nextDepth = depth[st[lvIdx[next]].State]
			}
			m := float64(s.MeanW)
			z := (m - float64(lv[d].w)) / math.Sqrt(mv(s.Samples))
			a, b := -1, -1 // the bracketing levels, a shallower
			switch {
			case z >= splitZ && d > 0 && m < float64(lv[d-1].w): // above its level: the head is shallower
				a, b = d-1, d
			case z <= -splitZ && d+1 < len(lv) && m > float64(lv[d+1].w): // below: the tail is deeper
				a, b = d, d+1
			}
			if b >= 0 && lv[b].s == powerstate.DevSlp && z > -pinQuietZ && quiet(s) {
				a, b = -1, -1
			}
			var la, lb float64
			if a >= 0 {
				la, lb = float64(lv[a].w), float64(lv[b].w)
			}
			if a >= 0 && prevDepth <= a && nextDepth >= b && s.Samples >= 2 &&
				!(a == d-1 && s.ExactStart) && !(b == d+1 && s.ExactEnd) &&
				!contradicted(s, (m-lb)/(la-lb), lv[a].s, lv[b].s) {
				head, tail := cutAt(s, (m-lb)/(la-lb), la, lv[a].s, lv[b].s)
				out = append(out, head)
				s = tail
			}
			prevDepth = depth[s.State]
		}
		out = append(out, s)
	}
	return out
}

// contradicted reports whether the span's own samples refute a cut after
// the fraction f into a part at sa and the rest at sb: where most of its
// samples lie clearly inside a band (Span.Clear: the levels resolve per
// sample), the part at sa must hold at least half as many samples clearly
// at sa as it would take. A mean off its level by correlated noise (1/f,
// drift) passes the z test, which assumes white noise over the span: a
// DevSlp span of 8 000 samples 0.5 mW above its level under flicker noise
// was cut into 35 samples of Slumber at 0.111 W that no sample showed —
// the DevSlp entry 3.5 ms late (campaign 1:29).
func contradicted(s Span, f float64, sa, sb powerstate.State) bool {
	clear := 0
	for st, k := range s.Clear {
		if powerstate.State(st) != powerstate.Unknown {
			clear += int(k)
		}
	}
	if 2*clear < s.Samples {
		return false // the bands do not resolve per sample: the mean decides
	}
	n := cutSamples(s, f)
	if sa == s.State {
		n = s.Samples - n // the tail is the new part
		sa = sb
	}
	return 2*int(s.Clear[sa]) < n
}

// cutSamples is how many samples cutAt puts in the head.
func cutSamples(s Span, f float64) int {
	n := int(math.Round(math.Max(0, math.Min(1, f)) * float64(s.Samples)))
	return max(1, min(s.Samples-1, n))
}

// cutAt splits s (two samples or more) after the fraction f of its
// samples into a part at level la (state sa) and the rest (state sb),
// which keeps the span's energy.
func cutAt(s Span, f, la float64, sa, sb powerstate.State) (Span, Span) {
	n := cutSamples(s, f)
	at := s.Start + hostclock.Time(float64(s.End-s.Start)*float64(n)/float64(s.Samples))
	head, tail := s, s
	head.End, head.Samples, head.ExactEnd = at, n, false
	tail.Start, tail.Samples, tail.State, tail.ExactStart = at, s.Samples-n, sb, false
	// The head (at level la) takes the clear samples of its own state, as
	// many as it has samples, then unclear ones, then the tail's state's
	// (those it may hold: counted misplaced); the tail keeps the rest.
	var hc ClearCounts
	left := int32(n)
	for _, st := range []powerstate.State{sa, powerstate.Unknown, sb} {
		k := min(s.Clear[st], left)
		hc[st] += k
		left -= k
	}
	head.State, head.Clear = sa, hc
	tail.Clear.sub(hc)
	head.MeanW = units.Watts(la)
	tail.MeanW = units.Watts((float64(s.MeanW)*float64(s.Samples) - la*float64(n)) / float64(s.Samples-n))
	return head, tail
}

// usable: a span with samples and a finite mean (a broken reading makes
// its span's mean NaN; it keeps its label).
func usable(s Span) bool {
	return s.Samples > 0 && !math.IsNaN(float64(s.MeanW)) && !math.IsInf(float64(s.MeanW), 0)
}

// MergeSame joins touching spans of one state (in is not changed).
func MergeSame(in []Span) []Span {
	out := in[:0:0]
	for _, s := range in {
		if k := len(out) - 1; k >= 0 && out[k].State == s.State && out[k].End == s.Start {
			p := &out[k]
			n := p.Samples + s.Samples
			if n > 0 {
				p.MeanW = units.Watts((float64(p.MeanW)*float64(p.Samples) + float64(s.MeanW)*float64(s.Samples)) / float64(n))
			}
			p.Samples, p.End, p.ExactEnd = n, s.End, s.ExactEnd
			p.MinW, p.MaxW = min(p.MinW, s.MinW), max(p.MaxW, s.MaxW)
			p.Clear.add(s.Clear)
			continue
		}
		out = append(out, s)
	}
	return out
}
