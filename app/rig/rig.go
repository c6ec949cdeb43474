package rig

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/capture/record"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/registry"
	"github.com/idlewatt/idlewatt/report"
	"github.com/idlewatt/idlewatt/states/alpm"
	"github.com/idlewatt/idlewatt/states/drivesim"
	"github.com/idlewatt/idlewatt/units"
	"github.com/idlewatt/idlewatt/workload/replay"
)

// CaptureFile is the capture's name in the output directory.
const CaptureFile = "capture.iwcap"

// runFixed and runPattern are the names a run writes into its directory.
var (
	runFixed   = append([]string{CaptureFile, report.FileMeasure, report.FileIdleRun}, report.Files...)
	runPattern = regexp.MustCompile(`^(truth-p[0-9]+\.jsonl|devslp-p[0-9]+\.png|drive-p[0-9]+\.img)$`)
)

// RunWrites reports whether a run (measure, demo, idle, devslp verify)
// may write a file of this name into its directory.
func RunWrites(name string) bool {
	return slices.Contains(runFixed, name) || runPattern.MatchString(name)
}

// Rig is an open measurement set-up that is recording.
type Rig struct {
	cfg     Config
	out     string
	log     io.Writer
	capPath string

	setup   setup // emulated or real
	meter   meter.Meter
	rec     *record.Recorder
	live    *liveDevSlp // nil unless devslp.max_cycles or active_idle_max asks for more
	guard   *alpm.Guard
	release func() []alpm.HostResult
	drives  []*Drive

	streamCtx    context.Context
	streamCancel context.CancelFunc
	wg           sync.WaitGroup // the set-up's watch

	mu    sync.Mutex
	phase string
	notes []string
	// unrecorded are the notes the capture could not hold (see note).
	unrecorded []string
	// policyProblems are policies that could not be applied: a host cause
	// for any DevSlp result but a pass.
	policyProblems []string
}

// Drive is one configured drive while the rig runs.
type Drive struct {
	Config  DriveConfig
	Profile *drivesim.Profile // known profile, if any
	// sim is the simulated drive (emulator): the known profile, or
	// DriveConfig.Sim, which is not known to anything but the emulator and
	// what the simulated drive reports to the host.
	sim    *drivesim.Profile
	target driveTarget // nil: none configured (a real drive without drives[].target)
}

// Open sets everything up and starts recording into out/capture.iwcap.
// ctx bounds the whole measurement; cancelling it stops the recording
// (Close must still be called).
func Open(ctx context.Context, cfg Config, out string, log io.Writer) (r *Rig, err error) {
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := outfile.RunDir(out, cfg.Out); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	r = &Rig{cfg: cfg, out: out, log: log, capPath: filepath.Join(out, CaptureFile), setup: newSetup(cfg)}
	r.cfg.Out.Inputs = append(r.cfg.Out.Inputs[:len(r.cfg.Out.Inputs):len(r.cfg.Out.Inputs)], cfg.inputs()...)
	// With --overwrite the run directory may hold an input (the config, a
	// trace) under a name the run writes: refuse now, not after the whole
	// measurement when the report is written.
	for _, in := range r.cfg.Out.Inputs {
		if in == "" || in == "-" || !RunWrites(filepath.Base(in)) {
			continue
		}
		if err := outfile.Check(filepath.Join(out, filepath.Base(in)), r.cfg.Out); err != nil {
			return nil, fmt.Errorf("output directory: %w", err)
		}
	}
	defer func() {
		if err != nil {
			r.teardown()
		}
	}()
	if err := r.openDrives(); err != nil {
		return r, err
	}
	if err := r.openMeter(); err != nil {
		return r, err
	}
	if err := r.applyPolicy(ctx); err != nil {
		return r, err
	}
	if err := r.startRecording(ctx); err != nil {
		return r, err
	}
	return r, nil
}

func (r *Rig) logf(format string, a ...any) {
	if r.log != nil {
		fmt.Fprintf(r.log, format+"\n", a...)
	}
}

func (r *Rig) openDrives() error {
	for _, dc := range r.cfg.Drives {
		d := &Drive{Config: dc}
		switch {
		case dc.Sim != nil:
			p := *dc.Sim
			d.sim = &p
		case dc.Profile != "":
			p, err := drivesim.Lookup(dc.Profile, r.cfg.Profiles)
			if err != nil {
				return err
			}
			d.Profile, d.sim = &p, &p
		}
		r.drives = append(r.drives, d)
	}
	return r.setup.open(r)
}

func (r *Rig) driveOn(port int) *Drive {
	for _, d := range r.drives {
		if d.Config.Port == port {
			return d
		}
	}
	return nil
}

func (r *Rig) openMeter() error {
	kind, path := r.setup.meter(r)
	m, err := registry.OpenLive(kind, path, r.cfg.Meter.Settings)
	if err != nil {
		return fmt.Errorf("meter: %w", err)
	}
	r.meter = m
	return r.setup.openTargets(r)
}

func (r *Rig) applyPolicy(ctx context.Context) error {
	if r.cfg.Policy == "" {
		return nil
	}
	return r.SetPolicy(ctx, r.cfg.Policy)
}

// SetPolicy writes an ALPM policy to the drives' hosts. The first call saves
// the policies in force so Close (or a signal) restores them.
func (r *Rig) SetPolicy(ctx context.Context, policy string) error {
	var hosts []string
	for _, d := range r.drives {
		if d.Config.Host != "" {
			hosts = append(hosts, d.Config.Host)
		}
	}
	if len(hosts) == 0 {
		// No drive names its host: the policy goes to every SATA host, as
		// powertop and TLP do.
		all, err := alpm.Open(r.cfg.SysfsRoot).PolicyHosts()
		if err != nil || len(all) == 0 {
			r.note("policy %s not applied: no SATA host found under %s (%v)", policy, r.cfg.SysfsRoot, err)
			r.policyProblem(fmt.Sprintf("ALPM policy %s not applied: no SATA host found under %s", policy, r.cfg.SysfsRoot))
			return nil
		}
		hosts = all
	}
	// The policy's time: a kernel applies each host's file as it is
	// written (the emulator's watcher follows the files too), and a stamp
	// taken after the writes return lags them by whatever held this
	// process up in between — 0.38 s on a loaded machine (held-out campaign
	// seed 44: three drives' Partial read as max_performance time, their
	// active idle 15–21 % low). The analysis takes max_performance time to
	// hold no link power state, so that time is stamped inside the writes:
	// a change to max_performance once they have returned, any other
	// policy before they begin.
	before := hostclock.Now()
	var res []alpm.HostResult
	if r.guard == nil {
		g, hr, err := alpm.ApplyPolicy(r.cfg.SysfsRoot, hosts, policy)
		if err != nil {
			return fmt.Errorf("policy: %w", err)
		}
		r.guard, r.release, res = g, g.RestoreOnExit(ctx), hr
	} else {
		p, err := alpm.ParseWritablePolicy(policy)
		if err != nil {
			return fmt.Errorf("policy: %w", err)
		}
		if res, err = alpm.Open(r.cfg.SysfsRoot).SetPolicy(hosts, p); err != nil {
			return fmt.Errorf("policy: %w", err)
		}
	}
	for _, hr := range res {
		if hr.Err != nil {
			r.note("policy %s on %s: %v", policy, hr.Host, hr.Err)
			r.policyProblem(fmt.Sprintf("ALPM policy %s not applied on %s: %v", policy, hr.Host, hr.Err))
		}
	}
	if policyWritten != nil {
		policyWritten()
	}
	if r.rec != nil {
		at := before
		if policy == string(alpm.MaxPerformance) {
			at = hostclock.Now()
		}
		r.state(capture.StateEvent{Host: at, Kind: capture.StatePolicy, Value: policy})
	}
	return r.setup.policySet(r)
}

// policyWritten, when set (tests only), runs between a policy's writes and
// its event: a scheduler's delay there, on demand.
var policyWritten func()

func (r *Rig) policyProblem(s string) {
	r.mu.Lock()
	r.policyProblems = append(r.policyProblems, s)
	r.mu.Unlock()
}

// note is a run note: in measure.json, and in the report — through the
// capture (analysis.NoteRun) while it is being recorded, so a report of
// the capture has it too.
func (r *Rig) note(format string, a ...any) {
	s := fmt.Sprintf(format, a...)
	recorded := r.rec != nil && r.rec.State(capture.StateEvent{Host: hostclock.Now(), Kind: capture.StateNote, Value: analysis.NoteRun + s}) == nil
	r.mu.Lock()
	r.notes = append(r.notes, s)
	if !recorded {
		r.unrecorded = append(r.unrecorded, s)
	}
	r.mu.Unlock()
	r.logf("note: %s", s)
}

// unrecordedNotes are the run notes the capture does not hold (made before
// or after the recording).
func (r *Rig) unrecordedNotes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.unrecorded...)
}

func (r *Rig) startRecording(ctx context.Context) error {
	var ports []int
	for _, d := range r.drives {
		ports = append(ports, d.Config.Port)
	}
	cfgJSON, _ := json.Marshal(r.cfg)
	h := capture.Header{Config: cfgJSON, Tool: "idlewatt measure"}
	for _, d := range r.drives {
		di := capture.DriveInfo{Port: d.Config.Port, Name: d.Config.Name, Profile: d.Config.Profile, Target: d.Config.Target,
			Model: d.Config.Model, Firmware: d.Config.Firmware}
		if d.Config.NVMe != "" {
			di.Interface, di.Profile = capture.InterfaceNVMe, d.Config.NVMe
		}
		if d.target != nil {
			di.Target = d.target.label()
		}
		h.Drives = append(h.Drives, di)
	}
	r.streamCtx, r.streamCancel = context.WithCancel(ctx)
	obs := r.cfg.Observer
	if dc := r.cfg.DevSlp; dc.Cycles > 0 && dc.MaxCycles > dc.Cycles || r.cfg.ActiveIdleMax > r.cfg.ActiveIdle {
		r.live = newLiveDevSlp()
		obs = teeObserver(obs, r.live)
	}
	rec, err := record.Start(r.streamCtx, r.meter, record.Options{
		Path: r.capPath, Stream: meter.StreamConfig{Rate: units.Hertz(r.cfg.Meter.Rate), Ports: ports}, Header: h,
		Capture: capture.Options{Overwrite: r.cfg.Out.Overwrite, Inputs: r.cfg.Out.Inputs}, Observer: obs,
	})
	if err != nil {
		r.streamCancel()
	}
	switch {
	case errors.Is(err, record.ErrResolve), errors.Is(err, record.ErrNoChannels):
		return fmt.Errorf("meter.rate_hz / drives[].port: %w", err)
	case errors.Is(err, record.ErrNoRate):
		return fmt.Errorf("meter.rate_hz: %w", err)
	case err != nil:
		return fmt.Errorf("capture: %w", err)
	}
	r.rec = rec
	if r.cfg.Policy != "" {
		r.state(capture.StateEvent{Host: hostclock.Now(), Kind: capture.StatePolicy, Value: r.cfg.Policy})
	}
	for _, d := range r.drives {
		// What the user declared goes into the capture, so that a report
		// of it shows the figures as this run does.
		if e := d.Config.Expect; e.DevSlpMW > 0 || e.ActiveIdleW > 0 {
			r.state(capture.StateEvent{Host: hostclock.Now(), Port: d.Config.Port, Kind: capture.StateNote,
				Value: analysis.ExpectationNote(analysis.Expectation{DevSlpMW: units.Milliwatts(e.DevSlpMW), ActiveIdleW: units.Watts(e.ActiveIdleW)})})
		}
	}
	r.wg.Go(func() { r.setup.watch(r.streamCtx, r) })
	return nil
}

// Err reports a recording failure (meter lost, disk full) so far.
func (r *Rig) Err() error {
	select {
	case <-r.rec.Done():
		if err := r.rec.Err(); err != nil {
			return fmt.Errorf("recording stopped: %w", err)
		}
		if r.streamCtx.Err() == nil {
			return errors.New("recording stopped: the meter stream ended")
		}
	default:
	}
	return nil
}

// Phase marks the start of a phase in the capture.
func (r *Rig) Phase(name string) {
	r.mu.Lock()
	r.phase = name
	r.mu.Unlock()
	r.state(capture.StateEvent{Host: hostclock.Now(), Kind: capture.StatePhase, Value: name})
}

// CurrentPhase returns the phase being played.
func (r *Rig) CurrentPhase() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.phase
}

// Drives returns the configured drives.
func (r *Rig) Drives() []*Drive { return r.drives }

// CapturePath is where the capture is written.
func (r *Rig) CapturePath() string { return r.capPath }

// Notes are things the run wants the report to say.
func (r *Rig) Notes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.notes...)
}

// Progress is the recording's snapshot (capture/record): totals, link
// stats, each port's power since the previous call.
func (r *Rig) Progress() record.Progress { return r.rec.Progress() }

// Stats are the meter link's counters.
func (r *Rig) Stats() meter.Stats { return r.meter.Stats() }

// Close stops recording, restores the policy, and closes everything. It
// returns the first error that lost data.
func (r *Rig) Close() error {
	var errs []error
	if r.rec != nil {
		r.Phase("end")
		r.streamCancel()
		fin := r.rec.Close()
		r.wg.Wait()
		if fin.StreamErr != nil && !errors.Is(fin.StreamErr, context.Canceled) {
			errs = append(errs, fmt.Errorf("recording: %w", fin.StreamErr))
		}
		if fin.WriteErr != nil {
			errs = append(errs, fmt.Errorf("capture: %w", fin.WriteErr))
		}
	} else if r.streamCancel != nil {
		r.streamCancel()
	}
	errs = append(errs, r.teardown()...)
	return errors.Join(errs...)
}

func (r *Rig) teardown() []error {
	var errs []error
	if r.release != nil {
		for _, hr := range r.release() {
			if hr.Err != nil {
				errs = append(errs, fmt.Errorf("restoring policy on %s: %w", hr.Host, hr.Err))
			}
		}
		r.release = nil
	}
	if r.meter != nil {
		r.meter.Close()
	}
	errs = append(errs, r.setup.close(r)...)
	return errs
}

// inputs are the files the run reads, which no output may be.
func (c *Config) inputs() []string {
	var in []string
	if t := strings.ToLower(c.Workload.Trace); t != "pcmark7" && t != "none" {
		in = append(in, c.Workload.Trace)
	}
	for _, d := range c.Drives {
		in = append(in, d.Target)
	}
	return in
}

// ReplayTarget returns the drive's target for the replay engine.
func (d *Drive) ReplayTarget() (replay.Target, error) {
	if d.target == nil {
		return nil, fmt.Errorf("drive on port %d has no target (drives[].target)", d.Config.Port)
	}
	return d.target.replayTarget(), nil
}
