package rig

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/report"
	htmlreport "github.com/idlewatt/idlewatt/report/html"
	"github.com/idlewatt/idlewatt/states/alpm"
)

// IdlePlan is what an idle run compares: ALPM policies, or NVMe settings
// when NVMe is set (NVMe mode, IdleNVMe).
type IdlePlan struct {
	Policies []string      // checked by ParsePolicies
	NVMe     []NVMeSetting // NVMe mode; the policies are then ignored
	Settle   time.Duration // after each change, before measuring
	Measure  time.Duration // the window measured per policy or setting
	// Progress, if set, receives one status line about once a second.
	Progress io.Writer
	// NoHTML leaves out report.html (the report files are written anyway).
	NoHTML bool
}

// IdleResult is an idle run's results; its JSON form is idle.json
// (report.FileIdleRun).
type IdleResult struct {
	Schema   string      `json:"schema"`
	Capture  string      `json:"capture"`
	SettleS  float64     `json:"settle_s"`
	MeasureS float64     `json:"measure_s"`
	Results  []IdlePower `json:"results"`
	Notes    []string    `json:"notes,omitempty"`
	// EmuEpoch is the host time (ns) at which the emulator's clock read 0
	// (emulator only), as measure.json's: for comparing the windows with
	// the simulated drives' truth files.
	EmuEpoch hostclock.Time `json:"emu_epoch_host_ns,omitempty"`
	// File is idle.json's path once written ("" when it was not).
	File string `json:"-"`
	// Report is the analysis of the capture (nil when not analysed).
	Report *analysis.Report `json:"-"`
}

// RunIdle opens the rig, sets, settles and measures each policy (or NVMe
// setting) in turn, closes the rig (restoring what it changed), analyses
// the capture and writes idle.json into out through the report layer.
//
// A nil result is a rig that did not open. Otherwise the result holds what
// was measured; File is empty when the capture could not be analysed or
// idle.json not written (the error says which); a failure while measuring
// or closing still writes idle.json with the windows measured so far, and
// is returned.
func RunIdle(ctx context.Context, cfg Config, out string, plan IdlePlan, log io.Writer) (*IdleResult, error) {
	r, err := Open(ctx, cfg, out, log)
	if err != nil {
		return nil, err
	}
	var epoch hostclock.Time
	if clock := r.setup.clock(); clock != nil {
		now := hostclock.Now()
		epoch = now.Add(-time.Duration(clock(now)))
	}
	stopProgress := r.progress(plan.Progress, "idle")
	var windows []PolicyWindow
	var runErr error
	var nvmeNotes []string
	if plan.NVMe != nil {
		root := cfg.SysfsRoot
		if root == "" {
			root = alpm.DefaultRoot
		}
		windows, nvmeNotes, runErr = r.IdleNVMe(ctx, root, plan.NVMe, plan.Settle, plan.Measure)
	} else {
		windows, runErr = r.IdlePolicies(ctx, plan.Policies, plan.Settle, plan.Measure)
	}
	stopProgress()
	closeErr := r.Close()
	res := &IdleResult{Schema: "idlewatt.idle/v1", Capture: r.CapturePath(), SettleS: plan.Settle.Seconds(),
		MeasureS: plan.Measure.Seconds(), Notes: append(r.Notes(), nvmeNotes...), EmuEpoch: epoch}
	if ctx.Err() != nil {
		// Interrupted: the capture is closed and kept, not analysed (as
		// Run; `idlewatt report` of it gives the figures).
		return res, errors.Join(context.Cause(ctx), runErr)
	}
	if len(windows) > 0 {
		// The capture's report as `report` writes it (report.json/md,
		// summary.csv, charts, report.html), beside idle.json.
		opts := analysis.DefaultOptions()
		opts.States = &analysis.StateOptions{}
		var pyr *htmlreport.Pyramid
		if !plan.NoHTML {
			pyr = htmlreport.NewPyramidFor(r.CapturePath(), htmlreport.Budget{})
			opts.Samples = pyr
		}
		rep, err := analysis.Analyze(r.CapturePath(), opts)
		if err != nil {
			return res, fmt.Errorf("analysing %s: %v", r.CapturePath(), err)
		}
		res.Report = rep
		res.Results = MeasureIdlePower(rep, windows)
		if err := report.WriteFilesWith(rep, out, report.WriteOptions{Out: cfg.Out}); err != nil {
			runErr = errors.Join(runErr, fmt.Errorf("writing the report: %w", err))
		}
		if pyr != nil {
			ho := htmlreport.Options{Capture: r.CapturePath(), Out: cfg.Out}
			if err := htmlreport.Write(filepath.Join(out, htmlreport.FileName), rep, pyr, ho); err != nil {
				runErr = errors.Join(runErr, fmt.Errorf("writing %s: %w", htmlreport.FileName, err))
			}
		}
	}
	file := filepath.Join(out, report.FileIdleRun)
	if err := report.WriteJSONFile(file, res, cfg.Out); err != nil {
		return res, err
	}
	res.File = file
	if runErr != nil {
		return res, runErr
	}
	return res, closeErr
}

// PolicyWindow is when one policy's idle power was measured.
type PolicyWindow struct {
	Policy     string
	Start, End hostclock.Time // after the settle time, to the end of the phase
}

// IdlePolicies sets each policy in turn, lets the drives settle (phase
// "settle:POLICY"), and records measure of idle (phase "idle:POLICY", which
// analysis measures). The previous policies come back when the rig closes.
func (r *Rig) IdlePolicies(ctx context.Context, policies []string, settle, measure time.Duration) ([]PolicyWindow, error) {
	var out []PolicyWindow
	for _, p := range policies {
		if err := r.SetPolicy(ctx, p); err != nil {
			return out, err
		}
		r.Phase("settle:" + p)
		if err := r.wait(ctx, settle); err != nil {
			return out, err
		}
		r.Phase(IdlePhase(p))
		w := PolicyWindow{Policy: p, Start: hostclock.Now()}
		err := r.wait(ctx, measure)
		w.End = hostclock.Now()
		r.Phase("end")
		if err != nil {
			return out, err
		}
		out = append(out, w)
	}
	return out, nil
}

// IdlePhase is the name of the phase in which policy's idle power is
// measured.
func IdlePhase(policy string) string { return "idle:" + policy }

// IdlePower is one drive's idle power under one policy, as analysis found
// it in the policy's phase: the phase's quiet level (report.json
// phases[].quiet: background bursts left out, and reported on their own),
// like active_idle_w but over every link state the policy allows.
type IdlePower struct {
	Port   int     `json:"port"`
	Name   string  `json:"name"`
	Policy string  `json:"policy"`
	MeanW  float64 `json:"mean_w"` // the phase's quiet.w: quiet samples, bursts left out
	// U95W is MeanW's 95 % expanded uncertainty (the phase's quiet.u95_w);
	// null when it cannot be estimated (Note says why).
	U95W *float64 `json:"u95_w"`
	// AllMeanW is the plain mean over the phase, bursts included.
	AllMeanW     float64 `json:"all_mean_w"`
	MinW         float64 `json:"min_w"`
	MaxW         float64 `json:"max_w"`
	Samples      uint64  `json:"samples"`
	Bursts       int     `json:"bursts"`         // background bursts found
	BurstShare   float64 `json:"burst_share"`    // of the quiet time
	BurstEnergyJ float64 `json:"burst_energy_j"` // energy above the quiet level during them
	// SavingW is what the policy saves against the first policy measured.
	SavingW float64 `json:"saving_w"`
	Note    string  `json:"note,omitempty"`
}

// MeasureIdlePower reads each drive's policy phases from the report of the
// capture (analysis computes the numbers; this only picks them). A policy
// whose phase has no samples gets a note.
func MeasureIdlePower(rep *analysis.Report, ws []PolicyWindow) []IdlePower {
	var out []IdlePower
	for _, d := range rep.Drives {
		phases := map[string]analysis.Phase{}
		for _, ph := range d.Phases {
			phases[ph.Name] = ph
		}
		first := math.NaN()
		for j, w := range ws {
			ip := IdlePower{Port: d.Port, Name: d.Name, Policy: w.Policy, MeanW: math.NaN(), AllMeanW: math.NaN(), MinW: math.NaN(), MaxW: math.NaN(), SavingW: math.NaN()}
			ph, ok := phases[IdlePhase(w.Policy)]
			if !ok || ph.Samples == 0 {
				ip.Note = "no samples in the window: lengthen --measure"
				out = append(out, ip)
				continue
			}
			ip.MeanW, ip.U95W, ip.AllMeanW = float64(ph.Quiet.W), (*float64)(ph.Quiet.U95W), float64(ph.AverageW)
			ip.MinW, ip.MaxW, ip.Samples = float64(ph.MinW), float64(ph.PeakW), ph.Samples
			ip.Bursts, ip.BurstShare, ip.BurstEnergyJ = ph.Quiet.Bursts.Count, ph.Quiet.Bursts.Share, float64(ph.Quiet.Bursts.ExcessJ)
			if ip.U95W == nil {
				ip.Note = "too little quiet time for an uncertainty: lengthen --measure"
			}
			if j == 0 {
				first = ip.MeanW
			}
			ip.SavingW = first - ip.MeanW
			out = append(out, ip)
		}
	}
	return out
}

// MarshalJSON writes values not measured (NaN) as null.
func (ip IdlePower) MarshalJSON() ([]byte, error) {
	type plain IdlePower
	return analysis.MarshalNulls(plain(ip))
}

// UnmarshalJSON reads null as NaN.
func (ip *IdlePower) UnmarshalJSON(b []byte) error {
	type plain IdlePower
	return analysis.UnmarshalNulls(b, (*plain)(ip))
}

// ParsePolicies checks a list of policy names.
func ParsePolicies(names []string) ([]string, error) {
	var out []string
	for _, n := range names {
		p, err := alpm.ParseWritablePolicy(n)
		if err != nil {
			return nil, err
		}
		out = append(out, string(p))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no policies given")
	}
	return out, nil
}
