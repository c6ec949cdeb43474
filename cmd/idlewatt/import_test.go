package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readReportJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func driveFigure(t *testing.T, rep map[string]any, key string) float64 {
	t.Helper()
	d := rep["drives"].([]any)[0].(map[string]any)
	x, ok := d[key].(float64)
	if !ok {
		t.Fatalf("report has no %s: %v", key, d[key])
	}
	return x
}

// TestImportThenReport: import, then report the capture; and report the
// meter file directly: the same figures, the import's notes in both.
func TestImportThenReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join("..", "..", "fixtures", "ppk2csv", "all-columns-100k.csv")
	capPath := filepath.Join(dir, "c.iwcap")
	out, errOut, code := run(t, context.Background(), "import", in, "--out", capPath, "--voltage", "5",
		"--devslp-line", "D3", "--marker-line", "D0", "--name", "ssd-under-test")
	if code != 0 {
		t.Fatalf("import exit %d: %s%s", code, out, errOut)
	}
	for _, want := range []string{"ppk2-csv, 1989 samples at 100000 S/s", "11 missing", "1 I/O spans", "line D3 is the DEVSLP pin", "capture written to"} {
		if !strings.Contains(out, want) {
			t.Errorf("import output lacks %q:\n%s", want, out)
		}
	}
	r1 := filepath.Join(dir, "r1")
	if out, errOut, code := run(t, context.Background(), "report", capPath, "--out", r1, "--no-html"); code != 0 {
		t.Fatalf("report exit %d: %s%s", code, out, errOut)
	}
	r2 := filepath.Join(dir, "r2")
	out, errOut, code = run(t, context.Background(), "report", in, "--out", r2, "--no-html", "--voltage", "5",
		"--devslp-line", "D3", "--marker-line", "D0")
	if code != 0 {
		t.Fatalf("report of the CSV exit %d: %s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "report: "+in+": ppk2-csv") || !strings.Contains(out, "note: import: line D3 is the DEVSLP pin") {
		t.Errorf("direct report output:\n%s\n%s", out, errOut)
	}
	a, b := readReportJSON(t, filepath.Join(r1, "report.json")), readReportJSON(t, filepath.Join(r2, "report.json"))
	for _, k := range []string{"average_w", "energy_j", "duration_s"} {
		if x, y := driveFigure(t, a, k), driveFigure(t, b, k); x != y || x == 0 {
			t.Errorf("%s: %g from the capture, %g from the CSV", k, x, y)
		}
	}
	if p := b["capture"].(map[string]any)["path"]; p != in {
		t.Errorf("report of the CSV names the capture %v, want %s", p, in)
	}
	if name := a["drives"].([]any)[0].(map[string]any)["name"]; name != "ssd-under-test" {
		t.Errorf("drive name %v", name)
	}
	// No temporary capture is left behind.
	if left, _ := filepath.Glob(filepath.Join(os.TempDir(), "idlewatt-import-*", "all-columns-100k.csv.iwcap")); len(left) > 0 {
		t.Errorf("temporary captures left: %v", left)
	}
}

// TestExportAndPlotMeterFiles: export --csv and plot take the files too.
func TestExportAndPlotMeterFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jlsFile := filepath.Join("..", "..", "fixtures", "jls", "js220-like.jls")
	csvOut := filepath.Join(dir, "x.csv")
	out, errOut, code := run(t, context.Background(), "export", jlsFile, "--csv", csvOut)
	if code != 0 {
		t.Fatalf("export exit %d: %s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "export: note: import: 50 samples are gaps") {
		t.Errorf("export does not say what the import noted:\n%s", errOut)
	}
	f, err := os.Open(csvOut)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	// 9995 indices from the first sample (5) to the last (9999), one a gap
	// row for the 50 NaN samples: 9995 − 50 + 1 rows, and the header.
	if len(rows) != 1+9995-50+1 {
		t.Errorf("%d CSV rows", len(rows))
	}
	var p float64
	for _, r := range rows[1:] {
		if r[2] != "" { // the gap row
			continue
		}
		var w float64
		json.Unmarshal([]byte(r[5]), &w)
		p += w
	}
	// The upstream reader's sum of the file's power signal, less its first 5
	// samples (before the voltage starts): fixtures/jls/upstream-read.json.
	want := 721.3719115126878
	for n := 0; n < 5; n++ {
		i := float32(0.002 + 0.0001*float64((n*37)%11))
		v := float32(5.0 + 0.001*float64((n*13)%7-3))
		want -= float64(float32(float64(v) * float64(i)))
	}
	if math.Abs(p-want) > 1e-6*want {
		t.Errorf("sum of exported power %.9g W, the file's power signal %.9g W", p, want)
	}
	svg := filepath.Join(dir, "p.svg")
	if out, errOut, code := run(t, context.Background(), "plot", jlsFile, "--out", svg); code != 0 {
		t.Fatalf("plot exit %d: %s%s", code, out, errOut)
	}
	if fi, err := os.Stat(svg); err != nil || fi.Size() < 1000 {
		t.Errorf("plot wrote %v %v", fi, err)
	}
}
