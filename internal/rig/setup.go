package rig

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
	"github.com/idlewatt/idlewatt/states/alpm"
	"github.com/idlewatt/idlewatt/states/drivesim"
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
	models  map[int]*drivesim.Model // by port
	truth   []*os.File
	scratch []string // removed at the end unless KeepScratch
}

// initialPolicy: the simulated host's ports start at med_power_with_dipm
// (the kernel default since 6.11); the models start there too.
const initialPolicy = "med_power_with_dipm"

func (e *emuSetup) open(r *Rig) error {
	e.models = map[int]*drivesim.Model{}
	ports := 0
	for _, d := range r.drives {
		ports = max(ports, d.Config.Port)
		// Written in place as the run goes, like the capture.
		f, err := outfile.CreateInPlace(filepath.Join(r.out, fmt.Sprintf("truth-p%d.jsonl", d.Config.Port)), r.cfg.Out)
		if err != nil {
			return fmt.Errorf("truth file: %w", err)
		}
		e.truth = append(e.truth, f)
		m, err := drivesim.New(*d.Profile, drivesim.Options{
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
		sims[p-1] = meter.ConstantDrive{V5: 5, V12: 12} // an empty port draws nothing
		if m, ok := e.models[p]; ok {
			sims[p-1] = m
		}
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
	e.emu = emu
	sh, err := alpm.NewSimHost("", specs)
	if err != nil {
		return fmt.Errorf("simulated host: %w", err)
	}
	e.simHost = sh
	r.cfg.SysfsRoot = sh.Root
	for _, d := range r.drives {
		d.Config.Host = sh.Hosts[d.Config.Port-1]
		if err := e.openTarget(r, d); err != nil {
			return err
		}
	}
	return nil
}

// openTarget opens the simulated drive's target on its configured file or
// a new sparse scratch image (only what the workload writes takes space).
func (e *emuSetup) openTarget(r *Rig, d *Drive) error {
	path := d.Config.Target
	if path == "" {
		path = filepath.Join(r.out, fmt.Sprintf("drive-p%d.img", d.Config.Port))
		f, err := outfile.CreateInPlace(path, r.cfg.Out)
		if err != nil {
			return fmt.Errorf("drives port %d scratch image: %w", d.Config.Port, err)
		}
		f.Close()
		e.scratch = append(e.scratch, path)
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
			if d.Config.Host == host {
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

func (e *emuSetup) close(r *Rig) []error {
	var errs []error
	for _, d := range r.drives {
		if m := e.models[d.Config.Port]; m != nil && e.emu != nil {
			_ = m.Finish(e.emu.EmuTime(hostclock.Now()))
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
