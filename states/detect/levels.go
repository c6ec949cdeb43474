package detect

import (
	"fmt"
	"math"

	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
)

// Levels are the steady power of each low state of one drive. A zero level
// means the drive has no such state (or it is not known); it then takes no
// part in classification.
type Levels struct {
	Idle    units.Watts `json:"idle_w"`
	Partial units.Watts `json:"partial_w"`
	Slumber units.Watts `json:"slumber_w"`
	DevSlp  units.Watts `json:"devslp_w"`
	// Off is the level below which the drive counts as powered off; zero
	// means the drive has no off state in this trace (noise around a DevSlp
	// floor of a few ADC counts dips below any small threshold).
	Off units.Watts `json:"off_w"`
	// Background is the lowest level of the drive's own work above idle
	// (GC, an HDD's background seeks) seen held without I/O; zero when none
	// was. Quiet power above the midpoint of idle and it is background, not
	// idle: an HDD's background work 10 % above its idle sat under the
	// 25 % cap and read as idle (campaign seed 27 drives 60–62: 2–7 points).
	Background units.Watts `json:"background_w,omitempty"`
	// IdleTop, when level learning sets it (above idle), is the top of
	// active idle's band: quiet power above it is background. Zero: from
	// the levels (see compile).
	IdleTop units.Watts `json:"idle_top_w,omitempty"`
}

// Validate checks that the known levels are ordered idle > partial >
// slumber > devslp.
func (l Levels) Validate() error {
	prev, prevName := math.Inf(1), ""
	for _, lv := range l.ordered() {
		if float64(lv.w) >= prev {
			return fmt.Errorf("levels: %s (%v) is not below %s", lv.s, lv.w, prevName)
		}
		prev, prevName = float64(lv.w), lv.s.String()
	}
	if len(l.ordered()) == 0 {
		return fmt.Errorf("levels: no level given")
	}
	if l.Background != 0 && !(l.Background > l.Idle && l.Idle > 0) {
		return fmt.Errorf("levels: background (%v) is not above idle (%v)", l.Background, l.Idle)
	}
	if l.IdleTop != 0 && !(l.IdleTop > l.Idle && l.Idle > 0) {
		return fmt.Errorf("levels: idle's band top (%v) is not above idle (%v)", l.IdleTop, l.Idle)
	}
	return nil
}

type level struct {
	s powerstate.State
	w units.Watts
}

// ordered returns the known levels, highest first.
func (l Levels) ordered() []level {
	out := make([]level, 0, 4)
	for _, lv := range []level{{powerstate.Idle, l.Idle}, {powerstate.Partial, l.Partial}, {powerstate.Slumber, l.Slumber}, {powerstate.DevSlp, l.DevSlp}} {
		if lv.w > 0 {
			out = append(out, lv)
		}
	}
	return out
}

// thresholds is the compiled form of Levels: a sample with smoothed power w
// is in the first state whose floor w is above.
type thresholds struct {
	activeAbove float64 // above this (without I/O) counts as active: GC, wake spikes
	offBelow    float64
	floor       []float64 // descending
	state       []powerstate.State
}

func (l Levels) compile() thresholds {
	lv := l.ordered()
	t := thresholds{offBelow: float64(l.Off)}
	if t.offBelow == 0 {
		t.offBelow = math.Inf(-1)
	}
	// Anything above the highest level's band (idle, when known) without
	// I/O is work the host did not ask for (background GC) or a wake spike.
	// The band's upper edge mirrors its lower one (the threshold to the next
	// lower level) about the level, so the idle level sits in the middle of
	// its band, capped at 25 % above it. An HDD's partial level is 95–99 %
	// of idle and its background work 5–30 % above: a fixed 25 % put nearly
	// all of that work under idle.
	if len(lv) > 0 {
		x := float64(lv[0].w)
		t.activeAbove = x * 1.25
		if len(lv) > 1 {
			t.activeAbove = math.Min(t.activeAbove, 2*x-(x+float64(lv[1].w))/2)
		}
		if bg := float64(l.Background); bg > x && lv[0].s == powerstate.Idle {
			t.activeAbove = math.Min(t.activeAbove, (x+bg)/2)
		}
		if top := float64(l.IdleTop); top > x && lv[0].s == powerstate.Idle {
			t.activeAbove = math.Min(x*1.25, top)
		}
	}
	// Adjacent levels are split at their arithmetic midpoint: the sensor
	// noise is additive, so the midpoint is as many σ from either level,
	// and a running median crosses it where a step between the two really
	// is (near an even mix the median is either level's noise tail; a
	// threshold nearer one level is crossed late, by up to a third of the
	// window at 1.4 mA σ — the geometric mean used before put a DevSlp floor
	// of 0.4 mW 1.4 mW from a 1.8 mW threshold, and each Slumber → DevSlp
	// edge 20 ms late).
	for i, x := range lv {
		var below float64
		if i+1 < len(lv) {
			below = (float64(x.w) + float64(lv[i+1].w)) / 2
		} else {
			below = t.offBelow
		}
		t.floor = append(t.floor, below)
		t.state = append(t.state, x.s)
	}
	return t
}

// Band returns the power band [lo, hi) a smoothed sample without I/O must
// fall in to be classified st (lo = −Inf or hi = +Inf when unbounded);
// ok is false for a state with no level (active, unknown, a state the
// levels lack).
func (l Levels) Band(st powerstate.State) (lo, hi float64, ok bool) {
	t := l.compile()
	if st == powerstate.Background {
		return t.activeAbove, math.Inf(1), len(t.state) > 0
	}
	up := t.activeAbove
	for i, s := range t.state {
		if s == st {
			return t.floor[i], up, true
		}
		up = t.floor[i]
	}
	if st == powerstate.Off && !math.IsInf(t.offBelow, -1) {
		return math.Inf(-1), t.offBelow, true
	}
	return 0, 0, false
}

// minGap is the smallest distance from a level to either threshold of its
// band: the boundary the noise crosses most easily.
func (t *thresholds) minGap(l Levels) float64 {
	lv := l.ordered()
	g := math.Inf(1)
	for i, x := range lv {
		w := float64(x.w)
		up := t.activeAbove
		if i > 0 {
			up = t.floor[i-1]
		}
		if d := up - w; d > 0 {
			g = math.Min(g, d)
		}
		if f := t.floor[i]; !math.IsInf(f, -1) {
			if d := w - f; d > 0 {
				g = math.Min(g, d)
			}
		}
	}
	return g
}

// bandMemo remembers the band of the last power classified: a quantised
// or noise-free meter repeats a reading for long runs.
type bandMemo struct {
	w  float64
	s  powerstate.State
	ok bool
}

// classify is t.classify(w). A w equal to the last (±0 alike: classify
// compares only) has its band; NaN never equals.
func (m *bandMemo) classify(t *thresholds, w float64) powerstate.State {
	if !m.ok || w != m.w {
		m.w, m.s, m.ok = w, t.classify(w), true
	}
	return m.s
}

func (t *thresholds) classify(w float64) powerstate.State {
	if w > t.activeAbove {
		return powerstate.Background
	}
	for i, f := range t.floor {
		if w >= f {
			return t.state[i]
		}
	}
	return powerstate.Off
}
