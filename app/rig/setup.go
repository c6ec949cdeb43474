package rig

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/idlewatt/idlewatt/app/emuhub"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
	"github.com/idlewatt/idlewatt/states/alpm"
	"github.com/idlewatt/idlewatt/states/drivesim"
	"github.com/idlewatt/idlewatt/states/nvme"
	nvmesim "github.com/idlewatt/idlewatt/states/nvme/sim"
	"github.com/idlewatt/idlewatt/workload"
	"github.com/idlewatt/idlewatt/workload/replay"
	"github.com/idlewatt/idlewatt/workload/target"
)

// setup is what a rig measures on: an emulated hub with simulated drives
// behind a simulated SATA host (emuSetup), or a real meter and real drives
// (realSetup). The rig orchestrates — meter, policy, recording, phases — and
// asks the set-up only what differs between the two.
type setup interface {
	// open prepares the drives (and, emulated, the hub the meter opens),
	// before the meter is opened.
	open(r *Rig) error
	// meter is the meter kind (meter/registry) and port to open.
	meter(r *Rig) (kind, path string)
	// openTargets opens the drives' workload targets, after the meter.
	openTargets(r *Rig) error
	// policySet tells the drives the policy their hosts now hold
	// (simulated drives follow it; real ones do by themselves).
	policySet(r *Rig) error
	// watch runs beside the recording until ctx is done.
	watch(ctx context.Context, r *Rig)
	// clock maps a host time to the emulator's (nil: no emulator).
	clock() func(hostclock.Time) time.Duration
	// sampleZero is the emulator time of the stream's sample index 0, if
	// the emulator streamed exactly once (false: no emulator, or none).
	sampleZero() (time.Duration, bool)
	// close releases what open and openTargets made; errors lose data.
	close(r *Rig) []error
}

func newSetup(cfg Config) setup {
	if cfg.Meter.Kind == "emulator" {
		return &emuSetup{}
	}
	return &realSetup{}
}

// driveTarget is a drive's workload target: what replay plays on, and the
// 4 KiB read that probes a DevSlp exit.
type driveTarget interface {
	// replayTarget is the target as replay takes it (its own type, whose
	// optional interfaces replay asserts: Trimmer, the simulated hooks).
	replayTarget() replay.Target
	ReadAt(p []byte, off int64) (int, error)
	// label is the target as the capture header names it.
	label() string
	Close() error
}

// realSetup is a real meter with real drives: the targets are opened with the
// safety checks of workload/target.
type realSetup struct{}

func (*realSetup) open(*Rig) error { return nil }

func (*realSetup) meter(r *Rig) (string, string) { return r.cfg.Meter.Kind, r.cfg.Meter.Port }

func (*realSetup) openTargets(r *Rig) error {
	for _, d := range r.drives {
		if d.Config.Target == "" {
			continue
		}
		t, err := target.Open(d.Config.Target, target.Options{
			Write: r.cfg.Workload.Trace != "none", AllowDestructive: d.Config.AllowDestructive, Size: d.Config.SizeBytes, Direct: true,
			Warn: func(s string) { r.logf("warning: %s", s) },
		})
		if err != nil {
			return fmt.Errorf("drives port %d target: %w", d.Config.Port, err)
		}
		d.target = realTarget{t, d.Config.Target}
	}
	return nil
}

func (*realSetup) policySet(*Rig) error                      { return nil }
func (*realSetup) watch(context.Context, *Rig)               {}
func (*realSetup) clock() func(hostclock.Time) time.Duration { return nil }

func (*realSetup) sampleZero() (time.Duration, bool) { return 0, false }

func (*realSetup) close(r *Rig) []error {
	for _, d := range r.drives {
		if d.target != nil {
			d.target.Close()
		}
	}
	return nil
}

// realTarget is a block device or file opened by workload/target.
type realTarget struct {
	*target.Target
	path string // as configured
}

func (t realTarget) replayTarget() replay.Target             { return t.Target }
func (t realTarget) ReadAt(p []byte, off int64) (int, error) { return unix.Pread(t.Fd(), p, off) }
func (t realTarget) label() string                           { return t.path }

// emuSetup is the built-in emulated hub on a pty, a drivesim Model per
// drive behind it, a simulated SATA host whose policy files the models
// follow, and each drive's target a drivesim Target on a scratch image (or
// the configured file).
type emuSetup struct {
	emu     *hubemu.Emulator
	simHost *alpm.SimHost
	models  map[int]*drivesim.Model   // by port
	nvmes   map[int]*nvmesim.HubDrive // by port: simulated NVMe drives on the 3.3 V rail
	truth   []*os.File
	scratch []string // removed at the end unless KeepScratch
}

// initialPolicy: the simulated host's ports start at med_power_with_dipm
// (the kernel default since 6.11); the models start there too.
const initialPolicy = "med_power_with_dipm"

func (e *emuSetup) open(r *Rig) error {
	e.models = map[int]*drivesim.Model{}
	e.nvmes = map[int]*nvmesim.HubDrive{}
	ports := 0
	for _, d := range r.drives {
		ports = max(ports, d.Config.Port)
		// Written in place as the run goes, like the capture.
		f, err := outfile.CreateInPlace(filepath.Join(r.out, fmt.Sprintf("truth-p%d.jsonl", d.Config.Port)), r.cfg.Out)
		if err != nil {
			return fmt.Errorf("truth file: %w", err)
		}
		e.truth = append(e.truth, f)
		if d.Config.NVMe != "" {
			p, ok := nvmesim.ProfileByName(d.Config.NVMe)
			if !ok {
				return fmt.Errorf("drives port %d: no simulated NVMe profile %q", d.Config.Port, d.Config.NVMe)
			}
			// Programmed as Linux does by default: APST planned for the
			// default latency tolerance, ASPM powersupersave (L1 and L1.2).
			n := emuhub.NVMeDrive(p, nvme.DefaultPSMaxLatencyUs,
				uint64(r.cfg.Emulator.Seed)*100+uint64(d.Config.Port))
			n.RecordTruth(f, 0, d.Config.Port) // from the emulator's time 0
			e.nvmes[d.Config.Port] = n
			continue
		}
		m, err := drivesim.New(*d.sim, drivesim.Options{
			Seed: r.cfg.Emulator.Seed*100 + int64(d.Config.Port), Policy: initialPolicy,
			TruthOut: f, Port: d.Config.Port,
		})
		if err != nil {
			return fmt.Errorf("drives port %d: %w", d.Config.Port, err)
		}
		e.models[d.Config.Port] = m
	}
	sims := make([]meter.SimDrive, ports)
	var specs []alpm.DriveSpec
	for p := 1; p <= ports; p++ {
		if m, ok := e.models[p]; ok { // else nil: an empty port (emuhub.Empty)
			sims[p-1] = m
		}
		if n, ok := e.nvmes[p]; ok {
			sims[p-1] = n
		}
		specs = append(specs, driveSpec(r.driveOn(p)))
	}
	emu, err := emuhub.New(hubemu.Options{ // a 3.3 V rail when a port holds an NVMe drive
		Seed:     r.cfg.Emulator.Seed,
		DriftPPM: r.cfg.Emulator.DriftPPM, ClockOffset: r.cfg.Emulator.Offset,
		Faults:  hubemu.Faults{CorruptRate: r.cfg.Emulator.CorruptRate},
		Formats: r.cfg.Emulator.Formats, CurrentLSB: r.cfg.Emulator.CurrentLSB, WideLSB: r.cfg.Emulator.WideLSB,
		Accuracy: r.cfg.Emulator.Accuracy,
	}, sims)
	if err != nil {
		return fmt.Errorf("emulator: %w", err)
	}
	e.emu = emu
	sh, err := alpm.NewSimHost("", specs)
	if err != nil {
		return fmt.Errorf("simulated host: %w", err)
	}
	e.simHost = sh
	r.cfg.SysfsRoot = sh.Root
	for _, d := range r.drives {
		if n := e.nvmes[d.Config.Port]; n != nil {
			// No SATA host: the ALPM policy is not the NVMe drive's.
			if err := e.openNVMeTarget(r, d, n); err != nil {
				return err
			}
			continue
		}
		d.Config.Host = sh.Hosts[d.Config.Port-1]
		if err := e.openTarget(r, d); err != nil {
			return err
		}
	}
	return nil
}

// targetPath is the simulated drive's backing file: its configured file
// or a new sparse scratch image (only what the workload writes takes
// space).
func (e *emuSetup) targetPath(r *Rig, d *Drive) (string, error) {
	path := d.Config.Target
	if path == "" {
		path = filepath.Join(r.out, fmt.Sprintf("drive-p%d.img", d.Config.Port))
		f, err := outfile.CreateInPlace(path, r.cfg.Out)
		if err != nil {
			return "", fmt.Errorf("drives port %d scratch image: %w", d.Config.Port, err)
		}
		f.Close()
		e.scratch = append(e.scratch, path)
	}
	return path, nil
}

// openTarget opens the simulated SATA drive's target on its backing file.
func (e *emuSetup) openTarget(r *Rig, d *Drive) error {
	path, err := e.targetPath(r, d)
	if err != nil {
		return err
	}
	t, err := drivesim.OpenTarget(path, e.models[d.Config.Port], drivesim.TargetOptions{Size: d.Config.SizeBytes, Clock: e.emu.EmuTime})
	if err != nil {
		return fmt.Errorf("drives port %d target: %w", d.Config.Port, err)
	}
	d.target = simTarget{replay.Simulated(t, false), t}
	return nil
}

// meter: the emulated hub speaks the hub protocol on its pty.
func (e *emuSetup) meter(*Rig) (string, string) { return "hub", e.emu.Path() }

func (*emuSetup) openTargets(*Rig) error { return nil } // opened with the models

func (e *emuSetup) policySet(r *Rig) error {
	for _, d := range r.drives {
		if e.models[d.Config.Port] == nil {
			continue // an NVMe drive: not behind a SATA host
		}
		if p, err := e.simHost.Policy(d.Config.Host); err == nil {
			if err := e.models[d.Config.Port].SetPolicy(e.emu.EmuTime(hostclock.Now()), string(p)); err != nil {
				return fmt.Errorf("drive port %d: %w", d.Config.Port, err)
			}
		}
	}
	return nil
}

// watch makes the models follow a policy written to the simulated host's
// files by anyone (the rig, or a user's tool during the run).
func (e *emuSetup) watch(ctx context.Context, r *Rig) {
	e.simHost.Watch(ctx, 20*time.Millisecond, func(host string, p alpm.Policy) {
		for _, d := range r.drives {
			if d.Config.Host == host && e.models[d.Config.Port] != nil {
				_ = e.models[d.Config.Port].SetPolicy(e.emu.EmuTime(hostclock.Now()), string(p))
			}
		}
	})
}

func (e *emuSetup) clock() func(hostclock.Time) time.Duration {
	if e.emu == nil {
		return nil
	}
	return e.emu.EmuTime
}

func (e *emuSetup) sampleZero() (time.Duration, bool) {
	if e.emu == nil {
		return 0, false
	}
	t0, starts := e.emu.StreamStart()
	return t0, starts == 1
}

func (e *emuSetup) close(r *Rig) []error {
	var errs []error
	for _, d := range r.drives {
		if m := e.models[d.Config.Port]; m != nil && e.emu != nil {
			_ = m.Finish(e.emu.EmuTime(hostclock.Now()))
		}
		if n := e.nvmes[d.Config.Port]; n != nil && e.emu != nil {
			if err := n.Finish(e.emu.EmuTime(hostclock.Now())); err != nil {
				errs = append(errs, fmt.Errorf("drives port %d truth file: %w", d.Config.Port, err))
			}
		}
		if d.target != nil {
			d.target.Close()
		}
	}
	for _, f := range e.truth {
		f.Close()
	}
	if !r.cfg.KeepScratch {
		for _, p := range e.scratch {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, fmt.Errorf("removing scratch image: %w", err))
			}
		}
	}
	e.scratch = nil
	if e.emu != nil {
		e.emu.Close()
	}
	if e.simHost != nil {
		e.simHost.Close()
	}
	return errs
}

// simTarget is a simulated drive's target.
type simTarget struct {
	rt  replay.Target
	sim *drivesim.Target
}

func (t simTarget) replayTarget() replay.Target             { return t.rt }
func (t simTarget) ReadAt(p []byte, off int64) (int, error) { return t.sim.ReadAt(p, off) }
func (t simTarget) label() string                           { return "simulated:" + t.sim.File().Name() }
func (t simTarget) Close() error                            { return t.sim.Close() }

// driveSpec describes a simulated drive's IDENTIFY data for the simulated host.
func driveSpec(d *Drive) alpm.DriveSpec {
	if d == nil || d.sim == nil { // no drive, or an NVMe drive: no SATA device
		return alpm.DriveSpec{Model: "empty port", Sectors: 2048}
	}
	p := d.sim
	return alpm.DriveSpec{
		Model: d.Config.Name, Serial: fmt.Sprintf("SIM%04d", d.Config.Port), Firmware: "drivesim",
		Sectors: uint64(d.Config.SizeBytes / 512), Rotational: p.HDD(),
		HIPM: true, DIPM: true, DIPMEnabled: true,
		DevSlp: p.DevSlpSupported, DevSlpEnabled: p.DevSlpSupported,
		Log: p.DevSlpSupported, LogValid: p.DevSlpSupported,
		MDATms: int(p.MdatMs), DETOms: int(p.DetoMs),
	}
}

// openNVMeTarget opens the simulated NVMe drive's target: its backing file,
// each I/O reported to the model on the emulator's clock and waiting the
// wake the model prescribes (the entry in progress, the power state's and
// the link's exit latency) inside the I/O's interval.
func (e *emuSetup) openNVMeTarget(r *Rig, d *Drive, n *nvmesim.HubDrive) error {
	path, err := e.targetPath(r, d)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("drives port %d target: %w", d.Config.Port, err)
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return fmt.Errorf("drives port %d target: %s is not a regular file", d.Config.Port, path)
	}
	if fi.Size() < d.Config.SizeBytes { // extended (sparse), never shrunk
		if err := f.Truncate(d.Config.SizeBytes); err != nil {
			f.Close()
			return fmt.Errorf("drives port %d target: %w", d.Config.Port, err)
		}
	}
	t := &nvmeTarget{f: f, size: d.Config.SizeBytes, d: n, clock: e.emu.EmuTime}
	d.target = nvmeDriveTarget{replay.Simulated(t, false), t}
	return nil
}

// nvmeTarget is replay's view of a simulated NVMe drive (replay.Hooks).
type nvmeTarget struct {
	f     *os.File
	size  int64
	d     *nvmesim.HubDrive
	clock func(hostclock.Time) time.Duration
}

func (t *nvmeTarget) File() *os.File { return t.f }
func (t *nvmeTarget) Size() int64    { return t.size }

// Before reports the I/O issued now; the wake is its service time.
func (t *nvmeTarget) Before(_ workload.Op, off int64, size int) (time.Duration, error) {
	if off < 0 || size < 0 || off > t.size || int64(size) > t.size-off {
		return 0, fmt.Errorf("simulated NVMe: I/O [%d, +%d) outside the target's %d bytes", off, size, t.size)
	}
	return t.d.IO(t.clock(hostclock.Now())), nil
}

// After reports its completion now.
func (t *nvmeTarget) After(workload.Op, int64, int) { _ = t.d.IODone(t.clock(hostclock.Now())) }

// AfterAt reports its completion at the engine's stamp.
func (t *nvmeTarget) AfterAt(_ workload.Op, _ int64, _ int, hostNs int64) {
	_ = t.d.IODone(t.clock(hostclock.Time(hostNs)))
}

// ReadAt reads through the model (the wake waited, then the read).
func (t *nvmeTarget) ReadAt(p []byte, off int64) (int, error) {
	w, err := t.Before(workload.OpRead, off, len(p))
	if err != nil {
		return 0, err
	}
	time.Sleep(w)
	n, err := t.f.ReadAt(p, off)
	t.After(workload.OpRead, off, len(p))
	return n, err
}

// nvmeDriveTarget is a simulated NVMe drive's target.
type nvmeDriveTarget struct {
	rt replay.Target
	t  *nvmeTarget
}

func (t nvmeDriveTarget) replayTarget() replay.Target             { return t.rt }
func (t nvmeDriveTarget) ReadAt(p []byte, off int64) (int, error) { return t.t.ReadAt(p, off) }
func (t nvmeDriveTarget) label() string                           { return "simulated-nvme:" + t.t.f.Name() }
func (t nvmeDriveTarget) Close() error                            { return t.t.f.Close() }
