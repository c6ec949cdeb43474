package rig

// What `measure`, `demo`, `devslp verify` and `idle` print of a run: the
// headline a reviewer wants first, in the drive table's style
// (report.WriteDriveTable), with the DevSlp cycles and the battery cost.

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/judge"
	"github.com/idlewatt/idlewatt/internal/textsafe"
	"github.com/idlewatt/idlewatt/report"
	"github.com/idlewatt/idlewatt/report/livemetrics"
	"github.com/idlewatt/idlewatt/report/pqexport"
)

// WriteHeadline prints the numbers a reviewer wants first. In `devslp
// verify` (verify) the drives never run a workload and rest in Slumber
// between cycles, so the first column is their pre-cycle (Slumber) power,
// not an active idle they never showed, and each port's cycles follow.
func (res *Result) WriteHeadline(w io.Writer, verify bool) {
	rep := res.Report
	first := "active idle"
	var head func(d *analysis.DriveReport) string
	if verify {
		first, head = "pre-cycle", res.preCycle
	}
	fmt.Fprintln(w)
	report.WriteDriveTable(w, rep, first, head, !verify)
	for _, d := range rep.Drives {
		for _, ph := range d.Phases {
			if strings.HasPrefix(ph.Name, "workload:") {
				fmt.Fprintf(w, "%s %s: average %s W over %.1f s\n", textsafe.Terminal(d.Name), textsafe.Terminal(ph.Name), analysis.FormatPM(ph.AverageW, ph.AverageU95W, 3), ph.DurationS)
			}
		}
	}
	for _, p := range res.DevSlpPorts() {
		v := res.DevSlp[p]
		fmt.Fprintf(w, "DevSlp port %s: %s\n", p, textsafe.Terminal(v.String()))
		if v.PreCycleW.Ok() {
			// The resting power before each assertion: Slumber under a DIPM
			// policy, not active idle.
			fmt.Fprintf(w, "DevSlp port %s: pre-cycle (Slumber) power %s mW\n", p, judge.PM(v.PreCycleW, v.PreCycleU95W, 1e3))
		}
		if verify {
			writeCycles(w, p, v)
		}
	}
	report.WriteDeclared(w, rep)
	if !verify { // the battery estimate needs active idle, which verify does not measure
		res.writeBattery(w)
	}
	if q := rep.Drives; len(q) > 0 {
		s := q[0].Samples
		fmt.Fprintf(w, "data: %d samples per drive, %d dropped, %d CRC errors; clock residual %.3f ms\n",
			s.Count, s.Dropped, s.CRCErrors, rep.Alignment.ResidualRMSMS)
	}
	// The report's notes (missing samples, meter restarts, negative
	// readings, …) are part of the result, as `report` prints them.
	report.WriteNotes(w, "", rep.Notes)
	abs, _ := filepath.Abs(res.Out)
	fmt.Fprintf(w, "\nwritten to %s (report.md, report.json, summary.csv, measure.json, charts, report.html, capture)\n", textsafe.Terminal(abs))
}

// preCycle is a drive's pre-cycle (Slumber) power with its 95 % half-width.
func (res *Result) preCycle(d *analysis.DriveReport) string {
	if v, ok := res.DevSlp[strconv.Itoa(d.Port)]; ok && v.PreCycleW.Ok() {
		var u *float64
		if v.PreCycleU95W.Ok() {
			x := float64(v.PreCycleU95W)
			u = &x
		}
		return analysis.FormatPM(float64(v.PreCycleW), u, 3)
	}
	return analysis.Dash
}

func (res *Result) writeBattery(w io.Writer) {
	for _, b := range res.Battery {
		fmt.Fprintf(w, "battery: %s idles at %s W → %s min of battery life, %.1f min less than a drive that drew nothing", textsafe.Terminal(b.Name),
			analysis.FormatPM(b.IdleW, b.IdleU95W, 3), analysis.FormatPM(b.LifeMin, b.LifeU95Min, 0), b.CostMin)
		if b.DevSlpSavesMin > 0 {
			fmt.Fprintf(w, "; idling in DevSlp would give back %.1f min", b.DevSlpSavesMin)
		}
		fmt.Fprintln(w)
	}
}

// writeCycles is devslp verify's table of one port's cycles: each
// quantity with its 95 % half-width, as report.md's DevSlp table gives it.
func writeCycles(w io.Writer, port string, v judge.Verdict) {
	if len(v.Cycles) == 0 {
		return
	}
	fmt.Fprintf(w, "  %-5s %-13s %16s %16s %14s %14s %14s  %s\n", "cycle", "outcome", "pre-cycle mW", "floor mW", "entry ms", "rise ms", "exit ms", "reason")
	for _, c := range v.Cycles {
		name := strconv.Itoa(c.Cycle)
		if c.EntryOnly {
			name += "e" // an entry cycle: its floor is not pooled
		}
		reason := strings.Join(c.Reasons, "; ")
		fmt.Fprintf(w, "  %-5s %-13s %16s %16s %14s %14s %14s  %s\n", name, c.Outcome,
			judge.PM(c.PreCycleW, c.PreCycleU95W, 1e3), judge.PM(c.FloorW, c.FloorU95W, 1e3),
			judge.PM(c.EntryMs, c.EntryU95Ms, 1), judge.PM(c.RiseMs, c.RiseU95Ms, 1), judge.PM(c.ExitMs, c.ExitU95Ms, 1),
			textsafe.Terminal(reason))
	}
}

// DevSlpPorts are the ports with a DevSlp verdict, in order.
func (res *Result) DevSlpPorts() []string {
	ports := make([]string, 0, len(res.DevSlp))
	for p := range res.DevSlp {
		ports = append(ports, p)
	}
	sort.Strings(ports)
	return ports
}

// DevSlpFailure is the run's DevSlp verdicts as an error: one when any
// failed or is inconclusive; not_supported is no failure, but `devslp
// verify` (verify) with nothing verified fails too.
func (res *Result) DevSlpFailure(verify bool) error {
	var bad []string
	passed := 0
	for _, p := range res.DevSlpPorts() {
		switch v := res.DevSlp[p]; v.Outcome {
		case judge.Pass:
			passed++
		case judge.NotSupported:
		default:
			bad = append(bad, fmt.Sprintf("port %s %s", p, v))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("DevSlp verification: %s", strings.Join(bad, "; "))
	}
	if verify && passed == 0 {
		return fmt.Errorf("DevSlp verification: no drive supports DevSlp, nothing was verified")
	}
	return nil
}

// WriteTable prints idle.json's results as a table, with its notes, in the
// drive table's style: within 120 columns, units in the header, a name
// longer than its column on a line of its own. out is the run's directory.
func (res *IdleResult) WriteTable(w io.Writer, out string) {
	const nameW = 28
	pw := 24 // NVMe settings ("nvme_latency_us=…,aspm=…") are longer than policy names
	for _, ip := range res.Results {
		pw = max(pw, len(textsafe.Terminal(ip.Policy)))
	}
	fmt.Fprintf(w, "\n%-*s %-*s %20s %12s %15s\n", nameW, "drive", pw, "policy", "idle power (mW)", "saving (mW)", "bursts (n, %)")
	last := ""
	for _, ip := range res.Results {
		name := textsafe.Terminal(ip.Name)
		switch {
		case name == last:
			name = "" // the drive's next policy
		case len([]rune(name)) > nameW:
			fmt.Fprintln(w, name)
			last, name = name, ""
		default:
			last = name
		}
		if ip.Samples == 0 {
			fmt.Fprintf(w, "%-*s %-*s %20s  %s\n", nameW, name, pw, textsafe.Terminal(ip.Policy), "no samples", textsafe.Terminal(ip.Note))
			continue
		}
		var u *float64
		if ip.U95W != nil {
			mw := *ip.U95W * 1e3
			u = &mw
		}
		fmt.Fprintf(w, "%-*s %-*s %20s %12s %7d, %5.1f", nameW, name, pw, textsafe.Terminal(ip.Policy), analysis.FormatPM(ip.MeanW*1e3, u, 2),
			analysis.FormatV(ip.SavingW*1e3, 2), ip.Bursts, 100*ip.BurstShare)
		if ip.Note != "" {
			fmt.Fprintf(w, "  (%s)", textsafe.Terminal(ip.Note))
		}
		fmt.Fprintln(w)
	}
	for _, n := range res.Notes {
		fmt.Fprintln(w, "note:", textsafe.Terminal(n))
	}
	fmt.Fprintf(w, "\nwritten to %s (idle.json, report.md, report.json, summary.csv, charts, report.html, capture)\n", textsafe.Terminal(out))
}

// Verdicts counts the run's DevSlp verdicts in o's metrics and leaves the
// final figures in its textfile (nothing when o keeps no metrics).
func (res *Result) Verdicts(o *livemetrics.Observer) {
	m := o.Metrics()
	if m == nil {
		return
	}
	for p, v := range res.DevSlp {
		if port, err := strconv.Atoi(p); err == nil {
			o.Verdict(port, string(v.Outcome))
		}
	}
	o.Flush(m.LastStats())
}

// MeterLabel names the meter of c for a status line.
func (c Config) MeterLabel() string {
	if c.Meter.Kind == "emulator" {
		return "the emulated hub"
	}
	return c.Meter.Kind + " " + c.Meter.Port
}

// WriteParquet exports a run's capture and report (nil: nothing to
// export) as Parquet into OUT/parquet (--parquet, config parquet).
func WriteParquet(capture string, rep *analysis.Report, out string, overwrite bool) error {
	if rep == nil {
		return nil
	}
	host, _ := os.Hostname()
	dir := filepath.Join(out, "parquet")
	if err := pqexport.Write(capture, rep, dir, pqexport.Options{Overwrite: overwrite, Host: host}); err != nil {
		return fmt.Errorf("Parquet export into %s: %v", dir, err)
	}
	return nil
}
