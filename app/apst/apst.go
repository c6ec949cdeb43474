package apst

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/idlewatt/idlewatt/analysis/judge"
	"github.com/idlewatt/idlewatt/app/emuhub"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
	"github.com/idlewatt/idlewatt/states/nvme"
	nvmesim "github.com/idlewatt/idlewatt/states/nvme/sim"
	"github.com/idlewatt/idlewatt/units"
)

// InputError is bad input to NewSetup or Verify; Field names what was bad
// ("profile", "tolerance", "quirk", "aspm", "expect_ps"), so a caller can
// name its own flag or key.
type InputError struct {
	Field string
	Err   error
}

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func inputErr(field, format string, a ...any) error {
	return &InputError{Field: field, Err: fmt.Errorf(format, a...)}
}

// Setup is one simulated drive under one host configuration.
type Setup struct {
	prof     nvmesim.Profile
	tol      nvme.Tolerance
	quirks   nvme.Quirks
	aspm     string // pcie_aspm policy: which link states the drive may use
	l1, l12  bool
	plan     nvme.KernelPlan
	entry    float64 // actual/declared latency
	exit     float64
	meter    nvmesim.MeterOptions
	linkIdle units.Watts   // the link's idle draw under the policy
	linkExit time.Duration // the link's exit under the policy
}

// NewSetup is the built-in profile under a latency tolerance (µs, auto or
// any), comma-separated kernel quirks (NO_APST, NO_DEEPEST_PS) and a
// pcie_aspm policy; the drive takes its declared latencies (scale 1) and
// the simulated meter nvmesim.DefaultMeter. Bad input is an *InputError.
func NewSetup(profile, tol, quirks, aspm string) (*Setup, error) {
	p, ok := nvmesim.ProfileByName(profile)
	if !ok {
		var names []string
		for _, q := range nvmesim.Profiles() {
			names = append(names, q.Name)
		}
		return nil, inputErr("profile", "no built-in NVMe profile %q (have %s)", profile, strings.Join(names, ", "))
	}
	s := &Setup{prof: p, entry: 1, exit: 1, meter: nvmesim.DefaultMeter()}
	var err error
	if s.tol, err = nvme.ParseTolerance(tol); err != nil {
		return nil, inputErr("tolerance", "%v", err)
	}
	for _, q := range strings.Split(quirks, ",") {
		switch strings.ToUpper(strings.TrimSpace(q)) {
		case "":
		case "NO_APST":
			s.quirks |= nvme.QuirkNoAPST
		case "NO_DEEPEST_PS":
			s.quirks |= nvme.QuirkNoDeepestPS
		default:
			return nil, inputErr("quirk", "unknown quirk %q (NO_APST, NO_DEEPEST_PS)", q)
		}
	}
	if s.aspm, err = nvme.ParseASPMPolicyName(aspm); err != nil {
		return nil, inputErr("aspm", "%v", err)
	}
	switch s.aspm {
	case "powersupersave", "default": // the simulated firmware leaves every link state on
		s.l1, s.l12, s.linkIdle, s.linkExit = true, true, 0, p.L12Exit
	case "powersave":
		s.l1, s.linkIdle, s.linkExit = true, p.LinkL1, p.L1Exit
	default:
		s.linkIdle = p.LinkL0
	}
	s.plan = nvme.PlanAPST(p.Identify, s.tol.Us, s.quirks, nvme.ModuleParams{})
	return s, nil
}

// drive is a fresh simulated drive programmed as the kernel would.
// SetLatencyScale makes the drive's actual entry and exit latencies these
// multiples of its declared ones (nvmesim.Drive.SetLatencyScale).
func (s *Setup) SetLatencyScale(entry, exit float64) { s.entry, s.exit = entry, exit }

// SetSeed seeds the meter's noise (and the emulated hub's).
func (s *Setup) SetSeed(seed uint64) { s.meter.Seed = seed }

func (s *Setup) drive() *nvmesim.Drive {
	d := nvmesim.New(s.prof)
	e := make([]nvme.APSTEntry, 32)
	copy(e, s.plan.Entries)
	d.SetAPST(0, s.plan.Enabled, e)
	d.SetASPM(0, s.l1, s.l12)
	d.SetLatencyScale(s.entry, s.exit)
	return d
}

// chain walks the host's table from PS0: when (after the last completion,
// declared entry latencies) the entry into ps begins (ok false if the
// table never enters it), and when the last step of the table ends.
func (s *Setup) chain(ps int) (enter time.Duration, ok bool, end time.Duration) {
	if !s.plan.Enabled {
		return 0, false, 0
	}
	seen := map[int]bool{0: true}
	at := time.Duration(0)
	for cur := 0; cur < len(s.plan.Entries); {
		e := s.plan.Entries[cur]
		if e.ITPTms == 0 || e.ITPS >= len(s.prof.Identify.PowerStates) || seen[e.ITPS] {
			break
		}
		start := at + time.Duration(e.ITPTms)*time.Millisecond
		if e.ITPS == ps {
			enter, ok = start, true
		}
		seen[e.ITPS] = true
		at = start + time.Duration(s.prof.Identify.PowerStates[e.ITPS].EntryLatencyUs)*time.Microsecond
		cur = e.ITPS
	}
	return enter, ok, at
}

// levels are the drive's idle levels under the link policy: the table's
// (non-operational states at their declared power, operational at the
// profile's idle power), each plus the link's idle draw.
func (s *Setup) levels() []nvme.Level {
	l := nvme.TableLevels(s.prof.Identify, s.prof.OperationalIdle)
	for i := range l {
		l[i].W += s.linkIdle
	}
	return l
}

// expectPS is the deepest non-operational state the kernel's quirks allow.
func (s *Setup) expectPS() int {
	best := -1
	for i, p := range s.prof.Identify.PowerStates {
		if p.NonOperational && (i >= len(s.plan.States) || !s.plan.States[i].ExcludedByQuirk) &&
			(best < 0 || p.MaxPower < s.prof.Identify.PowerStates[best].MaxPower) {
			best = i
		}
	}
	return best
}

// support is "yes", or "no: …" when the drive or the kernel's quirk rule
// APST out.
func (s *Setup) support() string {
	switch {
	case !s.prof.Identify.APSTA:
		return "no: APSTA clear, the controller does not support APST"
	case s.quirks&nvme.QuirkNoAPST != 0:
		return "no: the kernel's NO_APST quirk for this drive keeps APST off"
	}
	return "yes"
}

// VerifyResult is `apst verify --json`: the verdict, the host's setup
// and plan, and the meter it was measured with.
type VerifyResult struct {
	Schema  string            `json:"schema"`
	Profile string            `json:"profile"`
	Host    Host              `json:"host"`
	Verdict judge.APSTVerdict `json:"verdict"`
	Meter   Meter             `json:"meter"`
	Unnamed []units.Watts     `json:"unnamed_levels_w,omitempty"`
	Plan    nvme.KernelPlan   `json:"kernel_plan"`
}

// Host is the host configuration a verdict was measured under.
type Host struct {
	Tolerance string `json:"latency_tolerance"`
	Quirks    string `json:"quirks,omitempty"`
	ASPM      string `json:"aspm_policy"`
	Levels    string `json:"levels"`
}

// Meter describes the meter path: the simulated meter's period, noise σ
// and step, or the emulated hub.
type Meter struct {
	PeriodUs float64 `json:"period_us"`
	NoiseW   float64 `json:"noise_w"`
	LSBW     float64 `json:"lsb_w,omitempty"`
	// Hub: the emulated hub's 3.3 V rail through the hub driver (its
	// quantisation is the 20-bit LSB of the calibration), not the
	// simulated meter.
	Hub bool `json:"hub,omitempty"`
}

// VerifyOptions set up Verify.
type VerifyOptions struct {
	Cycles int // APST cycles, at least 1
	// ExpectPS is the non-operational state to expect; -1 for the
	// deepest the quirks leave.
	ExpectPS int
	// Learn learns the levels from the capture instead of the table.
	Learn bool
	// Hub measures on the emulated hub, in real time, instead of the
	// simulated meter.
	Hub bool
}

// Verify runs the cycles and judges them. A bad ExpectPS is an
// *InputError; the verdict's outcome is the result's, not an error.
func Verify(ctx context.Context, s *Setup, o VerifyOptions) (VerifyResult, error) {
	cycles, expect, learn, onHub := o.Cycles, o.ExpectPS, o.Learn, o.Hub
	res := VerifyResult{Schema: "idlewatt.apst-verify/1", Profile: s.prof.Name, Plan: s.plan,
		Host:  Host{Tolerance: s.tol.Raw, ASPM: s.aspm, Levels: "table"},
		Meter: Meter{PeriodUs: float64(s.meter.Period) / 1e3, NoiseW: float64(s.meter.NoiseW), LSBW: float64(s.meter.LSBW)}}
	if s.quirks != 0 {
		res.Host.Quirks = s.quirks.String()
	}
	if expect < 0 {
		expect = s.expectPS()
	}
	if expect < 0 || expect >= len(s.prof.Identify.PowerStates) || !s.prof.Identify.PowerStates[expect].NonOperational {
		return res, inputErr("expect_ps", "%d: %s has no such non-operational state", expect, s.prof.Name)
	}
	enter, entered, end := s.chain(expect)
	hold := end + 200*time.Millisecond
	const service = 100 * time.Microsecond
	var cyc []nvmesim.APSTCycle
	var samples []judge.Sample
	if onHub {
		a, err := openHub(ctx, s)
		if err != nil {
			return res, err
		}
		cyc, err = hubCycles(ctx, a, cycles, hold, service)
		samples = a.samples()
		if cerr := a.close(); err == nil {
			err = cerr
		}
		if err != nil {
			return res, fmt.Errorf("apst verify --hub: %w", err)
		}
		res.Meter = Meter{PeriodUs: 1e6 / HubRate, NoiseW: 20e-6 * 3.3, Hub: true}
	} else {
		sess := nvmesim.NewSession(s.drive(), s.meter, 0)
		cyc = sess.RunAPSTCycles(cycles, hold, service)
		samples = make([]judge.Sample, len(sess.Samples))
		for i, x := range sess.Samples {
			samples[i] = judge.Sample{T: hostclock.Time(x.At), W: float64(x.W)}
		}
	}
	cr := judge.APSTCriteria{ExpectPS: expect, Levels: s.levels(), LinkExitMs: units.Milliseconds(float64(s.linkExit) / 1e6)}
	if learn {
		// Learn from the samples with no read outstanding.
		var idle []units.Watts
		k := 0
		for _, c := range cyc {
			for ; k < len(samples) && samples[k].T < hostclock.Time(c.ProbeIssue); k++ {
				if samples[k].T > hostclock.Time(c.Idle) {
					idle = append(idle, units.Watts(samples[k].W))
				}
			}
		}
		lv, unnamed, err := nvme.LearnLevels(cr.Levels, idle)
		if err != nil {
			return res, fmt.Errorf("apst verify: learning levels: %w", err)
		}
		cr.Levels, res.Unnamed, res.Host.Levels = lv, unnamed, "learned"
	}
	var out []judge.APSTCycle
	for _, c := range cyc {
		tm := judge.APSTTiming{Cycle: c.Cycle, Idle: hostclock.Time(c.Idle), ProbeIssue: hostclock.Time(c.ProbeIssue), ProbeComplete: hostclock.Time(c.ProbeComplete),
			WarmMs: units.Milliseconds(float64(c.WarmComplete-c.WarmIssue) / 1e6)}
		if entered {
			tm.EnterAt = hostclock.Time(c.Idle + enter)
		}
		a := searchSamples(samples, tm.Idle)
		b := searchSamples(samples, tm.ProbeIssue)
		out = append(out, judge.JudgeAPSTCycle(tm, samples[a:b], cr, judge.JudgeOptions{}))
	}
	hostPlan := ""
	switch {
	case !s.plan.Enabled:
		hostPlan = "the host leaves APST off (" + s.plan.Off + ")"
	case !entered:
		why := ""
		if expect < len(s.plan.States) {
			why = ": " + s.plan.States[expect].Reason
		}
		hostPlan = fmt.Sprintf("the host's APST table never enters PS%d%s", expect, why)
	}
	res.Verdict = judge.SummariseAPST(out, cr, s.support(), hostPlan)
	return res, nil
}

func searchSamples(s []judge.Sample, t hostclock.Time) int {
	lo, hi := 0, len(s)
	for lo < hi {
		m := (lo + hi) / 2
		if s[m].T < t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// IdleRow is one combination's idle power: recovered from the
// simulated meter's samples against the model's mean over the window.
type IdleRow struct {
	Profile   string  `json:"profile"`
	Tolerance string  `json:"latency_tolerance"`
	ASPM      string  `json:"aspm_policy"`
	Plan      string  `json:"apst_path"`
	MeanW     float64 `json:"mean_w"`
	U95W      float64 `json:"u95_w"`
	TruthW    float64 `json:"truth_w"`
	ErrorW    float64 `json:"error_w"`
	Samples   int     `json:"samples"`
}

// IdleSim settles each combination and measures its idle power: the mean
// of the samples with its batch-means uncertainty (analysis/judge), and
// the model's exact mean over the same window.
func IdleSim(s *Setup, settle, measure time.Duration) IdleRow {
	d := s.drive()
	sess := nvmesim.NewSession(d, s.meter, 0)
	sess.Idle(settle)
	from := sess.Now()
	n0 := len(sess.Samples)
	sess.Idle(measure)
	w := make([]float64, 0, len(sess.Samples)-n0)
	for _, x := range sess.Samples[n0:] {
		w = append(w, float64(x.W))
	}
	m := judge.MeanBatches(w, max(1, int(10*time.Millisecond/s.meter.Period)))
	truth := float64(d.MeanIdlePower(from, sess.Now()))
	return IdleRow{Profile: s.prof.Name, Tolerance: s.tol.Raw, ASPM: s.aspm, Plan: s.path(), MeanW: m.Mean, U95W: 1.96 * m.U,
		TruthW: truth, ErrorW: m.Mean - truth, Samples: m.N}
}

// path says where the host's APST table takes the drive.
func (s *Setup) path() string {
	if !s.plan.Enabled {
		return "APST off"
	}
	var steps []string
	seen := map[int]bool{0: true}
	for cur := 0; cur < len(s.plan.Entries); {
		e := s.plan.Entries[cur]
		if e.ITPTms == 0 || seen[e.ITPS] {
			break
		}
		steps = append(steps, fmt.Sprintf("PS%d after %d ms", e.ITPS, e.ITPTms))
		seen[e.ITPS], cur = true, e.ITPS
	}
	if len(steps) == 0 {
		return "no transition"
	}
	return strings.Join(steps, ", then ")
}

// `apst verify --hub` and `apst idle --hub`: the simulated NVMe drive on
// port 1's 3.3 V rail of an emulated protocol-3 hub, its power read by the
// hub driver over the pty (framing, LINK, packed 20-bit samples,
// calibration, quantisation), in real time. The host's reads go to the
// simulated drive directly: each completes when the model says (its
// wait plus the service time, on the emulator's clock), so I/O latencies
// are the drive's, without a kernel's or a scheduler's share.

// HubRate is the sample rate: the hub's fastest.
const HubRate = 10000

type emuHub struct {
	emu    *hubemu.Emulator
	h      *hub.Hub
	nv     *nvmesim.HubDrive
	chans  map[int]bool // channel indices of port 1
	cancel context.CancelFunc
	done   chan error

	mu   sync.Mutex
	w    map[uint64]float64 // per sample index: port 1's power so far
	seen map[uint64]int     // rails summed into w
	t0   time.Duration      // emulator time of sample 0
}

func (a *emuHub) Samples(b *meter.Block) error {
	if !a.chans[b.Channel] {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for k := range b.I {
		i := b.Start + uint64(k)
		a.w[i] += float64(b.V[k]) * float64(b.I[k])
		a.seen[i]++
	}
	return nil
}
func (a *emuHub) Gap(meter.Gap) error       { return nil }
func (a *emuHub) Mark(meter.MarkEcho) error { return nil }
func (a *emuHub) Event(meter.Event) error   { return nil }

// openHub starts the emulator with the setup's drive, opens it and
// starts streaming; the drive has been idle since the emulator started.
func openHub(ctx context.Context, s *Setup) (*emuHub, error) {
	nv := nvmesim.NewHubDriveWith(s.prof, nvmesim.HubOptions{Plan: s.plan, L1: s.l1, L12: s.l12,
		EntryScale: s.entry, ExitScale: s.exit, Noise: emuhub.NVMeNoise, Seed: s.meter.Seed})
	emu, err := emuhub.New(hubemu.Options{Seed: int64(s.meter.Seed)}, []meter.SimDrive{nv}) // port 1, 3.3 V rail
	if err != nil {
		return nil, fmt.Errorf("apst --hub: emulator: %w", err)
	}
	h, err := hub.Open(emu.Path(), hub.Options{})
	if err != nil {
		emu.Close()
		return nil, fmt.Errorf("apst --hub: %w", err)
	}
	a := &emuHub{emu: emu, h: h, nv: nv, chans: map[int]bool{}, w: map[uint64]float64{}, seen: map[uint64]int{}, done: make(chan error, 1)}
	for i, c := range h.Info().Channels {
		if c.Port == 1 {
			a.chans[i] = true
		}
	}
	sctx, cancel := context.WithCancel(ctx)
	a.cancel = cancel
	go func() { a.done <- h.Stream(sctx, meter.StreamConfig{Rate: HubRate}, a) }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if t, ok := emu.SampleTime(0); ok {
			a.t0 = t
			break
		}
		if time.Now().After(deadline) {
			a.close()
			return nil, fmt.Errorf("apst --hub: the emulated hub did not start streaming")
		}
		time.Sleep(time.Millisecond)
	}
	return a, nil
}

func (a *emuHub) close() error {
	a.cancel()
	err := <-a.done // nil after a cancel
	a.h.Close()
	a.emu.Close()
	return err
}

// now is the emulator's clock.
func (a *emuHub) now() time.Duration { return a.emu.EmuTime(hostclock.Now()) }

// sleepUntil waits until the emulator's clock reaches t.
func (a *emuHub) sleepUntil(ctx context.Context, t time.Duration) error {
	for {
		d := t - a.now()
		if d <= 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
}

// read issues a read at emulator time at (not before the drive's last
// event) and waits until it completes: its wait plus service. The
// completion is told to the drive at once, for its time: the emulator
// renders behind the host, and a completion told late would leave the
// samples drawn meanwhile busy (HubDrive keeps the state in force at each
// time, so an event ahead of the samples is drawn where it belongs).
func (a *emuHub) read(ctx context.Context, at, service time.Duration) (issue, complete time.Duration, err error) {
	issue = at
	complete = issue + a.nv.IO(issue) + service
	if err := a.nv.IODone(complete); err != nil {
		return issue, complete, err
	}
	return issue, complete, a.sleepUntil(ctx, complete)
}

// samples are the complete samples (every rail of port 1) so far, on the
// emulator's clock.
func (a *emuHub) samples() []judge.Sample {
	a.mu.Lock()
	defer a.mu.Unlock()
	var idx []uint64
	for i, n := range a.seen {
		if n == len(a.chans) {
			idx = append(idx, i)
		}
	}
	sort.Slice(idx, func(x, y int) bool { return idx[x] < idx[y] })
	out := make([]judge.Sample, len(idx))
	for k, i := range idx {
		out[k] = judge.Sample{T: hostclock.Time(a.t0 + time.Duration(i/HubRate*1e9+i%HubRate*1e9/HubRate)), W: a.w[i]}
	}
	return out
}

// hubCycles runs the verify cycles on the hub: a read, idle for hold,
// a probe read, a warm read at the probe's completion.
func hubCycles(ctx context.Context, a *emuHub, n int, hold, service time.Duration) ([]nvmesim.APSTCycle, error) {
	_, idle, err := a.read(ctx, a.now(), service)
	if err != nil {
		return nil, err
	}
	var out []nvmesim.APSTCycle
	for i := range n {
		c := nvmesim.APSTCycle{Cycle: i + 1, Idle: idle}
		if err := a.sleepUntil(ctx, idle+hold); err != nil {
			return out, err
		}
		if c.ProbeIssue, c.ProbeComplete, err = a.read(ctx, max(idle+hold, a.now()), service); err != nil {
			return out, err
		}
		if c.WarmIssue, c.WarmComplete, err = a.read(ctx, c.ProbeComplete, service); err != nil {
			return out, err
		}
		idle = c.WarmComplete
		out = append(out, c)
	}
	return out, a.waitSamples(ctx, idle)
}

// waitSamples waits until every sample up to emulator time t has arrived
// whole (a lost frame comes back by RESEND later than the live ones), at
// most 3 s; a sample still missing then is left out.
func (a *emuHub) waitSamples(ctx context.Context, t time.Duration) error {
	if err := a.sleepUntil(ctx, t+20*time.Millisecond); err != nil {
		return err
	}
	last := uint64(max(0, t-a.t0)) * HubRate / uint64(time.Second)
	deadline := time.Now().Add(3 * time.Second)
	for i := uint64(0); i <= last; {
		a.mu.Lock()
		for i <= last && a.seen[i] == len(a.chans) {
			i++
		}
		a.mu.Unlock()
		if i > last || time.Now().After(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

// IdleHub measures one combination's idle power on the hub.
func IdleHub(ctx context.Context, s *Setup, settle, measure time.Duration) (IdleRow, error) {
	a, err := openHub(ctx, s)
	if err != nil {
		return IdleRow{}, err
	}
	from := a.now() + settle
	to := from + measure
	err = a.waitSamples(ctx, to)
	all := a.samples()
	if cerr := a.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return IdleRow{}, err
	}
	var w []float64
	first, last := hostclock.Time(-1), hostclock.Time(0)
	for _, x := range all {
		if x.T >= hostclock.Time(from) && x.T < hostclock.Time(to) {
			w = append(w, x.W)
			if first < 0 {
				first = x.T
			}
			last = x.T
		}
	}
	if len(w) < 16 {
		return IdleRow{}, fmt.Errorf("apst idle --hub: %d samples in the window", len(w))
	}
	m := judge.MeanBatches(w, HubRate/100)
	// The model's mean over the samples' span (each sample is the draw at
	// its time, so the span is first … last + one period).
	truth := float64(a.nv.Drive().MeanIdlePower(time.Duration(first), time.Duration(last)+time.Second/HubRate))
	row := IdleRow{Profile: s.prof.Name, Tolerance: s.tol.Raw, ASPM: s.aspm, Plan: s.path(), MeanW: m.Mean, U95W: 1.96 * m.U,
		TruthW: truth, ErrorW: m.Mean - truth, Samples: m.N}
	return row, nil
}
