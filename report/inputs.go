package report

// What the commands that read captures and reports share: a capture's
// analysis with its errors classed as the command line needs them, the
// report.json inputs of compare and the captures compare.html draws.

import (
	"context"
	"errors"
	"fmt"
	"github.com/idlewatt/idlewatt/units"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/capture/importer"
	"github.com/idlewatt/idlewatt/capture/notes"
	"github.com/idlewatt/idlewatt/internal/ctxio"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/settings"
	meterfiles "github.com/idlewatt/idlewatt/meter/files"
	htmlreport "github.com/idlewatt/idlewatt/report/html"
)

// Opener opens the capture at path once per analysis pass, each pass
// stopping when ctx is done (capture.Passes: a FIFO is refused, analysis
// reads twice), and says how far the passes are. who is the command
// ("idlewatt report"), for messages.
func Opener(ctx context.Context, path, who string) (analysis.Opener, *capture.Pos, error) {
	open, at, err := capture.Passes(ctx, path, who)
	if err != nil {
		return nil, nil, err
	}
	return func() (analysis.Source, error) {
		r, err := open()
		if err != nil {
			return nil, err
		}
		return r, nil
	}, at, nil
}

// Analyze runs the analysis of the capture at path (opened by open) for
// the command who. A signal during it ends a pass early, which the
// analysis would take for a capture cut short: that report describes the
// signal, not the capture, and ctx's cause is returned instead. Any other
// failure is bad input (settings.ErrUsage): the capture, or an option
// (--ports) that does not fit it.
func Analyze(ctx context.Context, open analysis.Opener, path, who string, opts analysis.Options) (*analysis.Report, error) {
	r, err := analysis.AnalyzeSource(open, opts)
	if r != nil {
		r.Capture.Path = path
	}
	if err := ctxio.Interrupted(ctx)(); err != nil {
		return nil, err
	}
	switch {
	case err == nil:
		return r, nil
	case errors.Is(err, analysis.ErrNoSuchPort): // say which flag, and of which capture
		return nil, settings.Input(fmt.Errorf("%s: --ports: %s: %w", lastWord(who), path, err))
	case errors.Is(err, os.ErrNotExist), errors.Is(err, capture.ErrNotCapture), errors.Is(err, capture.ErrVersion),
		errors.Is(err, capture.ErrTruncated), errors.Is(err, capture.ErrInvalid), errors.Is(err, analysis.ErrNoChannels),
		errors.Is(err, analysis.ErrOptions):
		return nil, settings.Input(err)
	}
	return nil, settings.Input(fmt.Errorf("%s: %w", path, err))
}

func lastWord(s string) string { return s[strings.LastIndexByte(s, ' ')+1:] }

// NoPower is bad input when no drive of r has a single power sample —
// every drive lacks a rail, as when damage took one rail's samples: a
// report of nulls is not a measurement. out is where it went, or is not
// written.
func NoPower(path, out string, r *analysis.Report) error {
	for _, d := range r.Drives {
		if d.Samples.Count > 0 {
			return nil
		}
	}
	return settings.Input(fmt.Errorf("%s: no drive has a power sample (each lacks a rail; see the notes above); the report in %s holds only nulls", path, out))
}

// LoadJSON reads a report.json (compare's inputs), stopping when ctx is
// done.
func LoadJSON(ctx context.Context, path string) (*analysis.Report, error) {
	f, err := ctxio.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	in := ctxio.NewReader(ctx, f)
	defer in.Close()
	r, err := analysis.ReadJSON(in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// MaxCompareDrives bounds the rows of one comparison (drives summed over
// every report): a 25,000-drive report.json drew for 90 s, deaf to
// SIGTERM, into 25 MB charts.
const MaxCompareDrives = 500

// CompareInputs reads compare's report.json files, each checked
// (analysis.CheckCompareInput: an impossible headline value is bad input,
// named by file and key) and labelled by its directory's name (its own
// name when it has none), within MaxCompareDrives.
func CompareInputs(ctx context.Context, paths []string) ([]*analysis.Report, []string, error) {
	var reps []*analysis.Report
	var labels []string
	rows := 0
	for _, a := range paths {
		r, err := LoadJSON(ctx, a)
		if err != nil {
			return nil, nil, settings.Input(err)
		}
		if err := analysis.CheckCompareInput(r); err != nil {
			return nil, nil, settings.Input(fmt.Errorf("compare: %s: %w", a, err))
		}
		reps = append(reps, r)
		label := filepath.Base(filepath.Dir(a))
		if label == "." || label == "/" {
			label = filepath.Base(a)
		}
		labels = append(labels, label)
		rows += len(r.Drives)
	}
	if rows > MaxCompareDrives {
		return nil, nil, settings.Usagef("compare: %d drives across the reports; at most %d fit one table and chart", rows, MaxCompareDrives)
	}
	return reps, labels, nil
}

// CompareBaseline resolves --baseline to an index into labels: a number
// 1..len(labels) is a position (it wins over a run labelled the same), else
// the one run with that label.
func CompareBaseline(v string, labels []string) (int, error) {
	if n, err := strconv.Atoi(v); err == nil {
		if n < 1 || n > len(labels) {
			return 0, fmt.Errorf("%d: there are %d runs (1..%d)", n, len(labels), len(labels))
		}
		return n - 1, nil
	}
	found := -1
	for i, l := range labels {
		if l != v {
			continue
		}
		if found >= 0 {
			return 0, fmt.Errorf("%q names runs %d and %d; give the position", v, found+1, i+1)
		}
		found = i
	}
	if found < 0 {
		return 0, fmt.Errorf("%q: no run has that label (runs: %s)", v, strings.Join(labels, ", "))
	}
	return found, nil
}

// CompareRuns re-reads each report's capture into a pyramid for
// compare.html: caps[i] when given (--capture), else the report's
// capture.path (as written, else relative to the report's directory, else
// its file name in the report's directory, for a run directory moved after
// the run). The numbers stay the report's; the capture only gives the
// trace, and must be the one the report was computed from (the same
// drives and sample counts). Each capture joins oo's inputs. who is the
// command, for messages.
func CompareRuns(ctx context.Context, who string, args, caps []string, reps []*analysis.Report, labels []string, oo *outfile.Options) ([]htmlreport.CompareRun, error) {
	var runs []htmlreport.CompareRun
	for i, r := range reps {
		path, err := compareCapture(args[i], caps, i, r)
		if err != nil {
			return nil, err
		}
		opts := analysis.DefaultOptions()
		opts.States = &analysis.StateOptions{}
		// The runs share one report.html's size budget.
		pyr := htmlreport.NewPyramidFor(path, htmlreport.CompareBudget(len(reps)))
		opts.Samples = pyr
		open, _, err := Opener(ctx, path, who)
		if err != nil {
			return nil, err
		}
		again, err := Analyze(ctx, open, path, who, opts)
		if err != nil {
			return nil, err
		}
		if err := sameRun(r, again); err != nil {
			return nil, settings.Usagef("compare: --html: %s is not the capture of %s: %w", path, args[i], err)
		}
		oo.Inputs = append(oo.Inputs, path) // never written over
		runs = append(runs, htmlreport.CompareRun{Label: labels[i], Report: r, Pyramid: pyr, Capture: path})
	}
	return runs, nil
}

// compareCapture finds the capture of report r (args[i]): caps[i], else
// its capture.path where it is found.
func compareCapture(arg string, caps []string, i int, r *analysis.Report) (string, error) {
	var path string
	if len(caps) > 0 {
		path = caps[i]
	} else {
		path = r.Capture.Path
		if path == "" {
			return "", settings.Usagef("compare: --html: %s names no capture (capture.path); give it with --capture", arg)
		}
		// A relative capture.path is relative to where the run was
		// made (demo, measure), else to the report; a run directory
		// moved elsewhere still holds its capture beside report.json.
		if _, err := os.Stat(path); err != nil {
			dir := filepath.Dir(arg)
			var alts []string
			if !filepath.IsAbs(path) {
				alts = append(alts, filepath.Join(dir, path))
			}
			for _, alt := range append(alts, filepath.Join(dir, filepath.Base(path))) {
				if _, err := os.Stat(alt); err == nil {
					path = alt
					break
				}
			}
		}
	}
	if _, err := os.Stat(path); err != nil {
		return "", settings.Usagef("compare: --html: the capture of %s: %w (give it with --capture)", arg, err)
	}
	if !capture.IsCapture(path) && meterfiles.Sniff(path) != nil {
		// A report made straight from another meter's file: compare has
		// no import flags (--voltage, lines) to read it again with.
		return "", settings.Usagef("compare: --html: %s (the source of %s) is another meter's file, not a capture: import it (idlewatt import %s --out %s.iwcap), report that capture, and compare those reports", path, arg, path, path)
	}
	return path, nil
}

// sameRun says how a re-analysed capture differs from the report: another
// drive, another number of samples or another energy (which no analysis
// option changes).
func sameRun(r, again *analysis.Report) error {
	if len(r.Drives) != len(again.Drives) {
		return fmt.Errorf("%d drives, the report has %d", len(again.Drives), len(r.Drives))
	}
	for k := range r.Drives {
		d, e := &r.Drives[k], &again.Drives[k]
		if d.Port != e.Port || d.Name != e.Name || d.Samples.Count != e.Samples.Count {
			return fmt.Errorf("port %d %q with %d samples, the report has port %d %q with %d", e.Port, e.Name, e.Samples.Count, d.Port, d.Name, d.Samples.Count)
		}
		dj, ej := float64(d.EnergyJ), float64(e.EnergyJ)
		if !(dj == ej || math.Abs(dj-ej) <= 1e-9*math.Abs(dj) || (math.IsNaN(dj) && math.IsNaN(ej))) {
			return fmt.Errorf("port %d %q drew %.9g J, the report says %.9g J", e.Port, e.Name, e.EnergyJ, d.EnergyJ)
		}
	}
	return nil
}

// AttachNotes puts the capture's notes (capture/notes) into r — those that
// reach into its interval, when it has one. A notes file that cannot be
// read is a note of r, and returned for the caller to warn; r is still
// whole.
func AttachNotes(r *analysis.Report, capturePath string) (warning string) {
	ns, err := notes.Read(capturePath)
	if err != nil {
		msg := fmt.Sprintf("annotations not shown: %v", err)
		r.Notes = append(r.Notes, msg)
		return msg
	}
	if iv := r.Interval; iv != nil {
		var in []notes.Note
		for _, n := range ns {
			end := n.AtS
			if n.ToS != nil {
				end = *n.ToS
			}
			if units.Seconds(end) >= iv.FromS && units.Seconds(n.AtS) <= iv.ToS {
				in = append(in, n)
			}
		}
		ns = in
	}
	r.Annotations = ns
	return ""
}

// PlotInput is importer.Input for plot: a JLS file with a power signal is
// drawn from its own summary levels (importer.Overview: its samples are
// read only if the chart needs them, zoomed), anything else as
// importer.Input gives it. It returns the path to check, the opener of the
// passes and done, which removes what it made.
func PlotInput(ctx context.Context, g settings.Getter, path, who, tool string, log io.Writer, zoomed bool) (string, analysis.Opener, func(), error) {
	none := func() {}
	name := lastWord(who)
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && !zoomed {
		if f := meterfiles.Sniff(path); f != nil && f.Name == "jls" {
			fo, err := importer.FileOptions(g)
			if err != nil {
				return "", nil, none, err
			}
			ov, err := importer.OpenOverview(ctx, path, importer.Options{Options: fo, Tool: tool})
			switch {
			case err == nil:
				open := func() (analysis.Source, error) {
					if err := context.Cause(ctx); err != nil {
						return nil, err
					}
					return ov.Source(), nil
				}
				return path, open, func() { ov.Close() }, nil
			case !errors.Is(err, importer.ErrNoOverview):
				return "", nil, none, importer.Classify(name, err)
			}
		}
	}
	in, done, err := importer.Input(ctx, g, path, name, tool, log, false)
	if err != nil {
		return "", nil, none, err
	}
	open, _, err := Opener(ctx, in, who)
	if err != nil {
		done()
		return "", nil, none, err
	}
	return in, open, done, nil
}
