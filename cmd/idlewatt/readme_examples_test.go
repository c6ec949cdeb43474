package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// readmeNotRun are the README's example commands this test does not run,
// each with why; every other example line must run as written (issue 29
// item 5). A new example is either run or listed here.
var readmeNotRun = map[string]string{
	"idlewatt measure --config fixtures/configs/real-hub.yaml --out run1":                                  "a real hub on /dev/ttyACM0",
	"idlewatt idle --config my.yaml --policies max_performance,med_power_with_dipm,min_power":              "the user's own config (my.yaml) and hardware",
	"idlewatt devslp verify --config my.yaml --cycles 10":                                                  "the user's own config (my.yaml) and hardware",
	"idlewatt hub emulate --profile jmf667h-128-a19,ssd340":                                                "runs until interrupted (TestHubEmulateSATAAndNVMe runs the emulator)",
	"idlewatt record --meter hub --port /dev/ttyACM0 --duration 10m --out run.iwcap --view 127.0.0.1:8080": "a real hub on /dev/ttyACM0 for 10 minutes; run.iwcap is made here instead (95 s, synthetic) for the examples that read it",
	"idlewatt replay --trace defender.trace --target /tmp/scratch.img --timing recorded":                   "about 2 minutes in real time and a 16 GiB target (scripts/bench-fio.sh plays traces)",
	"idlewatt bench --target /tmp/scratch.img --pattern randread4k --qd 32 --duration 10s":                 "needs the replay's 16 GiB target; 10 s of I/O",
}

// readmeExamples are the indented `idlewatt …` lines of README.md's
// examples, their trailing comments cut.
func readmeExamples(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "    idlewatt ") {
			continue
		}
		if i := strings.Index(l, " #"); i >= 0 {
			l = l[:i]
		}
		out = append(out, strings.TrimSpace(l))
	}
	return out
}

// TestREADMEExamples runs, as written, every example of README.md that
// needs no hardware, in a directory holding the files they name: run.iwcap
// (a 95 s synthetic capture), the PPK2 export (a Power Profiler export
// from fixtures/ppk2csv under the README's name) and defender.trace (made
// by the README's own `trace gen` line, which runs first).
func TestREADMEExamples(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the README's commands")
	}
	ex := readmeExamples(t)
	if len(ex) < 10 {
		t.Fatalf("found %d README examples: the README's layout changed", len(ex))
	}
	dir := t.TempDir()
	stageCapture(t, filepath.Join(dir, "run.iwcap"), 2, 95*time.Second)
	copyFile(t, "../../fixtures/ppk2csv/all-columns-100k.csv", filepath.Join(dir, "ppk-20260311T101500.csv"))
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	ran := 0
	// trace gen first: the later examples read its output.
	for pass := range 2 {
		for _, e := range ex {
			gen := strings.HasPrefix(e, "idlewatt trace gen ")
			if gen != (pass == 0) {
				continue
			}
			seen[e] = true
			if why, ok := readmeNotRun[e]; ok {
				t.Logf("not run: %s (%s)", e, why)
				continue
			}
			if out, code := runExample(t, dir, cwd, e); code != 0 {
				t.Errorf("%s: exit %d\n%s", e, code, out)
			}
			ran++
		}
	}
	for e := range readmeNotRun {
		if !seen[e] {
			t.Errorf("readmeNotRun lists %q, which the README no longer has", e)
		}
	}
	t.Logf("%d of %d README examples run", ran, len(ex))
}

// runExample runs a documented `idlewatt …` line as written in dir, the
// repository's fixtures/ paths resolved from cwd (this package's
// directory); it returns the output and the exit code.
func runExample(t *testing.T, dir, cwd, line string) (string, int) {
	t.Helper()
	words, err := splitWords(line)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	args := words[1:]
	for i, a := range args {
		if strings.HasPrefix(a, "fixtures/") {
			args[i] = filepath.Join(cwd, "../..", a)
		}
	}
	out, _, code := runIn(t, dir, args...)
	return out, code
}

// runIn runs the built binary with dir as its working directory (the
// README's relative names resolve there); stdout and stderr together.
func runIn(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	cmd, buf := startBin(t, dir, args...)
	err := cmd.Wait()
	code := 0
	if err != nil {
		code = cmd.ProcessState.ExitCode()
	}
	return buf.String(), "", code
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// docExamples are example lines of docs/ that run as written in a
// directory holding the files they name (the docs' other command lines
// are synopses with placeholders, or need hardware or an emulator left
// running). Each must still be in its doc, word for word.
var docExamples = []struct{ doc, line string }{
	{"states.md", "idlewatt states decode fixtures/real/states/nvme/t-force-tm8fpl500g.id-ctrl-H.txt"},
	{"states.md", "idlewatt apst idle --sim 980pro-1tb"},
	{"meters.md", "idlewatt import ppk-20260311T101500.csv --voltage 3.3 --devslp-line D3 --marker-line D4 --out ssd.iwcap"},
	{"meters.md", "idlewatt report ppk-20260311T101500.csv --voltage 3.3 --devslp-line D3 --out ssd.report"},
	{"meters.md", "idlewatt plot capture.jls --out ssd.svg"},
	{"firmware.md", "idlewatt report run.iwcap --out run.report"},
}

// TestDocExamples runs docExamples, with the PPK2 export and a JLS file
// (fixtures/jls/js220-like.jls, written by the upstream library) under the
// names the docs use, and a synthetic run.iwcap.
func TestDocExamples(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the docs' commands")
	}
	dir := t.TempDir()
	stageCapture(t, filepath.Join(dir, "run.iwcap"), 1, 5*time.Second)
	copyFile(t, "../../fixtures/ppk2csv/all-columns-100k.csv", filepath.Join(dir, "ppk-20260311T101500.csv"))
	copyFile(t, "../../fixtures/jls/js220-like.jls", filepath.Join(dir, "capture.jls"))
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range docExamples {
		b, err := os.ReadFile(filepath.Join("../../docs", ex.doc))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), ex.line) {
			t.Errorf("docs/%s no longer has %q", ex.doc, ex.line)
			continue
		}
		if out, code := runExample(t, dir, cwd, ex.line); code != 0 {
			t.Errorf("docs/%s: %s: exit %d\n%s", ex.doc, ex.line, code, out)
		}
	}
}

// compare --html of reports made straight from another meter's file is
// refused naming the way through a capture (it has no --voltage to read
// the file again with; before, "p.csv: not an idlewatt capture").
func TestCompareHTMLOfMeterFileReports(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyFile(t, "../../fixtures/ppk2csv/all-columns-100k.csv", filepath.Join(dir, "p.csv"))
	for _, o := range []string{"r1", "r2"} {
		if out, _, code := runIn(t, dir, "report", "p.csv", "--voltage", "3.3", "--no-html", "--out", o); code != 0 {
			t.Fatalf("report: exit %d\n%s", code, out)
		}
	}
	out, _, code := runIn(t, dir, "compare", "r1/report.json", "r2/report.json", "--out", "c", "--html")
	if code != 2 || !strings.Contains(out, "is another meter's file, not a capture: import it") {
		t.Errorf("exit %d, want 2 saying to import it:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "c")); err == nil {
		t.Error("compare left its output directory")
	}
}
