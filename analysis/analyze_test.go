package analysis_test

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/synthcap"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/testutil"
	"github.com/idlewatt/idlewatt/report"
	"github.com/idlewatt/idlewatt/units"
)

const ms = time.Millisecond

// twoDrives is 20 s at 10 kS/s: drive 1 idles at 0.4 W with a 5 ms and a
// 100 ms burst at 2 W; drive 2 idles at 0.2 W (60 % on 5 V) with no I/O.
func twoDrives() synthcap.Scenario {
	return synthcap.Scenario{
		RateHz: 10000, Duration: 20 * time.Second, StartHost: 5e12,
		Drives: []synthcap.Drive{
			{Port: 1, Name: "A 128GB", IdleW: 0.4, BusyW: 2.0},
			{Port: 2, Name: "B 256GB", IdleW: 0.2, BusyW: 1.5, Split5V: 0.6},
		},
		IO: []synthcap.IO{
			{Port: 1, Start: 2000 * ms, Dur: 5 * ms, Op: capture.OpRead, Size: 4096},
			{Port: 1, Start: 5000 * ms, Dur: 100 * ms, Op: capture.OpWrite, Size: 1 << 20},
		},
		Phases:    []synthcap.Phase{{At: 0, Name: "idle"}, {At: 4 * time.Second, Name: "workload:x"}, {At: 15 * time.Second, Name: "end"}},
		MarkEvery: time.Second, RTTMin: 400 * time.Microsecond, Jitter: 200 * time.Microsecond, Seed: 1,
	}
}

func analyze(t *testing.T, s synthcap.Scenario, opts analysis.Options) *analysis.Report {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.iwcap")
	if err := synthcap.Write(path, s); err != nil {
		t.Fatal(err)
	}
	r, err := analysis.Analyze(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var near = testutil.Near

func TestMetricsKnownSignal(t *testing.T) {
	r := analyze(t, twoDrives(), analysis.DefaultOptions())
	if len(r.Drives) != 2 {
		t.Fatalf("%d drives", len(r.Drives))
	}
	a, b := r.Drives[0], r.Drives[1]
	// Independent truth: 200 000 samples of 0.1 ms; 1 050 of them at 2 W.
	const n, busy = 200000, 1050
	eA := (float64(n-busy)*0.4 + busy*2.0) * 1e-4
	near(t, "A energy_j", float64(a.EnergyJ), eA, 1e-4)
	near(t, "A average_w", float64(a.AverageW), eA/20, 1e-4)
	near(t, "A duration_s", float64(a.DurationS), 20, 1e-4)
	near(t, "A active_idle_w", float64(a.ActiveIdleW), 0.4, 0.004)
	near(t, "A peak_w", float64(a.PeakW), 2.0, 1e-6)
	near(t, "A peak 10ms", float64(a.PeakWindows.W10ms), 2.0, 1e-6)
	near(t, "A peak 100ms", float64(a.PeakWindows.W100ms), 2.0, 1e-6)
	near(t, "A peak 1s", float64(a.PeakWindows.W1s), (1000*2.0+9000*0.4)/10000, 1e-6)
	near(t, "A energy_wh", a.EnergyWh, eA/3600, 1e-4)
	near(t, "B energy_j", float64(b.EnergyJ), 0.2*20, 1e-4)
	near(t, "B active_idle_w", float64(b.ActiveIdleW), 0.2, 0.004)
	if a.Samples.Count != n || a.Samples.Dropped != 0 {
		t.Errorf("A samples %+v", a.Samples)
	}
	// Busy: the two I/Os, ±1 sample at each edge.
	near(t, "A busy_s", float64(a.Segments.BusyS), 0.105, 0.003)
	near(t, "A settle_s", float64(a.Segments.SettleS), 1.0, 0.001)
	if a.IO.Ops != 2 || a.IO.Bytes != 4096+1<<20 || a.IO.ByOp["write"].Ops != 1 {
		t.Errorf("A io %+v", a.IO)
	}
	sum := a.Residency.Active + a.Residency.Idle + a.Residency.Partial + a.Residency.Slumber + a.Residency.DevSlp
	near(t, "A residency sum", sum, 1, 1e-12)
	near(t, "A residency active", a.Residency.Active, 0.105/20, 0.003)
	if b.IO.Ops != 0 || b.Residency.Idle != 1 {
		t.Errorf("B io %+v residency %+v", b.IO, b.Residency)
	}
	// Phases: idle [0,4) holds the 5 ms burst; workload [4,15) the 100 ms one.
	if len(a.Phases) != 2 {
		t.Fatalf("phases %+v", a.Phases)
	}
	idle, work := a.Phases[0], a.Phases[1]
	near(t, "idle phase energy", float64(idle.EnergyJ), (39950*0.4+50*2.0)*1e-4, 1e-4)
	near(t, "work phase average", float64(work.AverageW), (109000*0.4+1000*2.0)/110000, 1e-4)
	near(t, "work phase start", float64(work.StartS), 4, 1e-4)
	if idle.IO.Ops != 1 || work.IO.Ops != 1 {
		t.Errorf("phase ops %d %d", idle.IO.Ops, work.IO.Ops)
	}
	if r.Alignment.Method != "marks" || r.Alignment.MarksUsed < 3 {
		t.Errorf("alignment %+v", r.Alignment)
	}
	if !r.Capture.Complete {
		t.Error("capture not complete")
	}
}

func TestGapsCounted(t *testing.T) {
	s := twoDrives()
	s.Gaps = []synthcap.Gap{{Channel: 1, Start: 50000, Count: 2500}, {Channel: -1, Start: 120000, Count: 1000}}
	r := analyze(t, s, analysis.DefaultOptions())
	a, b := r.Drives[0], r.Drives[1]
	if a.Samples.Dropped != 3500 || a.Samples.Gaps != 2 || a.Samples.Count != 200000-3500 {
		t.Errorf("A samples %+v", a.Samples)
	}
	if b.Samples.Dropped != 1000 || b.Samples.Gaps != 1 {
		t.Errorf("B samples %+v", b.Samples)
	}
	// Missing samples are left out, not interpolated: B stays at 0.2 W.
	near(t, "B average", float64(b.AverageW), 0.2, 1e-6)
	near(t, "B duration", float64(b.DurationS), 19.9, 1e-4)
}

func TestNoIONoMarks(t *testing.T) {
	s := twoDrives()
	s.IO, s.MarkEvery, s.Phases = nil, 0, nil
	r := analyze(t, s, analysis.DefaultOptions())
	if r.Alignment.Method != "header" {
		t.Errorf("method %q", r.Alignment.Method)
	}
	a := r.Drives[0]
	near(t, "idle-only average", float64(a.AverageW), 0.4, 1e-6)
	if a.Residency.Idle != 1 || a.IO.Ops != 0 || len(a.Phases) != 0 {
		t.Errorf("residency %+v ops %d", a.Residency, a.IO.Ops)
	}
	if !hasNote(r, "no I/O events") || !hasNote(r, "no usable clock marks") {
		t.Errorf("notes %q", r.Notes)
	}
}

func TestTruncatedCapture(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.iwcap")
	if err := synthcap.Write(path, twoDrives()); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	if err := os.Truncate(path, fi.Size()*6/10); err != nil {
		t.Fatal(err)
	}
	r, err := analysis.Analyze(path, analysis.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if r.Capture.Complete || r.Capture.EndError == "" || !hasNote(r, "capture incomplete") {
		t.Errorf("capture %+v notes %q", r.Capture, r.Notes)
	}
	a := r.Drives[0]
	if a.DurationS < 5 || a.DurationS > 15 {
		t.Errorf("duration %v of a capture cut at 60 %%", a.DurationS)
	}
	near(t, "A active idle (truncated)", float64(a.ActiveIdleW), 0.4, 0.004)
}

func TestNoSuchPort(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.iwcap")
	if err := synthcap.Write(path, twoDrives()); err != nil {
		t.Fatal(err)
	}
	opts := analysis.DefaultOptions()
	opts.Ports = []int{3}
	_, err := analysis.Analyze(path, opts)
	if !errors.Is(err, analysis.ErrNoSuchPort) {
		t.Fatalf("err %v, want ErrNoSuchPort", err)
	}
	opts.Ports = []int{2}
	r, err := analysis.Analyze(path, opts)
	if err != nil || len(r.Drives) != 1 || r.Drives[0].Port != 2 {
		t.Fatalf("ports [2]: %v %+v", err, r)
	}
	// A port named twice is one drive (report --ports 1,1 printed a
	// second, all-null drive and an INCONCLUSIVE DevSlp verdict).
	opts.Ports = []int{2, 1, 2}
	r, err = analysis.Analyze(path, opts)
	if err != nil || len(r.Drives) != 2 || r.Drives[0].Port != 2 || r.Drives[1].Port != 1 {
		t.Fatalf("ports [2 1 2]: %v %+v", err, r)
	}
}

// threshold labels samples by power, as a stand-in for states/detect.
type threshold struct{}

func (threshold) Classify(s analysis.Sample) analysis.State {
	switch {
	case s.Power < 0.01:
		return analysis.StateDevSlp
	case s.Activity == analysis.Busy:
		return analysis.StateActive
	}
	return analysis.StateIdle
}

func TestClassifierDevSlp(t *testing.T) {
	s := twoDrives()
	s.Drives[0].DevSlpW = 0.005
	s.Pins = []synthcap.Pin{{Port: 1, From: 10 * time.Second, To: 12 * time.Second}, {Port: 1, From: 16 * time.Second, To: 17 * time.Second}}
	opts := analysis.DefaultOptions()
	opts.NewClassifier = func(capture.DriveInfo, units.Hertz) analysis.StateClassifier { return threshold{} }
	r := analyze(t, s, opts)
	a := r.Drives[0]
	d := a.DevSlp
	// Pins without devslp-cycle phases (a meter's file with a DEVSLP
	// line): each assertion is a cycle all the same, judged (pinCycles);
	// devslp.power_w is the floor (one quantity, one name). Its 5 mW sits
	// on the default limit: INCONCLUSIVE. The DevSlp-classified samples'
	// mean is state_power_w.devslp, checked below.
	if !d.Entered || d.Cycles != 2 || d.CyclesEntered != 2 || d.PinSource != "meter" || len(d.CycleResults) != 2 || d.Outcome != "inconclusive" {
		t.Errorf("devslp %+v", d)
	}
	if !d.FloorW.Ok() || math.Abs(float64(d.FloorW)-0.005) > 1e-5 || d.PowerW != d.FloorW {
		t.Errorf("devslp floor %v, power_w %v; want 5 mW both", d.FloorW, d.PowerW)
	}
	near(t, "devslp residency", a.Residency.DevSlp, 3.0/20, 1e-3)
	if !d.EntryMs.Ok() || float64(d.EntryMs) > 0.5 {
		t.Errorf("entry %v, want about 0 (the power falls with the pin)", d.EntryMs)
	}
	near(t, "pin asserted", float64(d.PinAssertedS), 3, 1e-3)
	near(t, "state power devslp", float64(a.StatePowerW.DevSlp), 0.005, 1e-6)
}

func hasNote(r *analysis.Report, sub string) bool {
	for _, n := range r.Notes {
		if len(n) >= len(sub) && contains(n, sub) {
			return true
		}
	}
	return false
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestWriteFilesCharts checks WriteFiles writes every report file and chart,
// the power distribution charts included, for a capture with samples.
func TestWriteFilesCharts(t *testing.T) {
	s := twoDrives()
	s.Duration = 3 * time.Second
	s.Drives[0].DevSlpW = 0.005
	s.Pins = []synthcap.Pin{{Port: 1, From: 2500 * ms, To: 2900 * ms}}
	r := analyze(t, s, analysis.DefaultOptions())
	dir := t.TempDir()
	if err := report.WriteFiles(r, dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{report.FileJSON, report.FileMD, report.FileCSV, report.FilePower,
		report.FileIdle, report.FileAverage, report.FileHist, report.FileCDF} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Error(err)
		} else if fi.Size() < 100 {
			t.Errorf("%s: %d bytes", name, fi.Size())
		}
	}
}

// FuzzAnalyze runs the whole analysis, both passes and the reading
// goroutine, over arbitrary bytes: it may fail, never panic.
func FuzzAnalyze(f *testing.F) {
	dir := f.TempDir()
	s := twoDrives()
	s.Duration, s.RateHz = 500*ms, 2000
	s.IO[0].Start, s.IO[1].Start = 100*ms, 300*ms
	s.Gaps = []synthcap.Gap{{Channel: 1, Start: 200, Count: 50}}
	seed := filepath.Join(dir, "seed.iwcap")
	if err := synthcap.Write(seed, s); err != nil {
		f.Fatal(err)
	}
	b, _ := os.ReadFile(seed)
	f.Add(b)
	f.Add(b[:len(b)*2/3])
	// A DevSlp cycle (phases, pin, read) exercises the cycle judgement.
	ds := devslpScenario()
	ds.Duration, ds.RateHz = 13*time.Second, 1000
	dseed := filepath.Join(dir, "devslp.iwcap")
	if err := synthcap.Write(dseed, ds); err != nil {
		f.Fatal(err)
	}
	db, _ := os.ReadFile(dseed)
	f.Add(db)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "c.iwcap")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		opts := analysis.DefaultOptions()
		opts.ChartBuckets = 50
		opts.States = &analysis.StateOptions{}
		if r, err := analysis.Analyze(path, opts); err == nil && r == nil {
			t.Fatal("nil report without an error")
		}
	})
}

// A phase shorter than a peak window has no peak for it (issue 29: a
// 0.2 ms phase showed a "Peak 1 s" — the 1 s before it); a phase as long
// as the window has one, within the phase's own power.
func TestShortPhaseHasNoLongPeak(t *testing.T) {
	s := twoDrives()
	s.Phases = append(s.Phases, synthcap.Phase{At: 5 * time.Second, Port: 1, Name: "short"},
		synthcap.Phase{At: 5*time.Second + 200*time.Microsecond, Port: 1, Name: "long"},
		synthcap.Phase{At: 8 * time.Second, Port: 1, Name: "end"})
	r := analyze(t, s, analysis.DefaultOptions())
	var short, long *analysis.Phase
	for i := range r.Drives[0].Phases {
		switch p := &r.Drives[0].Phases[i]; p.Name {
		case "short":
			short = p
		case "long":
			long = p
		}
	}
	if short == nil || long == nil {
		t.Fatalf("phases %+v", r.Drives[0].Phases)
	}
	pw := short.PeakWindows
	if !math.IsNaN(float64(pw.W1ms)) || !math.IsNaN(float64(pw.W10ms)) || !math.IsNaN(float64(pw.W100ms)) || !math.IsNaN(float64(pw.W1s)) {
		t.Errorf("a %d-sample phase has window peaks %+v, want none", short.Samples, pw)
	}
	lw := long.PeakWindows
	if math.IsNaN(float64(lw.W1ms)) || math.IsNaN(float64(lw.W1s)) || lw.W1s > long.PeakW+1e-12 {
		t.Errorf("a %.1f s phase: window peaks %+v (peak %v)", long.DurationS, lw, long.PeakW)
	}
}
