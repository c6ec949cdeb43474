package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/app/config"
	"github.com/idlewatt/idlewatt/app/rig"
	"github.com/idlewatt/idlewatt/capture/record"
	"github.com/idlewatt/idlewatt/internal/textsafe"
	"github.com/idlewatt/idlewatt/meter/registry"
	"github.com/idlewatt/idlewatt/report/live"
)

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{
			Use:   "idle --config FILE [--policies P,...]",
			Short: "Idle power per ALPM policy: what each policy buys, with its uncertainty",
			Long: `For each policy in turn: write it to the drives' SATA hosts (every host when
no drive names one), let the drives settle, then record their idle power
for --measure. Prints each drive's idle power per policy — the mean over
quiet time with background bursts (garbage collection) left out and
reported on their own — with its 95 % interval, and the saving against the
first policy; analysis computes every number (docs/analysis.md). The policies in force before the run are restored at the end, also
after Ctrl-C. With --meter battery the "drive" is the whole laptop (use
long --measure windows: fuel gauges update every few seconds to a minute).

NVMe mode: --nvme-latency-us 0,5500,100000 and/or --aspm default,powersupersave
measure every combination instead of ALPM policies: each NVMe controller's
latency tolerance (0 turns APST off) and the pcie_aspm policy are written,
the drives settle, the window is measured; the saving is against the first
combination, and every setting is restored at the end and on Ctrl-C.`,
			Args: cobra.NoArgs,
			RunE: runIdle,
		}
		declare(c.Flags(), rig.IdleFlags...)
		declare(c.Flags(), rig.RunFlags...)
		addMeterFlags(c.Flags())
		return c
	})
}

// runIdle is flags → rig.RunIdle → print.
func runIdle(cmd *cobra.Command, _ []string) error {
	rc, err := config.Idle(cliOf(cmd).cfg, get(cmd))
	if err != nil {
		return err
	}
	plan, err := rig.ReadIdlePlan(get(cmd), rc)
	if err != nil {
		return err
	}
	out := get(cmd).String("out")
	if out == "" {
		out = defaultOut("idle")
	}
	what := fmt.Sprintf("%d policies", len(plan.Policies))
	if plan.NVMe != nil {
		what = fmt.Sprintf("%d NVMe settings", len(plan.NVMe))
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "idlewatt idle: %s × (%v settle + %v measure) on %s; output in %s\n",
		what, plan.Settle, plan.Measure, textsafe.Terminal(rc.MeterLabel()), textsafe.Terminal(out))

	setRunOutput(cmd, &rc)
	if !get(cmd).Bool("quiet") {
		plan.Progress = textsafe.NewWriter(cmd.ErrOrStderr())
	}
	view, err := live.Open(get(cmd), filepath.Join(out, rig.CaptureFile), cmd.ErrOrStderr(), cmd.CommandPath())
	if err != nil {
		return err
	}
	defer view.Close()
	if o := view.Observer(); o != nil {
		rc.Observer = record.Tee(rc.Observer, o)
	}
	// What the run logs (policies set and restored) names drives and
	// files from the config: shown, never acted on.
	res, err := rig.RunIdle(cmd.Context(), rc, out, plan, textsafe.NewWriter(cmd.ErrOrStderr()))
	if res == nil {
		return registry.DeviceError(err)
	}
	if cmd.Context().Err() != nil {
		return failErr("idle: %w; the policy was restored and what was recorded is in %s (idlewatt report %s analyses it)",
			context.Cause(cmd.Context()), out, res.Capture)
	}
	if res.File == "" {
		return failErr("idle: %w", err) // not analysed, or idle.json not written
	}
	if get(cmd).Bool("json") {
		b, jerr := json.MarshalIndent(res, "", "  ")
		if jerr != nil {
			return failErr("idle: %w", jerr)
		}
		fmt.Fprintln(cmd.OutOrStdout(), string(b))
	} else {
		res.WriteTable(cmd.OutOrStdout(), out)
	}
	if err != nil {
		return failErr("idle: %w", err)
	}
	if err := writeParquet(cmd, res.Capture, res.Report, out, rc.Out.Overwrite); err != nil {
		return failErr("idle: %v", err)
	}
	return nil
}
