package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/app/config"
	"github.com/idlewatt/idlewatt/app/rig"
	"github.com/idlewatt/idlewatt/capture/record"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/internal/textsafe"
	"github.com/idlewatt/idlewatt/meter/registry"
	"github.com/idlewatt/idlewatt/report/live"
	"github.com/idlewatt/idlewatt/report/livemetrics"
)

func init() {
	register(func() *cobra.Command {
		return runCmd(&cobra.Command{
			Use:   "measure --config FILE [--out DIR]",
			Short: "Record drives while playing the workload, idle and DevSlp phases; write capture, report and charts",
			Long: `The main job. For the drives in the config file: set the link policy, start
recording, idle, play the workload (default: the PCMark-7-like trace), idle
again, run DevSlp cycles, restore the policy, stop; then analyse the capture
and write report.json, report.md, summary.csv, measure.json and charts into
--out. The config keys are in docs/config.md; meter.kind "emulator" runs on
the built-in emulated hub with simulated drives.`,
		}, config.Measure, false)
	})
	register(func() *cobra.Command {
		c := &cobra.Command{Use: "devslp", Short: "Device Sleep verification"}
		v := runCmd(&cobra.Command{
			Use:   "verify --config FILE [--cycles N]",
			Short: "Cycle DEVSLP and judge entry, floor, hold and exit for each drive",
			Long: `Each cycle: idle until the drive reaches Slumber, assert DEVSLP (the hub's
pin), require the power to reach its floor within devslp.entry_bound, the
floor to be at or below devslp.limit_mw (default 5 mW), the floor to hold
at least MDAT, then deassert and require a read to complete within DETO,
and the drive to return to its pre-cycle level. Prints a table per cycle
and a verdict; exits 1 on failure with the reason. Writes the capture,
measure.json and a chart of one cycle (devslp-pN.png) into --out.`,
		}, config.DevSlpVerify, true)
		declare(v.Flags(), config.DevSlpVerifyFlags...)
		c.AddCommand(v)
		return c
	})
	register(func() *cobra.Command {
		c := runCmd(&cobra.Command{
			Use:   "demo [--out DIR] [--nvme[=PROFILE]]",
			Short: "Measure two simulated JMicron JMF667H drives on the emulated hub: the whole job, no hardware",
			Long: `Runs 'measure' on the built-in emulated hub with two simulated JMicron
JMF667H drives with Toshiba A19 NAND (128 GB on port 1, 256 GB on port 2):
active idle under max_performance, a shortened PCMark-7-like run (idle gaps
compressed to 1.5 s), idle again, then DevSlp cycles on the hub's DEVSLP pins
under med_power_with_dipm. Writes the capture, report, charts and the
simulated drives' ground truth (truth-pN.jsonl) into --out and prints the
headline numbers. Takes about a minute.

With --nvme the 256 GB drive on port 2 is replaced by a simulated NVMe
drive (default the Samsung 980 PRO 1 TB; --nvme=660p-1tb the Intel 660p) on
an M.2 interposer: the hub speaks protocol 3 with a 3.3 V rail, the same
phases play on the SATA and the NVMe drive, and one report shows both. The
NVMe drive is programmed as Linux does by default (APST planned for a
100000 µs latency tolerance, ASPM powersupersave); it has no DEVSLP pin
(its DevSlp verdict is not_supported) and measure runs no state detection
on it (apst verify checks its power states).`,
		}, func(src config.Source, g settings.Getter, _ string) (rig.Config, rig.Plan, error) {
			return config.Demo(src, g)
		}, false)
		declare(c.Flags(), config.DemoFlags...)
		return c
	})
}

// runCmd makes c a command that runs the rig on the set-up setup gives
// (measure, devslp verify with verify, demo): flags → set-up → run → print.
func runCmd(c *cobra.Command, setup func(config.Source, settings.Getter, string) (rig.Config, rig.Plan, error), verify bool) *cobra.Command {
	c.Args = cobra.NoArgs
	c.RunE = func(cmd *cobra.Command, _ []string) error {
		rc, plan, err := setup(cliOf(cmd).cfg, get(cmd), cmd.CommandPath())
		if err != nil {
			return err
		}
		return runMeasure(cmd, rc, plan, verify)
	}
	declare(c.Flags(), rig.RunFlags...)
	return c
}

func defaultOut(name string) string {
	return fmt.Sprintf("idlewatt-%s-%s", name, time.Now().Format("20060102-150405"))
}

// runMeasure runs rc and plan (measure, demo, devslp verify) and prints the
// result; verify judges it as devslp verify does (rig.Result.DevSlpFailure).
func runMeasure(cmd *cobra.Command, rc rig.Config, plan rig.Plan, verify bool) error {
	out := get(cmd).String("out")
	if out == "" {
		out = defaultOut(cmd.Name())
	}
	setRunOutput(cmd, &rc)
	plan.NoHTML = get(cmd).Bool("no-html")
	if !get(cmd).Bool("quiet") {
		plan.Progress = textsafe.NewWriter(cmd.ErrOrStderr()) // also the run's log: names from the config
		plan.Label = strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
	}
	obs, err := livemetrics.Open(get(cmd), rc.Out, func(p string) bool {
		return outfile.Same(filepath.Dir(p), out) && rig.RunWrites(filepath.Base(p))
	}, cmd.ErrOrStderr(), cmd.CommandPath())
	if err != nil {
		return err
	}
	defer obs.Close()
	view, err := live.Open(get(cmd), filepath.Join(out, rig.CaptureFile), cmd.ErrOrStderr(), cmd.CommandPath())
	if err != nil {
		return err
	}
	defer view.Close()
	rc.Observer = record.Tee(obs, view.Observer())
	fmt.Fprintf(cmd.ErrOrStderr(), "%s: %d drive(s) on %s, output in %s\n", cmd.CommandPath(), len(rc.Drives), textsafe.Terminal(rc.MeterLabel()), textsafe.Terminal(out))
	res, err := rig.Run(cmd.Context(), rc, out, plan)
	if res != nil {
		res.Verdicts(obs)
	}
	if res != nil && res.Report != nil {
		if get(cmd).Bool("json") {
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			_ = enc.Encode(res)
		} else {
			res.WriteHeadline(cmd.OutOrStdout(), verify)
		}
	}
	if err != nil {
		if cmd.Context().Err() != nil {
			// Ctrl-C or SIGTERM: say so, not "context canceled".
			return failErr("%w; the policy was restored and what was recorded is in %s (idlewatt report %s analyses it)",
				context.Cause(cmd.Context()), out, filepath.Join(out, rig.CaptureFile))
		}
		if res == nil {
			return registry.DeviceError(err)
		}
		return failErr("%w (what was recorded is in %s)", err, out)
	}
	if err := writeParquet(cmd, res.Capture, res.Report, out, rc.Out.Overwrite); err != nil {
		return failErr("measure: %v", err)
	}
	return res.DevSlpFailure(verify)
}

// writeParquet is rig.WriteParquet when --parquet (config parquet) asks.
func writeParquet(cmd *cobra.Command, capture string, rep *analysis.Report, out string, overwrite bool) error {
	if !get(cmd).Bool("parquet") {
		return nil
	}
	return rig.WriteParquet(capture, rep, out, overwrite)
}

// setRunOutput sets the run directory's rules: --overwrite, the config file
// as an input, and whether scratch drive images are kept.
func setRunOutput(cmd *cobra.Command, rc *rig.Config) {
	rc.Out = outOptions(cmd, configPath(cmd))
	rc.KeepScratch = get(cmd).Bool("keep-scratch")
}
