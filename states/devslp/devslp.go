package devslp

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/internal/hostclock"
	"github.com/idlewatt/idlewatt/units"
)

// Options set the cycle's timing and pass criteria.
type Options struct {
	Cycles     int           // default 10
	Settle     time.Duration // idle before each assertion; default 1 s
	Hold       time.Duration // how long DEVSLP stays asserted; default 300 ms
	Return     time.Duration // time allowed to return to the pre-cycle level; default 500 ms
	EntryBound time.Duration // floor must be reached within this; default 100 ms
	Limit      units.Watts   // floor limit; default 5 mW
	MDAT       time.Duration // minimum assertion time; default 10 ms (ATA log 30h/08h default)
	DETO       time.Duration // exit timeout; default 20 ms (ATA default)
}

func (o *Options) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if o.Cycles == 0 {
		o.Cycles = 10
	}
	def(&o.Settle, time.Second)
	def(&o.Hold, 300*time.Millisecond)
	def(&o.Return, 500*time.Millisecond)
	def(&o.EntryBound, 100*time.Millisecond)
	def(&o.MDAT, 10*time.Millisecond)
	def(&o.DETO, 20*time.Millisecond)
	if o.Limit == 0 {
		o.Limit = 0.005
	}
}

// Validate reports options that cannot give a meaningful verdict.
func (o Options) Validate() error {
	o.defaults()
	switch {
	case o.Cycles < 1:
		return fmt.Errorf("devslp: cycles must be ≥ 1 (got %d)", o.Cycles)
	case o.Hold < o.MDAT:
		return fmt.Errorf("devslp: hold %v is shorter than MDAT %v", o.Hold, o.MDAT)
	case o.Limit < 0:
		return fmt.Errorf("devslp: limit must be positive")
	}
	return nil
}

// Rig is what Run needs from the measurement set-up for one drive.
type Rig interface {
	// SetDevSlp drives the pin and returns the host time it was commanded.
	SetDevSlp(ctx context.Context, asserted bool) (int64, error)
	// Probe reads one block from the drive; returns issue and completion host times.
	Probe(ctx context.Context) (issue, complete int64, err error)
	// Phase notes the start of a phase in the capture ("devslp-cycle:3").
	Phase(name string)
}

// Timing is what the host did in one cycle (host monotonic ns).
type Timing struct {
	Cycle         int
	Start         int64 // start of the settle period
	Assert        int64
	Deassert      int64
	ProbeIssue    int64
	ProbeComplete int64
	End           int64
	ProbeErr      string
}

// Run performs the cycles. It returns the timings of the cycles it finished;
// judge them with Evaluate once the power samples are at hand.
func Run(ctx context.Context, rig Rig, opt Options) ([]Timing, error) {
	opt.defaults()
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	var out []Timing
	for c := 1; c <= opt.Cycles; c++ {
		tm := Timing{Cycle: c, Start: hostclock.Now()}
		rig.Phase(fmt.Sprintf("devslp-cycle:%d", c))
		if err := sleep(ctx, opt.Settle); err != nil {
			return out, err
		}
		var err error
		if tm.Assert, err = rig.SetDevSlp(ctx, true); err != nil {
			return out, fmt.Errorf("cycle %d: assert DEVSLP: %w", c, err)
		}
		if err := sleep(ctx, opt.Hold); err != nil {
			_, _ = rig.SetDevSlp(context.Background(), false)
			return out, err
		}
		if tm.Deassert, err = rig.SetDevSlp(ctx, false); err != nil {
			return out, fmt.Errorf("cycle %d: deassert DEVSLP: %w", c, err)
		}
		tm.ProbeIssue, tm.ProbeComplete, err = rig.Probe(ctx)
		if err != nil {
			tm.ProbeErr = err.Error()
		}
		if err := sleep(ctx, opt.Return); err != nil {
			return out, err
		}
		tm.End = hostclock.Now()
		out = append(out, tm)
	}
	rig.Phase("devslp-end")
	return out, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Sample is one power reading on the host timeline.
type Sample struct {
	T int64   // host monotonic ns
	W float64 // watts, all rails of the drive
}

// Result is the verdict on one cycle.
type Result struct {
	Cycle      int           `json:"cycle"`
	BaselineW  float64       `json:"baseline_w"` // power before assertion (Slumber, if the policy allows)
	FloorW     float64       `json:"floor_w"`    // mean power over the second half of the hold
	MinW       float64       `json:"min_w"`      // lowest smoothed power while asserted
	Entry      time.Duration `json:"-"`
	EntryMs    float64       `json:"entry_ms"` // assert → floor reached
	Held       time.Duration `json:"-"`
	HeldMs     float64       `json:"held_ms"` // time at the floor while asserted
	Exit       time.Duration `json:"-"`
	ExitMs     float64       `json:"exit_ms"` // deassert → probe read completed
	ReturnedW  float64       `json:"returned_w"`
	Pass       bool          `json:"pass"`
	Failures   []string      `json:"failures,omitempty"`
	FloorAt    int64         `json:"-"` // host time the floor was reached (0 = never)
	ReturnedAt int64         `json:"-"`
}

// smoothWindow is the running-median width used to judge levels: wide enough
// to beat sensor noise at mW levels, short against the hold time.
const smoothWindow = 2 * time.Millisecond

// Evaluate judges one cycle from the samples that cover it (in time order,
// at least from Start to End of tm).
func Evaluate(tm Timing, samples []Sample, opt Options) Result {
	opt.defaults()
	r := Result{Cycle: tm.Cycle}
	fail := func(format string, a ...any) { r.Failures = append(r.Failures, fmt.Sprintf(format, a...)) }
	if len(samples) < 3 {
		fail("no power samples cover the cycle")
		return r
	}
	sm := smooth(samples, smoothWindow)

	// Baseline: the drive's resting level before assertion — the lowest
	// 20 ms median in the last 300 ms, so a background-GC burst just before
	// the pin (the drive's own doing) is not taken for its pre-cycle level.
	r.BaselineW = math.NaN()
	for from := tm.Assert - int64(300*time.Millisecond); from < tm.Assert; from += int64(20 * time.Millisecond) {
		if m := medianIn(samples, from, min(from+int64(20*time.Millisecond), tm.Assert)); !math.IsNaN(m) && !(m >= r.BaselineW) {
			r.BaselineW = m
		}
	}
	// Floor: the mean over the second half of the hold.
	mid := tm.Assert + (tm.Deassert-tm.Assert)/2
	r.FloorW = meanIn(samples, mid, tm.Deassert)
	r.MinW = math.Inf(1)
	for i, s := range samples {
		if s.T >= tm.Assert && s.T < tm.Deassert && sm[i] < r.MinW {
			r.MinW = sm[i]
		}
	}
	if math.IsInf(r.MinW, 1) || math.IsNaN(r.FloorW) || math.IsNaN(r.BaselineW) {
		fail("no power samples while DEVSLP was asserted")
		return r
	}

	// The floor is reached when the smoothed power first comes within 10 %
	// of the way from floor to baseline (and at least within 0.5 mW).
	band := math.Max(0.1*(r.BaselineW-r.FloorW), 0.0005)
	reachedFloor := r.FloorW < 0.5*r.BaselineW // fell clearly below the baseline at all
	if reachedFloor {
		for i, s := range samples {
			if s.T < tm.Assert || s.T >= tm.Deassert {
				continue
			}
			if sm[i] <= r.FloorW+band {
				if r.FloorAt == 0 {
					r.FloorAt = s.T
				}
			} else if r.FloorAt != 0 && s.T < mid {
				r.FloorAt = 0 // left the floor again before it settled
			}
		}
	}
	switch {
	case !reachedFloor:
		fail("power never fell below %.1f mW (baseline %.1f mW): the drive ignores DEVSLP",
			r.MinW*1e3, r.BaselineW*1e3)
	case r.FloorAt == 0:
		fail("power did not settle at a floor while DEVSLP was asserted")
	default:
		r.Entry = time.Duration(r.FloorAt - tm.Assert)
		r.Held = time.Duration(tm.Deassert - r.FloorAt)
		if r.Entry > opt.EntryBound {
			fail("floor reached %.1f ms after assertion, bound %.1f ms", ms(r.Entry), ms(opt.EntryBound))
		}
		if units.Watts(r.FloorW) > opt.Limit {
			fail("DevSlp floor %.2f mW is above the %.2f mW limit", r.FloorW*1e3, float64(opt.Limit)*1e3)
		}
		if r.Held < opt.MDAT {
			fail("held the floor %.1f ms, less than MDAT %.1f ms", ms(r.Held), ms(opt.MDAT))
		}
	}

	switch {
	case tm.ProbeErr != "":
		fail("the read after deassertion failed: %s", tm.ProbeErr)
	case tm.ProbeComplete == 0:
		fail("no read after deassertion")
	default:
		r.Exit = time.Duration(tm.ProbeComplete - tm.Deassert)
		late := time.Duration(tm.ProbeIssue - tm.Deassert)
		switch {
		case r.Exit <= opt.DETO:
		case tm.ProbeIssue != 0 && late > opt.DETO/2:
			// The host, not the drive, was slow: the read went out late.
			fail("the host issued the read %.1f ms after deassertion (overloaded host), too late to judge DETO %.1f ms", ms(late), ms(opt.DETO))
		default:
			fail("the drive answered %.1f ms after deassertion, DETO is %.1f ms", ms(r.Exit), ms(opt.DETO))
		}
	}

	// Back where it was: after the probe, the smoothed power returns to
	// within 20 % (or 1 mW) of the baseline and stays within the window.
	tol := math.Max(0.2*r.BaselineW, 0.001)
	if tm.ProbeComplete > 0 {
		for i, s := range samples {
			if s.T > tm.ProbeComplete && s.T <= tm.End && math.Abs(sm[i]-r.BaselineW) <= tol {
				r.ReturnedAt = s.T
				break
			}
		}
		r.ReturnedW = medianIn(samples, tm.End-int64(50*time.Millisecond), tm.End)
		if r.ReturnedAt == 0 {
			fail("did not return to the pre-cycle level (%.1f mW) within %v; ended at %.1f mW",
				r.BaselineW*1e3, opt.Return, r.ReturnedW*1e3)
		}
	}
	r.EntryMs, r.HeldMs, r.ExitMs = ms(r.Entry), ms(r.Held), ms(r.Exit)
	r.Pass = len(r.Failures) == 0
	return r
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// smooth returns the centred running median of samples over w.
func smooth(s []Sample, w time.Duration) []float64 {
	out := make([]float64, len(s))
	buf := make([]float64, 0, 64)
	lo, hi := 0, 0
	half := int64(w / 2)
	for i := range s {
		for lo < i && s[lo].T < s[i].T-half {
			lo++
		}
		for hi < len(s) && s[hi].T <= s[i].T+half {
			hi++
		}
		buf = buf[:0]
		for _, x := range s[lo:hi] {
			buf = append(buf, x.W)
		}
		sort.Float64s(buf)
		out[i] = buf[len(buf)/2]
	}
	return out
}

func medianIn(s []Sample, from, to int64) float64 {
	var v []float64
	for _, x := range s {
		if x.T >= from && x.T < to {
			v = append(v, x.W)
		}
	}
	if len(v) == 0 {
		return math.NaN()
	}
	sort.Float64s(v)
	return v[len(v)/2]
}

func meanIn(s []Sample, from, to int64) float64 {
	var sum float64
	n := 0
	for _, x := range s {
		if x.T >= from && x.T < to {
			sum += x.W
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// Verdict summarises the cycles.
type Verdict struct {
	Pass    bool     `json:"pass"`
	Cycles  []Result `json:"cycles"`
	Passed  int      `json:"passed"`
	Reason  string   `json:"reason,omitempty"` // the most common failure, for the one-line verdict
	FloorW  float64  `json:"floor_w"`          // median floor over the cycles
	EntryMs float64  `json:"entry_ms"`         // median entry latency
	ExitMs  float64  `json:"exit_ms"`          // median exit latency
}

// Summarise folds per-cycle results into a verdict: pass only if every cycle passed.
func Summarise(rs []Result) Verdict {
	v := Verdict{Cycles: rs, Pass: len(rs) > 0}
	count := map[string]int{}
	var floors, entries, exits []float64
	for _, r := range rs {
		if r.Pass {
			v.Passed++
		} else {
			v.Pass = false
			for _, f := range r.Failures {
				count[f[:strings.IndexAny(f+"0", "0123456789")]]++
			}
		}
		floors = append(floors, r.FloorW)
		if r.FloorAt != 0 {
			entries = append(entries, r.EntryMs)
		}
		if r.Exit > 0 {
			exits = append(exits, r.ExitMs)
		}
	}
	// Failure texts carry per-cycle numbers: count them by their wording up
	// to the first digit, and quote the first full text of the commonest.
	best := 0
	for _, r := range rs {
		for _, f := range r.Failures {
			key := f[:strings.IndexAny(f+"0", "0123456789")]
			if n := count[key]; n > best {
				best, v.Reason = n, f
			}
		}
	}
	if best > 0 && v.Passed < len(rs) {
		v.Reason = fmt.Sprintf("%s (%d of %d cycles failed)", v.Reason, len(rs)-v.Passed, len(rs))
	}
	if len(rs) == 0 {
		v.Reason = "no cycle completed"
	}
	v.FloorW, v.EntryMs, v.ExitMs = median(floors), median(entries), median(exits)
	return v
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// String is the one-line verdict.
func (v Verdict) String() string {
	if v.Pass {
		return fmt.Sprintf("PASS: %d/%d cycles; DevSlp floor %.2f mW, entry %.1f ms, exit %.1f ms",
			v.Passed, len(v.Cycles), v.FloorW*1e3, v.EntryMs, v.ExitMs)
	}
	return fmt.Sprintf("FAIL: %d/%d cycles passed; %s", v.Passed, len(v.Cycles), strings.TrimSpace(v.Reason))
}
