package analysis_test

// Distrust the marks (issue 13 deliverable 4): one clock mark with a wrong
// meter index or a host time far off must not move the fit, and a drift no
// pair of crystals can have is refused with a note.

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/synthcap"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
)

// markEditor is a capture.Writer whose k-th mark (from 0) is edited.
type markEditor struct {
	*capture.Writer
	n    int
	edit func(k int, m *meter.MarkEcho)
}

func (w *markEditor) Mark(m meter.MarkEcho) error {
	w.edit(w.n, &m)
	w.n++
	return w.Writer.Mark(m)
}

func analyzeEdited(t *testing.T, s synthcap.Scenario, edit func(k int, m *meter.MarkEcho)) *analysis.Report {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.iwcap")
	w, err := capture.Create(path, s.Header(), capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := synthcap.Generate(s, &markEditor{Writer: w, edit: edit}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := analysis.Analyze(path, analysis.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestClockOutlierMarks(t *testing.T) {
	const drift = 40.0 // ppm: meter samples take longer than nominal
	s := twoDrives()
	s.DriftPPM = drift
	base := analyzeEdited(t, s, func(int, *meter.MarkEcho) {})
	// The unedited fit is right (TestMetricsKnownSignal checks the truth):
	// 200 000 samples at the drifted period.
	near(t, "baseline A duration_s", float64(base.Drives[0].DurationS), 20*(1+drift*1e-6), 1e-5)
	fast := func(m *meter.MarkEcho) { m.HostRecv = m.HostSent + 100e3 } // the lowest round trip of its window: selected
	for _, tc := range []struct {
		name string
		edit func(m *meter.MarkEcho)
	}{
		// The cases: drift −999,998 ppm and 0 J; 3.4 MJ over 2,000,010 s.
		{"wrong meter index", func(m *meter.MarkEcho) { m.MeterIndex *= 500000 }},
		{"meter index 0", func(m *meter.MarkEcho) { m.MeterIndex = 0; fast(m) }},
		{"host time outlier", func(m *meter.MarkEcho) { m.HostSent += 2e15; fast(m) }},
		{"host time early", func(m *meter.MarkEcho) { m.HostSent -= 3e9; fast(m) }},
	} {
		for _, at := range []int{0, 9, 18} { // first, middle, last of 19 marks
			t.Run(tc.name, func(t *testing.T) {
				r := analyzeEdited(t, s, func(k int, m *meter.MarkEcho) {
					if k == at {
						tc.edit(m)
					}
				})
				a := r.Alignment
				if a.Outliers != 1 || a.Method != "marks" {
					t.Errorf("mark %d: %d outliers, method %q, want 1 and marks", at, a.Outliers, a.Method)
				}
				if d := a.DriftPPM - drift; d < -10 || d > 10 {
					t.Errorf("mark %d: drift %.3f ppm, want %.0f", at, a.DriftPPM, drift)
				}
				// As if the bad mark were not there: the drift's effect on
				// energy is 4·10⁻⁵, so 2·10⁻⁵ separates a right fit from
				// the nominal rate, let alone from 0 J or 3.4 MJ.
				near(t, "A energy_j", float64(r.Drives[0].EnergyJ), float64(base.Drives[0].EnergyJ), 2e-5)
				near(t, "A duration_s", float64(r.Drives[0].DurationS), float64(base.Drives[0].DurationS), 2e-5)
				near(t, "capture duration_s", float64(r.Capture.DurationS), float64(base.Capture.DurationS), 2e-5)
				if notes := strings.Join(r.Notes, "\n"); !strings.Contains(notes, "selected clock marks rejected as outliers") {
					t.Errorf("notes:\n%s", notes)
				}
			})
		}
	}
}

// TestClockDriftRefused: every mark says the meter runs 2 % slow (a wrong
// header rate, or an RC-clocked meter). No pair of crystals drifts that far:
// the nominal rate is used and the report says so.
func TestClockDriftRefused(t *testing.T) {
	s := twoDrives()
	s.DriftPPM = 20000
	r := analyze(t, s, analysis.DefaultOptions())
	a := r.Alignment
	if a.DriftPPM != 0 || a.DriftRefusedPPM < 19990 || a.DriftRefusedPPM > 20010 || a.Method != "marks, nominal rate" {
		t.Errorf("alignment %+v", a)
	}
	// Nominal period: 200 000 samples are 20 s.
	near(t, "A duration_s", float64(r.Drives[0].DurationS), 20, 1e-9)
	if notes := strings.Join(r.Notes, "\n"); !strings.Contains(notes, "clock drift 1999") || !strings.Contains(notes, "refused") {
		t.Errorf("notes:\n%s", notes)
	}
	// A user with such a meter raises the bound and gets the fit.
	opts := analysis.DefaultOptions()
	opts.MaxDriftPPM = 50000
	r = analyze(t, s, opts)
	if d := r.Alignment.DriftPPM; d < 19990 || d > 20010 {
		t.Errorf("bound 50000 ppm: drift %.1f", d)
	}
	near(t, "A duration_s", float64(r.Drives[0].DurationS), 20*1.02, 1e-5)
}

// TestClockFewMarks: with three marks one wrong one is still outvoted; with
// two that disagree neither can be trusted.
func TestClockFewMarks(t *testing.T) {
	s := twoDrives()
	s.MarkEvery = 6 * time.Second // marks at 6, 12, 18 s
	r := analyzeEdited(t, s, func(k int, m *meter.MarkEcho) {
		if k == 1 {
			m.MeterIndex *= 1000
		}
	})
	if r.Alignment.Outliers != 1 || r.Alignment.MarksUsed != 2 {
		t.Errorf("3 marks, 1 wrong: %+v", r.Alignment)
	}
	near(t, "A duration_s", float64(r.Drives[0].DurationS), 20, 1e-5)
	s.MarkEvery = 8 * time.Second // marks at 8, 16 s
	r = analyzeEdited(t, s, func(k int, m *meter.MarkEcho) {
		if k == 1 {
			m.HostSent += 5e9
			m.HostRecv += 5e9
		}
	})
	if r.Alignment.Method != "header" || !strings.Contains(strings.Join(r.Notes, "\n"), "two clock marks disagree") {
		t.Errorf("2 marks disagreeing: %+v\n%s", r.Alignment, strings.Join(r.Notes, "\n"))
	}
	near(t, "A duration_s", float64(r.Drives[0].DurationS), 20, 1e-9)
}
