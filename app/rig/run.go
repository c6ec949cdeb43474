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
	"github.com/idlewatt/idlewatt/analysis/judge"
	"github.com/idlewatt/idlewatt/capture/notes"
	"github.com/idlewatt/idlewatt/capture/record"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/report"
	htmlreport "github.com/idlewatt/idlewatt/report/html"
	"github.com/idlewatt/idlewatt/workload/replay"
)

// Battery describes a laptop for the battery-life estimate.
type Battery struct {
	CapacityWh    float64 `mapstructure:"capacity_wh" json:"capacity_wh"`         // full charge, Wh
	PlatformIdleW float64 `mapstructure:"platform_idle_w" json:"platform_idle_w"` // the laptop at idle without the drive, W
}

// Plan says which phases a run plays.
type Plan struct {
	Workload bool
	DevSlp   bool
	// Progress, if set, receives one status line about once a second
	// (record.ProgressLine), whose first word is Label ("" is "measure").
	Progress io.Writer
	Label    string
	Battery  Battery
	// NoHTML skips report.html (the interactive viewer, report/html).
	NoHTML bool
}

// Result is everything a run produced. Its JSON form is measure.json.
type Result struct {
	Schema   string                   `json:"schema"`
	Out      string                   `json:"out"`
	Capture  string                   `json:"capture"`
	ElapsedS float64                  `json:"elapsed_s"`
	Workload map[string]replay.Result `json:"workload,omitempty"` // by port
	DevSlp   map[string]judge.Verdict `json:"devslp,omitempty"`   // by port
	Battery  []BatteryLife            `json:"battery_life,omitempty"`
	Notes    []string                 `json:"notes,omitempty"`
	// EmuEpoch is the host time (ns) at which the emulator's clock read 0,
	// for comparing host timings with drive-model truth (emulator only;
	// exact when no drift or offset is configured).
	EmuEpoch hostclock.Time `json:"emu_epoch_host_ns,omitempty"`
	// EmuSample0 is the emulator time of the stream's sample index 0
	// (emulator only; absent when the stream was started more than once):
	// it puts every sample on the truth's clock exactly.
	EmuSample0 time.Duration `json:"emu_sample0_ns,omitempty"`
	// ClockUncertaintyMs bounds how well meter time maps to host time in
	// the DevSlp judgement: the report's alignment.clock_u95_ms. Exit
	// latencies (host read vs meter pin) carry it.
	ClockUncertaintyMs float64          `json:"clock_uncertainty_ms,omitempty"`
	Report             *analysis.Report `json:"-"`
}

// BatteryLife is what a drive's idle power costs a laptop. IdleW is the
// report's active_idle_w (analysis), the one active-idle figure of the run.
type BatteryLife struct {
	Port           int      `json:"port"`
	Name           string   `json:"name"`
	IdleW          float64  `json:"active_idle_w"`
	IdleU95W       *float64 `json:"active_idle_u95_w"`
	LifeMin        float64  `json:"life_min"`         // battery life with this drive at idle
	LifeU95Min     *float64 `json:"life_u95_min"`     // from active_idle_u95_w (the laptop's figures taken as exact)
	CostMin        float64  `json:"cost_min"`         // minutes lost against a drive that drew nothing
	DevSlpSavesMin float64  `json:"devslp_saves_min"` // minutes gained if it idled at its DevSlp floor instead
}

// Run opens the rig, plays the phases, closes it, analyses the capture and
// writes everything into out. A failed phase still leaves the capture and a
// report of what was recorded; the error says what failed.
func Run(ctx context.Context, cfg Config, out string, plan Plan) (*Result, error) {
	start := time.Now()
	r, err := Open(ctx, cfg, out, plan.Progress)
	if err != nil {
		return nil, err
	}
	res := &Result{Schema: "idlewatt.measure/v1", Out: out, Capture: r.CapturePath()}
	if clock := r.setup.clock(); clock != nil {
		now := hostclock.Now()
		res.EmuEpoch = now.Add(-time.Duration(clock(now)))
	}
	label := plan.Label
	if label == "" {
		label = "measure"
	}
	stopProgress := r.progress(plan.Progress, label)
	runErr := r.playPhases(ctx, plan, res)
	stopProgress()
	if t0, ok := r.setup.sampleZero(); ok {
		res.EmuSample0 = t0
	}
	closeErr := r.Close()
	res.Notes = r.Notes()
	unrecorded := r.unrecordedNotes()
	if closeErr != nil {
		runErr = errors.Join(runErr, closeErr)
	}

	// Interrupted (SIGINT/SIGTERM cancelled ctx): stop now, with the
	// capture closed and kept; analysing it could take longer than the
	// second a signal is given (docs/cli.md, "Signals"). `idlewatt report`
	// of the capture gives the report later.
	if ctx.Err() != nil {
		return res, errors.Join(context.Cause(ctx), runErr)
	}
	// Analyse whatever was recorded, even after a failure.
	rep, pyr, aerr := analyseRun(res.Capture, plan.NoHTML, unrecorded)
	if aerr != nil {
		return res, errors.Join(runErr, fmt.Errorf("analysis: %w", aerr))
	}
	res.Report = rep
	if plan.DevSlp {
		res.judgeDevSlp(rep)
	}
	var bnotes []string
	res.Battery, bnotes = batteryLife(rep, plan.Battery)
	res.Notes = append(res.Notes, bnotes...)
	res.ElapsedS = time.Since(start).Seconds()
	return res, res.writeFiles(out, r.cfg.Out, pyr, runErr)
}

// playPhases plays the plan's phases in order, up to the first that fails,
// and returns its error; the workload's results go into res.
func (r *Rig) playPhases(ctx context.Context, plan Plan, res *Result) error {
	var runErr error
	phase := func(f func() error) {
		if runErr == nil {
			runErr = f()
		}
	}
	phase(func() error { return r.ActiveIdlePhase(ctx, r.cfg.ActiveIdle) })
	phase(func() error { return r.Idle(ctx, "idle", r.cfg.Idle) })
	if plan.Workload {
		phase(func() error {
			wl, err := r.Workload(ctx, nil)
			if len(wl) > 0 {
				res.Workload = map[string]replay.Result{}
				for p, x := range wl {
					res.Workload[fmt.Sprint(p)] = x
				}
			}
			return err
		})
		phase(func() error { return r.Idle(ctx, "idle:after-workload", r.cfg.Idle) })
	}
	if plan.DevSlp {
		phase(func() error { return r.DevSlp(ctx) })
	}
	return runErr
}

// analyseRun analyses the closed capture (with the viewer's pyramid of
// samples unless noHTML) and adds the run's notes not recorded in it and
// the annotations made on the live view.
func analyseRun(capturePath string, noHTML bool, unrecorded []string) (*analysis.Report, *htmlreport.Pyramid, error) {
	opts := analysis.DefaultOptions()
	opts.States = &analysis.StateOptions{}
	var pyr *htmlreport.Pyramid
	if !noHTML {
		pyr = htmlreport.NewPyramidFor(capturePath, htmlreport.Budget{})
		opts.Samples = pyr
	}
	rep, err := analysis.Analyze(capturePath, opts)
	if err != nil {
		return nil, nil, err
	}
	// The run's notes made while recording are in the capture, so the
	// report has them (as a report of the capture does); the others are
	// added here.
	rep.Notes = append(rep.Notes, unrecorded...)
	// Notes made on the live view (--view) during the run.
	if ns, err := notes.Read(capturePath); err != nil {
		rep.Notes = append(rep.Notes, fmt.Sprintf("annotations not read: %v", err))
	} else {
		rep.Annotations = ns
	}
	return rep, pyr, nil
}

// writeFiles writes the report files, measure.json and (with a pyramid)
// report.html into out, and returns runErr with each failure joined to it.
func (res *Result) writeFiles(out string, o outfile.Options, pyr *htmlreport.Pyramid, runErr error) error {
	rep := res.Report
	if err := report.WriteFilesWith(rep, out, report.WriteOptions{Out: o}); err != nil {
		runErr = errors.Join(runErr, fmt.Errorf("writing the report: %w", err))
	}
	if err := report.WriteJSONFile(filepath.Join(out, report.FileMeasure), res, o); err != nil {
		runErr = errors.Join(runErr, err)
	}
	if pyr != nil {
		ho := htmlreport.Options{Capture: res.Capture, Out: o}
		if err := htmlreport.Write(filepath.Join(out, htmlreport.FileName), rep, pyr, ho); err != nil {
			runErr = errors.Join(runErr, fmt.Errorf("writing %s: %w", htmlreport.FileName, err))
		}
	}
	return runErr
}

// judgeDevSlp takes each drive's DevSlp verdict from the analysis (which
// judged the cycles from the capture, on its own clock fit).
func (res *Result) judgeDevSlp(rep *analysis.Report) {
	res.ClockUncertaintyMs = float64(rep.Alignment.ClockU95MS)
	res.DevSlp = map[string]judge.Verdict{}
	for _, d := range rep.Drives {
		if d.DevSlp.Verdict.Outcome != "" {
			res.DevSlp[fmt.Sprint(d.Port)] = d.DevSlp.Verdict
		}
	}
}

// batteryLife estimates battery life from each drive's active idle as
// analysis measured it. A drive without a measured active idle with an
// interval (no quiet time in active idle: devslp verify plays no idle
// phase, and the drive rests in Slumber between cycles) gets no estimate,
// and a note says why.
func batteryLife(rep *analysis.Report, b Battery) ([]BatteryLife, []string) {
	if b.CapacityWh <= 0 || b.PlatformIdleW <= 0 {
		return nil, nil
	}
	var out []BatteryLife
	var notes []string
	for _, d := range rep.Drives {
		idleW, idleU95W := float64(d.ActiveIdleW), (*float64)(d.ActiveIdleU95W)
		if math.IsNaN(idleW) || idleU95W == nil {
			notes = append(notes, fmt.Sprintf("battery: no estimate for %s: its active idle was not measured with an interval (no quiet time in active idle; an idle phase measures it)", d.Name))
			continue
		}
		life := func(w float64) float64 { return 60 * b.CapacityWh / (b.PlatformIdleW + w) }
		bl := BatteryLife{Port: d.Port, Name: d.Name, IdleW: idleW, IdleU95W: idleU95W, LifeMin: life(idleW)}
		// d(life)/dW = −life/(platform + W).
		u := bl.LifeMin / (b.PlatformIdleW + idleW) * *idleU95W
		bl.LifeU95Min = &u
		bl.CostMin = life(0) - bl.LifeMin
		if d.DevSlp.Entered && d.DevSlp.PowerW.Ok() && d.DevSlp.PowerW > 0 {
			bl.DevSlpSavesMin = life(float64(d.DevSlp.PowerW)) - bl.LifeMin
		}
		out = append(out, bl)
	}
	return out, notes
}

// progress prints the one progress line (record.ProgressLine, with the
// phase) once a second until the returned stop is called.
func (r *Rig) progress(w io.Writer, label string) (stop func()) {
	return record.ReportProgress(w, r.Progress, record.ProgressOptions{Label: label, Phase: r.CurrentPhase})
}
