package rig

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
	"github.com/idlewatt/idlewatt/report"
	"github.com/idlewatt/idlewatt/states/alpm"
	"github.com/idlewatt/idlewatt/states/drivesim"
	"github.com/idlewatt/idlewatt/units"
	"github.com/idlewatt/idlewatt/workload/replay"
	"github.com/idlewatt/idlewatt/workload/target"
)

// CaptureFile is the capture's name in the output directory.
const CaptureFile = "capture.iwc"

// runFixed and runPattern are the names a run writes into its directory.
var (
	runFixed   = append([]string{CaptureFile, report.FileMeasure, "idle.json"}, report.Files...)
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

	emu     *hubemu.Emulator
	simHost *alpm.SimHost
	meter   meter.Meter
	w       *capture.Writer
	sink    *liveSink
	guard   *alpm.Guard
	release func() []alpm.HostResult
	drives  []*Drive
	clock   func(hostNs int64) time.Duration // emulator time; nil for real meters

	streamCtx    context.Context
	streamCancel context.CancelFunc
	streamDone   chan struct{}
	streamErr    error
	wg           sync.WaitGroup

	mu    sync.Mutex
	phase string
	notes []string
	// policyProblems are policies that could not be applied: a host cause
	// for any DevSlp result but a pass.
	policyProblems []string
}

// Drive is one configured drive while the rig runs.
type Drive struct {
	Config  DriveConfig
	Profile *drivesim.Profile // known profile, if any
	Model   *drivesim.Model   // emulator only
	Sim     *drivesim.Target  // emulator only
	Real    *target.Target    // real set-up only
	truth   *os.File
	scratch string // the emulator's scratch image, removed at the end unless KeepScratch
}

// Open sets everything up and starts recording into out/capture.iwc.
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
	r = &Rig{cfg: cfg, out: out, log: log, capPath: filepath.Join(out, CaptureFile)}
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
		if dc.Profile != "" {
			p, err := drivesim.Lookup(dc.Profile, r.cfg.Profiles)
			if err != nil {
				return err
			}
			d.Profile = &p
		}
		r.drives = append(r.drives, d)
	}
	if r.cfg.Meter.Kind != "emulator" {
		return nil
	}
	// The simulated host's ports start at med_power_with_dipm (the kernel
	// default since 6.11); the models start there too and follow its file.
	const initialPolicy = "med_power_with_dipm"
	ports := 0
	for _, d := range r.drives {
		ports = max(ports, d.Config.Port)
		// Written in place as the run goes, like the capture.
		f, err := outfile.CreateInPlace(filepath.Join(r.out, fmt.Sprintf("truth-p%d.jsonl", d.Config.Port)), r.cfg.Out)
		if err != nil {
			return fmt.Errorf("truth file: %w", err)
		}
		d.truth = f
		m, err := drivesim.New(*d.Profile, drivesim.Options{
			Seed: r.cfg.Emulator.Seed*100 + int64(d.Config.Port), Policy: initialPolicy,
			TruthOut: f, Port: d.Config.Port,
		})
		if err != nil {
			return fmt.Errorf("drives port %d: %w", d.Config.Port, err)
		}
		d.Model = m
	}
	sims := make([]meter.SimDrive, ports)
	for i := range sims {
		sims[i] = meter.ConstantDrive{V5: 5, V12: 12} // an empty port draws nothing
	}
	var specs []alpm.DriveSpec
	for _, d := range r.drives {
		sims[d.Config.Port-1] = d.Model
	}
	for p := 1; p <= ports; p++ {
		specs = append(specs, driveSpec(r.driveOn(p)))
	}
	emu, err := hubemu.New(hubemu.Options{
		Ports: ports, Drives: sims, Seed: r.cfg.Emulator.Seed,
		DriftPPM: r.cfg.Emulator.DriftPPM, ClockOffset: r.cfg.Emulator.Offset,
		Faults: hubemu.Faults{CorruptRate: r.cfg.Emulator.CorruptRate},
	})
	if err != nil {
		return fmt.Errorf("emulator: %w", err)
	}
	r.emu = emu
	r.clock = emu.EmuTime
	sh, err := alpm.NewSimHost("", specs)
	if err != nil {
		return fmt.Errorf("simulated host: %w", err)
	}
	r.simHost = sh
	r.cfg.SysfsRoot = sh.Root
	for _, d := range r.drives {
		d.Config.Host = sh.Hosts[d.Config.Port-1]
		path := d.Config.Target
		if path == "" {
			// A scratch image (sparse; only what the workload writes takes
			// space): created new, removed at the end unless KeepScratch.
			path = filepath.Join(r.out, fmt.Sprintf("drive-p%d.img", d.Config.Port))
			f, err := outfile.CreateInPlace(path, r.cfg.Out)
			if err != nil {
				return fmt.Errorf("drives port %d scratch image: %w", d.Config.Port, err)
			}
			f.Close()
			d.scratch = path
		}
		t, err := drivesim.OpenTarget(path, d.Model, drivesim.TargetOptions{Size: d.Config.SizeBytes, Clock: emu.EmuTime})
		if err != nil {
			return fmt.Errorf("drives port %d target: %w", d.Config.Port, err)
		}
		d.Sim = t
	}
	return nil
}

func (r *Rig) driveOn(port int) *Drive {
	for _, d := range r.drives {
		if d.Config.Port == port {
			return d
		}
	}
	return nil
}

// driveSpec describes a simulated drive's IDENTIFY data for the simulated host.
func driveSpec(d *Drive) alpm.DriveSpec {
	if d == nil {
		return alpm.DriveSpec{Model: "empty port", Sectors: 2048}
	}
	p := d.Profile
	return alpm.DriveSpec{
		Model: d.Config.Name, Serial: fmt.Sprintf("SIM%04d", d.Config.Port), Firmware: "drivesim",
		Sectors: uint64(d.Config.SizeBytes / 512), Rotational: p.HDD(),
		HIPM: true, DIPM: true, DIPMEnabled: true,
		DevSlp: p.DevSlpSupported, DevSlpEnabled: p.DevSlpSupported,
		Log: p.DevSlpSupported, LogValid: p.DevSlpSupported,
		MDATms: int(p.MdatMs), DETOms: int(p.DetoMs),
	}
}

func (r *Rig) openMeter() error {
	path := r.cfg.Meter.Port
	if r.emu != nil {
		path = r.emu.Path()
	}
	var m meter.Meter
	var err error
	switch r.cfg.Meter.Kind {
	case "emulator", "hub":
		m, err = hub.Open(path, hub.Options{})
	default:
		m, err = r.cfg.OpenMeter(r.cfg.Meter.Kind, path)
	}
	if err != nil {
		return fmt.Errorf("meter: %w", err)
	}
	r.meter = m
	if r.cfg.Meter.Kind == "emulator" {
		return nil
	}
	// Real drives: open the workload targets with the safety checks.
	for _, d := range r.drives {
		if d.Config.Target == "" {
			continue
		}
		write := r.cfg.Workload.Trace != "none"
		t, err := target.Open(d.Config.Target, target.Options{
			Write: write, AllowDestructive: d.Config.AllowDestructive, Size: d.Config.SizeBytes, Direct: true,
			Warn: func(s string) { r.logf("warning: %s", s) },
		})
		if err != nil {
			return fmt.Errorf("drives port %d target: %w", d.Config.Port, err)
		}
		d.Real = t
	}
	return nil
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
	if r.w != nil {
		r.state(capture.StateEvent{Host: hostclock.Now(), Kind: capture.StatePolicy, Value: policy})
	}
	if r.simHost != nil {
		// The simulated drives follow the policy their host's file holds.
		for _, d := range r.drives {
			if p, err := r.simHost.Policy(d.Config.Host); err == nil {
				if err := d.Model.SetPolicy(r.clock(hostclock.Now()), string(p)); err != nil {
					return fmt.Errorf("drive port %d: %w", d.Config.Port, err)
				}
			}
		}
	}
	return nil
}

func (r *Rig) policyProblem(s string) {
	r.mu.Lock()
	r.policyProblems = append(r.policyProblems, s)
	r.mu.Unlock()
}

func (r *Rig) note(format string, a ...any) {
	s := fmt.Sprintf(format, a...)
	r.mu.Lock()
	r.notes = append(r.notes, s)
	r.mu.Unlock()
	r.logf("note: %s", s)
}

func (r *Rig) startRecording(ctx context.Context) error {
	info := r.meter.Info()
	var ports []int
	for _, d := range r.drives {
		ports = append(ports, d.Config.Port)
	}
	scfg := meter.StreamConfig{Rate: units.Hertz(r.cfg.Meter.Rate), Ports: ports}
	var err error
	if _, isHub := r.meter.(*hub.Hub); isHub {
		scfg, err = hub.ResolveConfig(info, scfg)
	} else if r.cfg.ResolveMeter != nil {
		scfg, err = r.cfg.ResolveMeter(r.cfg.Meter.Kind, info, scfg)
	}
	if err != nil {
		return fmt.Errorf("meter.rate_hz / drives[].port: %w", err)
	}
	if scfg.Rate <= 0 {
		return fmt.Errorf("meter.rate_hz: the %s meter reports no sample rate; set one", r.cfg.Meter.Kind)
	}
	chans := meter.Channels(info, scfg)
	cfgJSON, _ := json.Marshal(r.cfg)
	h := capture.Header{
		Created: time.Now().UTC().Format(time.RFC3339), Meter: info, Channels: chans,
		RateHz: float64(scfg.Rate), StartHost: hostclock.Now(), Config: cfgJSON, Tool: "idlewatt measure",
	}
	for _, d := range r.drives {
		di := capture.DriveInfo{Port: d.Config.Port, Name: d.Config.Name, Profile: d.Config.Profile, Target: d.Config.Target,
			Model: d.Config.Model, Firmware: d.Config.Firmware}
		if d.Sim != nil {
			di.Target = "simulated:" + d.Sim.File().Name()
		}
		h.Drives = append(h.Drives, di)
	}
	w, err := capture.Create(r.capPath, h, capture.Options{Overwrite: r.cfg.Out.Overwrite, Inputs: r.cfg.Out.Inputs})
	if err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	r.w = w
	r.sink = newLiveSink(w, chans)
	if o := r.cfg.Observer; o != nil {
		o.Start(h)
		r.sink.obs = o
	}
	if r.cfg.Policy != "" {
		r.state(capture.StateEvent{Host: hostclock.Now(), Kind: capture.StatePolicy, Value: r.cfg.Policy})
	}
	r.streamCtx, r.streamCancel = context.WithCancel(ctx)
	r.streamDone = make(chan struct{})
	go func() {
		defer close(r.streamDone)
		r.streamErr = r.meter.Stream(r.streamCtx, scfg, r.sink)
	}()
	r.wg.Go(r.markLoop)
	if r.simHost != nil {
		r.wg.Go(func() {
			r.simHost.Watch(r.streamCtx, 20*time.Millisecond, func(host string, p alpm.Policy) {
				for _, d := range r.drives {
					if d.Config.Host == host {
						_ = d.Model.SetPolicy(r.clock(hostclock.Now()), string(p))
					}
				}
			})
		})
	}
	return nil
}

// markLoop ties the meter clock to the host clock twice a second.
func (r *Rig) markLoop() {
	mk, ok := r.meter.(meter.Marker)
	if !ok {
		return
	}
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	var id uint32
	for {
		select {
		case <-r.streamDone:
			return
		case <-t.C:
		}
		id++
		ctx, cancel := context.WithTimeout(r.streamCtx, time.Second)
		_ = mk.Mark(ctx, id) // a lost mark only thins the clock fit
		cancel()
		st := r.meter.Stats()
		_ = r.w.Stats(st)
		if o := r.cfg.Observer; o != nil {
			o.Stats(st)
		}
	}
}

// Err reports a recording failure (meter lost, disk full) so far.
func (r *Rig) Err() error {
	select {
	case <-r.streamDone:
		if r.streamErr != nil {
			return fmt.Errorf("recording stopped: %w", r.streamErr)
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

// Power returns each drive port's mean power since the last call (for progress).
func (r *Rig) Power() map[int]float64 { return r.sink.takePower() }

// Stats are the meter link's counters.
func (r *Rig) Stats() meter.Stats { return r.meter.Stats() }

// Close stops recording, restores the policy, and closes everything. It
// returns the first error that lost data.
func (r *Rig) Close() error {
	if r.w != nil {
		r.Phase("end")
	}
	var errs []error
	if r.streamCancel != nil {
		r.streamCancel()
		<-r.streamDone
		r.wg.Wait()
		if r.streamErr != nil && !errors.Is(r.streamErr, context.Canceled) {
			errs = append(errs, fmt.Errorf("recording: %w", r.streamErr))
		}
	}
	if r.w != nil {
		st := r.meter.Stats()
		_ = r.w.Stats(st)
		if o := r.cfg.Observer; o != nil {
			o.Stats(st)
		}
		if err := r.w.Close(); err != nil {
			errs = append(errs, fmt.Errorf("capture: %w", err))
		}
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
	for _, d := range r.drives {
		if d.Model != nil && r.clock != nil {
			_ = d.Model.Finish(r.clock(hostclock.Now()))
		}
		if d.truth != nil {
			d.truth.Close()
		}
		if d.Sim != nil {
			d.Sim.Close()
		}
		if d.scratch != "" && !r.cfg.KeepScratch {
			if err := os.Remove(d.scratch); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, fmt.Errorf("removing scratch image: %w", err))
			}
			d.scratch = ""
		}
		if d.Real != nil {
			d.Real.Close()
		}
	}
	if r.emu != nil {
		r.emu.Close()
	}
	if r.simHost != nil {
		r.simHost.Close()
	}
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
	switch {
	case d.Sim != nil:
		return replay.Simulated(d.Sim, false), nil
	case d.Real != nil:
		return d.Real, nil
	}
	return nil, fmt.Errorf("drive on port %d has no target (drives[].target)", d.Config.Port)
}
