package apst

// `apst verify` and `apst idle` (issue 18): their settings, declared once,
// checked here, and what they print.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/idlewatt/idlewatt/analysis/judge"
	"github.com/idlewatt/idlewatt/internal/settings"
)

// setupFlags are the settings of both commands: the simulated drive and
// the meter.
var setupFlags = []settings.Flag{
	{Name: "sim", Kind: settings.String, Default: "980pro-1tb", Help: "built-in simulated NVMe drive (980pro-1tb, 660p-1tb)"},
	{Name: "quirk", Kind: settings.String, Help: "kernel quirks to apply to the drive (NO_APST, NO_DEEPEST_PS; comma-separated)"},
	{Name: "seed", Kind: settings.Uint64, Default: uint64(1), Help: "the simulated meter's noise seed"},
	{Name: "hub", Kind: settings.Bool, Help: "measure on an emulated hub's 3.3 V rail through the hub driver, in real time, instead of the simulated meter"},
}

// VerifyFlags are `apst verify`'s settings.
var VerifyFlags = append(append([]settings.Flag(nil), setupFlags...), []settings.Flag{
	{Name: "latency-us", Kind: settings.String, Default: "100000", Help: "the NVMe latency tolerance the kernel plans APST for (µs, auto or any)"},
	{Name: "aspm", Kind: settings.String, Default: "powersupersave", Help: "pcie_aspm policy: which link states the drive may use"},
	{Name: "cycles", Kind: settings.Int, Default: 10, Help: "APST cycles"},
	{Name: "expect-ps", Kind: settings.Int, Default: -1, Help: "the non-operational state to expect (default: the deepest the quirks allow)"},
	{Name: "levels", Kind: settings.String, Default: "table", Help: "state levels: table (the power-state table) or learned (from the capture)"},
	{Name: "entry-scale", Kind: settings.Float, Default: 0.6, Help: "the simulated drive's actual entry latency ÷ the declared one"},
	{Name: "exit-scale", Kind: settings.Float, Default: 0.6, Help: "the simulated drive's actual exit latency ÷ the declared one"},
	{Name: "json", Kind: settings.Bool, Help: "write the verdict as JSON"},
}...)

// IdleFlags are `apst idle`'s settings.
var IdleFlags = append(append([]settings.Flag(nil), setupFlags...), []settings.Flag{
	{Name: "latency-us", Kind: settings.String, Default: "0,5500,100000", Help: "latency tolerances (µs, auto or any; comma-separated)"},
	{Name: "aspm", Kind: settings.String, Default: "performance,powersave,powersupersave", Help: "pcie_aspm policies (comma-separated)"},
	{Name: "settle", Kind: settings.GoDuration, Default: time.Second, Help: "idle before measuring"},
	{Name: "measure", Kind: settings.GoDuration, Default: 2 * time.Second, Help: "measurement window"},
	{Name: "json", Kind: settings.Bool, Help: "write the results as JSON"},
}...)

// inputFlags names the flag of each InputError field.
var inputFlags = map[string]string{"profile": "--sim", "tolerance": "--latency-us", "quirk": "--quirk", "aspm": "--aspm", "expect_ps": "--expect-ps"}

// usage makes an InputError a usage error naming its flag.
func usage(err error) error {
	var ie *InputError
	if errors.As(err, &ie) {
		return settings.Usagef("%s: %v", inputFlags[ie.Field], ie.Err)
	}
	return err
}

// The flags' values as the flag parsed them (a NaN scale is refused as out
// of range, by name, not as "not a finite number").
func float(g settings.Getter, flag string) float64 {
	x, _ := strconv.ParseFloat(g.String(flag), 64)
	return x
}

func uint64Of(g settings.Getter, flag string) uint64 {
	n, _ := strconv.ParseUint(g.String(flag), 10, 64)
	return n
}

// RunVerify is `apst verify`: it writes the verdict to w (text, or JSON)
// and fails unless it is pass.
func RunVerify(ctx context.Context, g settings.Getter, w io.Writer) error {
	s, err := NewSetup(g.String("sim"), g.String("latency-us"), g.String("quirk"), g.String("aspm"))
	if err != nil {
		return usage(err)
	}
	entry, exit, seed := float(g, "entry-scale"), float(g, "exit-scale"), uint64Of(g, "seed")
	if !(entry > 0 && exit > 0 && entry <= 100 && exit <= 100) {
		return settings.Usagef("--entry-scale %g, --exit-scale %g: each must be in (0, 100]", entry, exit)
	}
	s.SetLatencyScale(entry, exit)
	s.SetSeed(seed)
	n, _ := g.Int("cycles")
	if n < 1 || n > 1000 {
		return settings.Usagef("--cycles %d: give 1 to 1000", n)
	}
	lv := g.String("levels")
	if lv != "table" && lv != "learned" {
		return settings.Usagef("--levels %q: table or learned", lv)
	}
	expect, _ := g.Int("expect-ps")
	res, err := Verify(ctx, s, VerifyOptions{Cycles: n, ExpectPS: expect, Learn: lv == "learned", Hub: g.Bool("hub")})
	if err != nil {
		return usage(err)
	}
	if g.Bool("json") {
		if err := writeJSON(w, res); err != nil {
			return err
		}
	} else {
		res.WriteText(w)
	}
	if !res.Verdict.Pass() {
		return fmt.Errorf("APST verification: %s", res.Verdict.String())
	}
	return nil
}

// WriteText writes the verdict with its cycles as a table.
func (r VerifyResult) WriteText(w io.Writer) {
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

// RunIdle is `apst idle`: a row per latency tolerance × ASPM policy,
// written to w as a table or JSON.
func RunIdle(ctx context.Context, g settings.Getter, w io.Writer) error {
	settle, _ := g.Duration("settle")
	measure, _ := g.Duration("measure")
	seed := uint64Of(g, "seed")
	if settle < 0 || measure < 100*time.Millisecond || measure > time.Hour {
		return settings.Usagef("--settle %v, --measure %v: settle ≥ 0, measure 100 ms to 1 h", settle, measure)
	}
	var rows []IdleRow
	for _, l := range strings.Split(g.String("latency-us"), ",") {
		for _, a := range strings.Split(g.String("aspm"), ",") {
			s, err := NewSetup(g.String("sim"), strings.TrimSpace(l), g.String("quirk"), strings.TrimSpace(a))
			if err != nil {
				return usage(err)
			}
			s.SetSeed(seed + uint64(len(rows))) // independent noise per row
			if g.Bool("hub") {
				row, err := IdleHub(ctx, s, settle, measure)
				if err != nil {
					return err
				}
				rows = append(rows, row)
			} else {
				rows = append(rows, IdleSim(s, settle, measure))
			}
		}
	}
	if g.Bool("json") {
		return writeJSON(w, struct {
			Schema string    `json:"schema"`
			Rows   []IdleRow `json:"results"`
		}{"idlewatt.apst-idle/1", rows})
	}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "profile\ttolerance µs\taspm\tAPST path\tidle mW\ttruth mW\terror µW\tu95 µW")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.4f\t%.4f\t%+.1f\t%.1f\n", r.Profile, r.Tolerance, r.ASPM, r.Plan,
			r.MeanW*1e3, r.TruthW*1e3, r.ErrorW*1e6, r.U95W*1e6)
	}
	return tw.Flush()
}

func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
