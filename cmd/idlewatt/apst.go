package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/analysis/judge"
	"github.com/idlewatt/idlewatt/app/apst"
)

// `apst verify` and `apst idle` (issue 18): the CLI of app/apst,
// APST verification and idle power per latency tolerance × ASPM policy on
// a simulated NVMe drive (docs/states.md).

// apstFlags names the flag of each apst.InputError field.
var apstFlags = map[string]string{"profile": "--sim", "tolerance": "--latency-us", "quirk": "--quirk", "aspm": "--aspm", "expect_ps": "--expect-ps"}

// apstErr makes an apst.InputError a usage error naming its flag.
func apstErr(err error) error {
	var ie *apst.InputError
	if errors.As(err, &ie) {
		return usageErr("%s: %v", apstFlags[ie.Field], ie.Err)
	}
	return err
}

func writeAPSTVerify(w io.Writer, r apst.VerifyResult) {
	v := r.Verdict
	fmt.Fprintf(w, "simulated %s, latency tolerance %s µs, ASPM %s", r.Profile, r.Host.Tolerance, r.Host.ASPM)
	if r.Host.Quirks != "" {
		fmt.Fprintf(w, ", quirks %s", r.Host.Quirks)
	}
	fmt.Fprintf(w, "; levels (%s):", r.Host.Levels)
	for _, l := range v.Criteria.Levels {
		fmt.Fprintf(w, " PS%d %s mW", l.PS, judge.PM(judge.NumW(l.W), judge.NoneW, 1e3))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "cycle\toutcome\treached\tfloor mW\tentry ms\texit ms\treason")
	for _, c := range v.Cycles {
		ps := "—"
		if c.ReachedPS >= 0 {
			ps = fmt.Sprintf("PS%d", c.ReachedPS)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Cycle, c.Outcome, ps, judge.PM(c.FloorW, c.FloorU95W, 1e3),
			judge.PM(c.EntryMs, c.EntryU95Ms, 1), judge.PM(c.ExitMs, c.ExitU95Ms, 1), strings.Join(c.Reasons, "; "))
	}
	tw.Flush()
	fmt.Fprintln(w, v.String())
}

func apstSetupFlags(c *cobra.Command) {
	c.Flags().String("sim", "980pro-1tb", "built-in simulated NVMe drive (980pro-1tb, 660p-1tb)")
	c.Flags().String("quirk", "", "kernel quirks to apply to the drive (NO_APST, NO_DEEPEST_PS; comma-separated)")
	c.Flags().Uint64("seed", 1, "the simulated meter's noise seed")
	c.Flags().Bool("hub", false, "measure on an emulated hub's 3.3 V rail through the hub driver, in real time, instead of the simulated meter")
}

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{Use: "apst", Short: "NVMe APST verification and idle power on a simulated NVMe drive"}
		c.AddCommand(apstVerifyCmd(), apstIdleCmd())
		return c
	})
}

// apstVerifyCmd is `apst verify`: APST entry, floor and exit per cycle.
func apstVerifyCmd() *cobra.Command {
	v := &cobra.Command{
		Use:   "verify [--sim PROFILE] [--latency-us N] [--aspm POLICY] [--cycles N]",
		Short: "Cycle a simulated NVMe drive through APST and judge entry, floor and exit for each cycle",
		Long: `Each cycle: a read, then idle while the APST table the kernel would program
(for --latency-us, --quirk and the drive's power-state table) takes the
drive down, then a probe read and a warm read. The power must reach the
expected non-operational state's level (--expect-ps, default the deepest
the quirks allow) within that state's entry latency after the table's idle
time (ITPT) ran out, and the probe must wait no longer than the exit
latency of the state reached, plus the PCIe link's exit under --aspm.
Levels come from the power-state table (--levels table) or are learned
from the capture (--levels learned). Verdicts as for DevSlp: pass, fail,
inconclusive, not_supported (APSTA clear, or a NO_APST quirk). Exit 1
unless the verdict is pass.

The drive is simulated (states/nvme/sim), on a virtual clock, with a
simulated 20 kHz meter on its 3.3 V rail (with --hub: on port 1's 3.3 V rail
of an emulated protocol-3 hub, read by the hub driver over its pty at
10 kS/s, in real time); --entry-scale and --exit-scale
make its actual latencies a multiple of the declared ones (default 0.6:
within spec; over 1 breaks the descriptor).`,
		Args: cobra.NoArgs,
		RunE: runAPSTVerify,
	}
	apstSetupFlags(v)
	v.Flags().String("latency-us", "100000", "the NVMe latency tolerance the kernel plans APST for (µs, auto or any)")
	v.Flags().String("aspm", "powersupersave", "pcie_aspm policy: which link states the drive may use")
	v.Flags().Int("cycles", 10, "APST cycles")
	v.Flags().Int("expect-ps", -1, "the non-operational state to expect (default: the deepest the quirks allow)")
	v.Flags().String("levels", "table", "state levels: table (the power-state table) or learned (from the capture)")
	v.Flags().Float64("entry-scale", 0.6, "the simulated drive's actual entry latency ÷ the declared one")
	v.Flags().Float64("exit-scale", 0.6, "the simulated drive's actual exit latency ÷ the declared one")
	v.Flags().Bool("json", false, "write the verdict as JSON")
	return v
}

func runAPSTVerify(cmd *cobra.Command, args []string) error {
	f := cmd.Flags()
	name, _ := f.GetString("sim")
	tol, _ := f.GetString("latency-us")
	q, _ := f.GetString("quirk")
	aspm, _ := f.GetString("aspm")
	s, err := apst.NewSetup(name, tol, q, aspm)
	if err != nil {
		return apstErr(err)
	}
	entry, _ := f.GetFloat64("entry-scale")
	exit, _ := f.GetFloat64("exit-scale")
	seed, _ := f.GetUint64("seed")
	if !(entry > 0 && exit > 0 && entry <= 100 && exit <= 100) {
		return usageErr("--entry-scale %g, --exit-scale %g: each must be in (0, 100]", entry, exit)
	}
	s.SetLatencyScale(entry, exit)
	s.SetSeed(seed)
	n, _ := f.GetInt("cycles")
	if n < 1 || n > 1000 {
		return usageErr("--cycles %d: give 1 to 1000", n)
	}
	lv, _ := f.GetString("levels")
	if lv != "table" && lv != "learned" {
		return usageErr("--levels %q: table or learned", lv)
	}
	expect, _ := f.GetInt("expect-ps")
	onHub, _ := f.GetBool("hub")
	res, err := apst.Verify(cmd.Context(), s, apst.VerifyOptions{Cycles: n, ExpectPS: expect, Learn: lv == "learned", Hub: onHub})
	if err != nil {
		return apstErr(err)
	}
	if j, _ := f.GetBool("json"); j {
		if err := writeJSON(cmd.OutOrStdout(), res); err != nil {
			return err
		}
	} else {
		writeAPSTVerify(cmd.OutOrStdout(), res)
	}
	if !res.Verdict.Pass() {
		return failErr("APST verification: %s", res.Verdict.String())
	}
	return nil
}

// apstIdleCmd is `apst idle`: idle power per latency tolerance × ASPM policy.
func apstIdleCmd() *cobra.Command {
	id := &cobra.Command{
		Use:   "idle [--sim PROFILE] --latency-us LIST --aspm LIST",
		Short: "Idle power of a simulated NVMe drive per latency tolerance × ASPM policy, recovered against the model",
		Long: `For each combination: a fresh simulated drive with the APST table the kernel
would program for the tolerance, the link states the policy allows; idle
for --settle, then measure for --measure with the simulated meter. Prints
the recovered mean ± 95 % (batch means), the model's exact mean over the
same window, and their difference. --hub measures through an emulated
hub's 3.3 V rail instead, in real time (settle + measure per combination).`,
		Args: cobra.NoArgs,
		RunE: runAPSTIdle,
	}
	apstSetupFlags(id)
	id.Flags().String("latency-us", "0,5500,100000", "latency tolerances (µs, auto or any; comma-separated)")
	id.Flags().String("aspm", "performance,powersave,powersupersave", "pcie_aspm policies (comma-separated)")
	id.Flags().Duration("settle", time.Second, "idle before measuring")
	id.Flags().Duration("measure", 2*time.Second, "measurement window")
	id.Flags().Bool("json", false, "write the results as JSON")
	return id
}

func runAPSTIdle(cmd *cobra.Command, args []string) error {
	f := cmd.Flags()
	name, _ := f.GetString("sim")
	q, _ := f.GetString("quirk")
	lats, _ := f.GetString("latency-us")
	aspms, _ := f.GetString("aspm")
	settle, _ := f.GetDuration("settle")
	measure, _ := f.GetDuration("measure")
	seed, _ := f.GetUint64("seed")
	if settle < 0 || measure < 100*time.Millisecond || measure > time.Hour {
		return usageErr("--settle %v, --measure %v: settle ≥ 0, measure 100 ms to 1 h", settle, measure)
	}
	var rows []apst.IdleRow
	for _, l := range strings.Split(lats, ",") {
		for _, a := range strings.Split(aspms, ",") {
			s, err := apst.NewSetup(name, strings.TrimSpace(l), q, strings.TrimSpace(a))
			if err != nil {
				return apstErr(err)
			}
			s.SetSeed(seed + uint64(len(rows))) // independent noise per row
			if onHub, _ := f.GetBool("hub"); onHub {
				row, err := apst.IdleHub(cmd.Context(), s, settle, measure)
				if err != nil {
					return failErr("%w", err)
				}
				rows = append(rows, row)
			} else {
				rows = append(rows, apst.IdleSim(s, settle, measure))
			}
		}
	}
	return writeAPSTIdle(cmd, rows)
}

// writeAPSTIdle prints the idle rows as JSON (--json) or a table.
func writeAPSTIdle(cmd *cobra.Command, rows []apst.IdleRow) error {
	if j, _ := cmd.Flags().GetBool("json"); j {
		return writeJSON(cmd.OutOrStdout(), struct {
			Schema string         `json:"schema"`
			Rows   []apst.IdleRow `json:"results"`
		}{"idlewatt.apst-idle/1", rows})
	}
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "profile\ttolerance µs\taspm\tAPST path\tidle mW\ttruth mW\terror µW\tu95 µW")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.4f\t%.4f\t%+.1f\t%.1f\n", r.Profile, r.Tolerance, r.ASPM, r.Plan,
			r.MeanW*1e3, r.TruthW*1e3, r.ErrorW*1e6, r.U95W*1e6)
	}
	return tw.Flush()
}
