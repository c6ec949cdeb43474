package accuracy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/idlewatt/idlewatt/app/emuhub"
	"github.com/idlewatt/idlewatt/app/rig"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
	"github.com/idlewatt/idlewatt/states/drivesim"
)

// Schema is the value of Campaign.Schema (accuracy.json).
const Schema = "idlewatt.accuracy/v1"

// Phases are the lengths of one hub's run: idle under max_performance
// (when the hub's policy is another: the active-idle level), idle, a
// short PCMark-7-like workload, idle again, then DevSlp cycles under
// med_power_with_dipm.
type Phases struct {
	ActiveIdle    time.Duration `json:"active_idle_ns"`
	Idle          time.Duration `json:"idle_ns"`
	ActiveIdleMax time.Duration `json:"active_idle_max_ns"` // the active-idle phase runs on while an active idle is not resolved to ±0.5 %
	WorkloadScale float64       `json:"workload_scale"`     // pcmark7 "defender" bursts multiplier
	CompressIdle  time.Duration `json:"compress_idle_ns"`
	Cycles        int           `json:"devslp_cycles"`
	MaxCycles     int           `json:"devslp_max_cycles"` // more cycles while the entry is not resolved to EntryU95
	EntryU95      time.Duration `json:"devslp_entry_u95_ns"`
	EntryHold     time.Duration `json:"devslp_entry_hold_ns"` // the cycles after Cycles are entry cycles: at least this hold
	Settle        time.Duration `json:"devslp_settle_ns"`
	Hold          time.Duration `json:"devslp_hold_ns"`
	Return        time.Duration `json:"devslp_return_ns"`
}

// DefaultPhases is the campaign's run: ≈ 30 s per hub of four drives.
// The DevSlp holds add up to 8 s per drive, enough for the floor of a
// drive with 3 mA σ of noise to be known to ≈ 0.05 mW (1 σ). A drive whose
// entry the 4 cycles do not resolve to ±0.5 ms (a floor a few mW below
// Slumber under 2–3 mA σ) gets up to 192 (devslp.max_cycles), entry cycles
// that hold the pin 100 ms or as long as its noise needs
// (devslp.entry_hold), as a lab would run it. ±0.5 ms, not the goal's
// ±1 ms: a drive stopped at ±0.85 ms of a ±1 ms goal lies beyond it about
// once in 70, and a campaign stops 12–16 drives there (docs/analysis.md).
func DefaultPhases() Phases {
	return Phases{ActiveIdle: time.Second, ActiveIdleMax: 4 * time.Second, Idle: 2 * time.Second, WorkloadScale: 0.05, CompressIdle: 300 * time.Millisecond,
		Cycles: 4, MaxCycles: 192, EntryU95: 500 * time.Microsecond, EntryHold: 100 * time.Millisecond,
		Settle: 800 * time.Millisecond, Hold: 2 * time.Second, Return: 500 * time.Millisecond}
}

// ShortPhases is a quicker run for CI (≈ 12 s per hub).
func ShortPhases() Phases {
	return Phases{ActiveIdle: 500 * time.Millisecond, Idle: time.Second, WorkloadScale: 0.02, CompressIdle: 200 * time.Millisecond,
		Cycles: 2, MaxCycles: 2, Settle: 700 * time.Millisecond, Hold: 800 * time.Millisecond, Return: 400 * time.Millisecond}
}

// DevSlpLimitMW is the DevSlp floor limit the campaign verifies against.
const DevSlpLimitMW = 15

// Options is one campaign.
type Options struct {
	Drives   int    // drives 0 … Drives−1 (ignored with Replay)
	Seed     uint64 // the campaign's seed
	Replay   []int  // if set, only these drive indices, each alone on its port
	Out      string // directory; each hub's run goes to Out/runs/
	Parallel int    // hubs run at once; default 1
	Phases   Phases // zero: DefaultPhases
	Progress io.Writer
	// Overwrite lets each hub's run replace a previous one in Out/runs/
	// (see CheckOut).
	Overwrite bool
}

// ErrCannotStart wraps why a campaign cannot run at all (no pty).
var ErrCannotStart = errors.New("the campaign cannot start")

// DriveResult is one drive's outcome.
type DriveResult struct {
	Case Case   `json:"case"`
	Dir  string `json:"dir"` // the hub run's output directory
	// LSB5VA is the current LSB of the drive's 5 V channel as the capture
	// header states it (the hub's trimmed one).
	LSB5VA   float64   `json:"lsb_5v_a,omitempty"`
	Truth    *Truth    `json:"truth,omitempty"`
	Measured *Measured `json:"measured,omitempty"`
	Checks   []Check   `json:"checks,omitempty"`
	Verdict  string    `json:"verdict_outcome,omitempty"` // right, false PASS, false FAIL, inconclusive, wrong, missing
	Breaks   []string  `json:"breaks,omitempty"`          // goals this drive misses
	Error    string    `json:"error,omitempty"`           // the chain failed on this drive
}

// hubJob is the drives of one run.
type hubJob struct {
	name  string
	cases []Case
}

// Run plays the campaign and evaluates it.
func Run(ctx context.Context, o Options) (*Campaign, error) {
	if o.Parallel < 1 {
		o.Parallel = 1
	}
	if o.Phases == (Phases{}) {
		o.Phases = DefaultPhases()
	}
	if err := startCheck(); err != nil {
		return nil, err
	}
	jobs, err := plan(o)
	if err != nil {
		return nil, err
	}
	total := 0
	for _, j := range jobs {
		total += len(j.cases)
	}
	start := time.Now()
	results := make([][]DriveResult, len(jobs))
	var mu sync.Mutex
	done := 0
	next := make(chan int)
	var wg sync.WaitGroup
	for range o.Parallel {
		wg.Go(func() {
			for i := range next {
				r := runHub(ctx, o, jobs[i])
				if ctx.Err() != nil {
					// Interrupted mid-run: its drives were not measured
					// (their errors are the cancellation, not the chain's).
					continue
				}
				results[i] = r
				mu.Lock()
				done += len(jobs[i].cases)
				progress(o.Progress, done, total, start, jobs[i], results[i])
				mu.Unlock()
			}
		})
	}
feed:
	for i := range jobs {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	var all []DriveResult
	for _, r := range results {
		all = append(all, r...)
	}
	sort.Slice(all, func(a, b int) bool { return all[a].Case.Index < all[b].Case.Index })
	c := summariseCampaign(o, all, time.Since(start))
	if ctx.Err() != nil {
		return c, context.Cause(ctx)
	}
	return c, nil
}

// startCheck is canStart; tests replace it.
var startCheck = canStart

// canStart opens (and closes) an emulated hub: no pty, no campaign.
func canStart() error {
	e, err := emuhub.New(hubemu.Options{}, []meter.SimDrive{nil}) // one empty port
	if err != nil {
		return fmt.Errorf("%w: the drives run behind an emulated hub on a pseudo-terminal, and none could be opened: %v", ErrCannotStart, err)
	}
	return e.Close()
}

func plan(o Options) ([]hubJob, error) {
	var jobs []hubJob
	if len(o.Replay) > 0 {
		for _, i := range o.Replay {
			c := DrawCase(o.Seed, i)
			jobs = append(jobs, hubJob{name: fmt.Sprintf("replay-%d-%d", o.Seed, i), cases: []Case{c}})
		}
	} else {
		if o.Drives < 1 {
			return nil, fmt.Errorf("drives: %d, want at least 1", o.Drives)
		}
		for i := 0; i < o.Drives; i++ {
			c := DrawCase(o.Seed, i)
			if c.Hub >= len(jobs) {
				jobs = append(jobs, hubJob{name: fmt.Sprintf("hub-%04d", c.Hub)})
			}
			jobs[c.Hub].cases = append(jobs[c.Hub].cases, c)
		}
	}
	for _, j := range jobs {
		for _, c := range j.cases {
			if err := c.Profile.InSpace(); err != nil {
				// Draw must stay inside its own space; this is a bug, not input.
				return nil, fmt.Errorf("internal error: drawn drive %s: %w", c.Replay(), err)
			}
		}
	}
	return jobs, nil
}

// rigConfig is one hub's measurement set-up.
func rigConfig(j hubJob, ph Phases) rig.Config {
	c0 := j.cases[0]
	cfg := rig.Config{
		Meter:    rig.MeterConfig{Kind: "emulator", Rate: drivesim.SpaceRateHz},
		Emulator: c0.Meter.emulator(c0.EmulatorSeed),
		Policy:   c0.Policy,
		Workload: rig.WorkloadConfig{Trace: "pcmark7", App: "defender", Scale: ph.WorkloadScale,
			Timing: "compress-idle=" + ph.CompressIdle.String(), QD: 1, Seed: c0.WorkloadSeed},
		Idle: ph.Idle, ActiveIdle: ph.ActiveIdle, ActiveIdleMax: ph.ActiveIdleMax,
		// The limit sits 50 % above the space's highest floor (10 mW), so it
		// never decides a working drive's verdict: what is judged is whether
		// the drive is seen to enter, hold and leave DevSlp.
		DevSlp: rig.DevSlpConfig{Cycles: ph.Cycles, MaxCycles: ph.MaxCycles, EntryU95: ph.EntryU95, EntryHold: ph.EntryHold,
			Policy: "med_power_with_dipm", Settle: ph.Settle, Hold: ph.Hold, Return: ph.Return, LimitMW: DevSlpLimitMW},
	}
	// Blind: the model goes to the emulator only (DriveConfig.Sim); the
	// rig's configuration, the capture header and the analysis see a
	// drive named by its index with a profile name no profile has.
	for _, c := range j.cases {
		// A drive whose meter channel states its calibration (the drift
		// family): the hub states it in READ_ACCURACY, on both rails.
		if cal := c.Calibration; cal != nil {
			for _, r := range []meter.Rail{meter.Rail5V, meter.Rail12V} {
				cfg.Emulator.Accuracy = append(cfg.Emulator.Accuracy, hub.AccEntry{Port: uint8(c.Port), Rail: r,
					CurrentGainPPM: uint16(math.Round(cal.GainPct / 100 * 1e6)), CurrentOffsetNA: uint32(math.Round(cal.OffsetUA * 1e3))})
			}
		}
		p := c.Profile
		cfg.Drives = append(cfg.Drives, rig.DriveConfig{Name: fmt.Sprintf("drive %d", c.Index), Port: c.Port,
			Profile: HiddenProfile, Sim: &p, SizeBytes: 64 << 20})
	}
	return cfg
}

func runHub(ctx context.Context, o Options, j hubJob) []DriveResult {
	dir := filepath.Join(o.Out, "runs", j.name)
	out := make([]DriveResult, len(j.cases))
	for i, c := range j.cases {
		out[i] = DriveResult{Case: c, Dir: dir}
	}
	fail := func(err error) []DriveResult {
		for i := range out {
			if out[i].Error == "" {
				out[i].Error = err.Error()
			}
		}
		return out
	}
	cfg := rigConfig(j, o.Phases)
	cfg.Out.Overwrite = o.Overwrite
	res, err := runWithWatchdog(ctx, cfg, dir, o.Phases.budget())
	if res == nil {
		return fail(fmt.Errorf("run: %w", err))
	}
	if err != nil && res.Report == nil {
		return fail(fmt.Errorf("run: %w", err))
	}
	var runErr string
	if err != nil {
		runErr = fmt.Sprintf("run: %v", err)
	}
	rc, err := readRunClock(res.Capture, int64(res.EmuEpoch), res.EmuSample0)
	if err != nil {
		return fail(fmt.Errorf("truth reference: %w", err))
	}
	for i, c := range j.cases {
		r := &out[i]
		r.Error = runErr
		r.LSB5VA = rc.lsb5[c.Port]
		m, err := Extract(dir, c.Port)
		if err != nil {
			r.Error = strings.TrimPrefix(runErr+"; outputs: "+err.Error(), "; ") // the run's own error says why
			continue
		}
		gap := time.Duration(m.MergeGapMs * 1e6)
		t, err := driveTruth(rc, c.Port, filepath.Join(dir, fmt.Sprintf("truth-p%d.jsonl", c.Port)), c.Profile, gap)
		if err != nil {
			r.Error = fmt.Sprintf("truth: %v", err)
			continue
		}
		r.Truth, r.Measured = t, &m
		r.Checks = compare(t, &m)
		r.Verdict = verdictOutcome(t.Verdict, m.Verdict)
		r.Breaks = breaksOf(r.Checks, r.Verdict)
	}
	return out
}

// budget is how long a hub's run may take before the campaign gives up on
// it: ten times its phases, and at least two minutes.
func (ph Phases) budget() time.Duration {
	d := 2*ph.Idle + max(ph.ActiveIdle, ph.ActiveIdleMax) + 5*time.Second + time.Duration(max(ph.Cycles, ph.MaxCycles))*(ph.Settle+ph.Hold+ph.Return+300*time.Millisecond)
	return max(2*time.Minute, 10*d)
}

// runWithWatchdog is rig.Run, given up on after budget: a hung run (an
// emulator that does not close) costs its drives, not the campaign. The
// abandoned run's goroutines are left behind; the process ends soon after.
func runWithWatchdog(ctx context.Context, cfg rig.Config, dir string, budget time.Duration) (*rig.Result, error) {
	type out struct {
		res *rig.Result
		err error
	}
	ch := make(chan out, 1)
	go func() {
		res, err := rig.Run(ctx, cfg, dir, rig.Plan{Workload: true, DevSlp: true})
		ch <- out{res, err}
	}()
	t := time.NewTimer(budget)
	defer t.Stop()
	select {
	case r := <-ch:
		return r.res, r.err
	case <-t.C:
		return nil, fmt.Errorf("the run did not finish within %v (abandoned; what it recorded is in %s)", budget, dir)
	}
}

func progress(w io.Writer, done, total int, start time.Time, j hubJob, rs []DriveResult) {
	if w == nil {
		return
	}
	el := time.Since(start)
	eta := time.Duration(float64(el) / float64(done) * float64(total-done))
	bad := 0
	for _, r := range rs {
		if len(r.Breaks) > 0 || r.Error != "" {
			bad++
		}
	}
	fmt.Fprintf(w, "accuracy: drive %d/%d  %s (%s) done, %d of %d off goal  elapsed %s  ETA %s\n",
		done, total, j.name, j.cases[0].Policy, bad, len(rs), el.Round(time.Second), eta.Round(time.Second))
}

// machine describes where the campaign ran.
func machine() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%s, %d CPUs, %s, host %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), host)
}
