package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/report"
)

// onePathConfig is a short measure on the emulator: an active-idle phase,
// idle under a DIPM policy, a workload and DevSlp cycles, on a built-in
// drive (whose 4.5 mW floor fails the 3 mW limit: a FAIL line with a
// reason) and on a noisy user-defined one with a declared DevSlp figure.
const onePathConfig = `meter:
  kind: emulator
  rate_hz: 10000
emulator:
  seed: 7
profiles:
  noisy-ssd:
    base: jmf667h-256-a19
    noise_ma: 2.5
    devslp_w: 0.0015
    gc_every_s: 0.5
    gc_ms: 30
    gc_w: 0.5
drives:
  - name: builtin
    port: 1
    profile: jmf667h-128-a19
    size_bytes: 16777216
  - name: noisy
    port: 2
    profile: noisy-ssd
    size_bytes: 16777216
    expect:
      devslp_mw: 5
policy: med_power_with_dipm
active_idle: 500ms
idle: 1s
workload:
  trace: pcmark7
  app: defender
  scale: 0.02
  timing: compress-idle=200ms
devslp:
  cycles: 2
  policy: med_power_with_dipm
  settle: 700ms
  hold: 800ms
  return: 400ms
  limit_mw: 3
`

// onePathFiles are the outputs compared byte for byte.
var onePathFiles = []string{report.FileJSON, report.FileStates, report.FileMD, report.FileCSV}

// hideProfiles copies the capture at in to out with the answer key taken
// out: no drive names a profile, and the header keeps no config (the rig
// records its config, profiles included, there).
func hideProfiles(t *testing.T, in, out string) {
	t.Helper()
	r, err := capture.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := r.Header()
	h.Config = nil
	h.Drives = append([]capture.DriveInfo(nil), h.Drives...)
	for i := range h.Drives {
		h.Drives[i].Profile = ""
	}
	f, err := outfile.Create(out, outfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	w, err := capture.NewWriter(f, h, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := capture.Salvage(context.Background(), w, r); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
}

// measureAnalysis writes the report files of capture as measure makes
// them: analysis.Analyze on the file (rig.Run's call), then the writers.
func measureAnalysis(t *testing.T, capPath, dir string) {
	t.Helper()
	opts := analysis.DefaultOptions()
	opts.States = &analysis.StateOptions{}
	rep, err := analysis.Analyze(capPath, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteFilesWith(rep, dir, report.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
}

func sameFiles(t *testing.T, what, a, b string, norm func(string) string) {
	t.Helper()
	for _, f := range onePathFiles {
		x, err1 := os.ReadFile(filepath.Join(a, f))
		y, err2 := os.ReadFile(filepath.Join(b, f))
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v %v", what, err1, err2)
		}
		xs, ys := norm(string(x)), norm(string(y))
		if xs == ys {
			continue
		}
		xl, yl := strings.Split(xs, "\n"), strings.Split(ys, "\n")
		for i := range min(len(xl), len(yl)) {
			if xl[i] != yl[i] {
				t.Errorf("%s: %s differs at line %d:\n  %s\n  %s", what, f, i+1, xl[i], yl[i])
				break
			}
		}
		if len(xl) != len(yl) {
			t.Errorf("%s: %s has %d lines, the other %d", what, f, len(xl), len(yl))
		}
	}
}

// TestReportOfMeasureIsMeasure runs measure on the emulator, then `report`
// on its capture, and wants report.json, states.json, report.md and
// summary.csv byte for byte as measure wrote them: one path, every figure,
// state and interval. Then the same capture with its profile names and
// recorded config taken out, through measure's analysis call and through
// `report` (the command's cancellable source): both must give the same
// bytes as each other, and as the capture with its profiles — the levels
// are learned from the capture, whatever its drives are called.
func TestReportOfMeasureIsMeasure(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end run on the emulator")
	}
	dir := t.TempDir()
	if d := os.Getenv("ONEPATH_DIR"); d != "" {
		dir = d
	}
	cfg := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(cfg, []byte(onePathConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	run1 := filepath.Join(dir, "run")
	stdout, stderr, code := run(t, context.Background(), "measure", "--config", cfg, "--out", run1, "--quiet")
	if code != 0 && code != 1 {
		t.Fatalf("measure: exit %d\n%s\n%s", code, stdout, stderr)
	}
	capPath := filepath.Join(run1, "capture.iwcap")
	rep1 := filepath.Join(dir, "report")
	rout, e, c := run(t, context.Background(), "report", capPath, "--out", rep1, "--no-html")
	if c != 0 {
		t.Fatalf("report: exit %d\n%s\n%s", c, rout, e)
	}
	t.Logf("measure:\n%s", stdout)
	// One value per named quantity in each command's outputs.
	checkOneValueEach(t, run1, stdout)
	checkOneValueEach(t, rep1, rout)
	if !strings.Contains(stdout, "FAIL") || !strings.Contains(stdout, "declared: noisy: DevSlp floor: datasheet 5 mW") {
		t.Errorf("measure's terminal lacks the FAIL verdict or the declared figure:\n%s", stdout)
	}
	same := func(s string) string { return s }
	sameFiles(t, "measure vs report of its capture", run1, rep1, same)

	hidden := filepath.Join(dir, "hidden.iwcap")
	hideProfiles(t, capPath, hidden)
	viaAnalyze := filepath.Join(dir, "hidden-measure")
	measureAnalysis(t, hidden, viaAnalyze)
	viaReport := filepath.Join(dir, "hidden-report")
	if o, e, c := run(t, context.Background(), "report", hidden, "--out", viaReport, "--no-html"); c != 0 {
		t.Fatalf("report of the hidden capture: exit %d\n%s\n%s", c, o, e)
	}
	sameFiles(t, "hidden capture: measure's analysis vs report", viaAnalyze, viaReport, same)
	// Against the capture with its profiles: only the path, the profile key
	// and the file's size (rewritten) may differ.
	unname := func(s string) string {
		s = strings.ReplaceAll(s, hidden, capPath)
		var out []string
		for _, l := range strings.Split(s, "\n") {
			if !strings.Contains(l, `"profile": `) && !strings.Contains(l, `"end_offset_bytes": `) {
				out = append(out, l)
			}
		}
		return strings.Join(out, "\n")
	}
	sameFiles(t, "hidden vs named capture", viaReport, rep1, unname)

	// The run was classified: no drive without levels.
	b, _ := os.ReadFile(filepath.Join(rep1, report.FileStates))
	if bytes.Contains(b, []byte("levels not learned")) || bytes.Contains(b, []byte("cannot be read sample by sample")) {
		t.Errorf("a drive was not classified:\n%s", b)
	}
}
