package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/synthcap"
	"github.com/idlewatt/idlewatt/report"
	"github.com/idlewatt/idlewatt/units"
)

// shown is one value as an output printed it: its number and decimals, or
// a dash (not measured).
type shown struct {
	v, u     float64
	dv, du   int
	dash, pm bool
	text     string
	ci       *[2]float64 // "x [lo, hi]": the peak's interval
}

// parseShown reads "0.4000", "0.4000 ± 0.0012", "0.400000 ± <0.000001",
// "2.5840 [2.5707, 2.5890]" or "—".
func parseShown(t *testing.T, s string) shown {
	t.Helper()
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "W"))
	s = strings.TrimSpace(strings.TrimSuffix(s, "J"))
	out := shown{text: s}
	if s == analysis.Dash || s == "" {
		out.dash = true
		return out
	}
	num := func(x string) (float64, int) {
		x = strings.TrimPrefix(strings.TrimSpace(x), "<")
		f, err := strconv.ParseFloat(x, 64)
		if err != nil {
			t.Fatalf("value %q: %v", s, err)
		}
		d := 0
		if i := strings.IndexByte(x, '.'); i >= 0 {
			d = len(x) - i - 1
		}
		return f, d
	}
	if x, iv, ok := strings.Cut(s, "["); ok {
		lo, hi, ok2 := strings.Cut(strings.TrimSuffix(strings.TrimSpace(iv), "]"), ",")
		if !ok2 {
			t.Fatalf("value %q: interval without a comma", s)
		}
		l, _ := num(lo)
		h, _ := num(hi)
		out.ci = &[2]float64{l, h}
		s = strings.TrimSpace(x)
	}
	v, u, ok := strings.Cut(s, "±")
	out.v, out.dv = num(v)
	if ok {
		out.pm = true
		out.u, out.du = num(u)
	}
	return out
}

// same reports whether a printed value is the JSON value rounded to the
// decimals shown (nil/NaN ⇔ a dash).
func same(sh shown, v float64, dv int) bool {
	if math.IsNaN(v) {
		return sh.dash
	}
	return !sh.dash && math.Abs(sh.v-v) <= 0.5*math.Pow(10, -float64(dv))*(1+1e-9)+1e-15
}

func checkPM(t *testing.T, where string, sh shown, v float64, u *float64) {
	t.Helper()
	if !same(sh, v, sh.dv) {
		t.Errorf("%s: shows %q, report.json %v", where, sh.text, v)
	}
	if math.IsNaN(v) {
		return
	}
	if (u != nil) != sh.pm {
		t.Errorf("%s: shows %q, report.json interval %v", where, sh.text, u)
		return
	}
	if u != nil && !strings.Contains(sh.text, "<") && !same(shown{v: sh.u}, *u, sh.du) {
		t.Errorf("%s: shows interval %q, report.json %v", where, sh.text, *u)
	}
	if u != nil && strings.Contains(sh.text, "<") && *u >= sh.u {
		t.Errorf("%s: shows %q, report.json interval %v", where, sh.text, *u)
	}
}

// mdTable returns the rows (cells) of the Markdown table under heading.
func mdTable(t *testing.T, md, heading string) (head []string, rows [][]string) {
	t.Helper()
	i := strings.Index(md, heading+"\n")
	if i < 0 {
		t.Fatalf("report.md has no %q", heading)
	}
	for _, line := range strings.Split(md[i:], "\n")[1:] {
		if strings.HasPrefix(line, "## ") {
			break
		}
		if !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for k := range cells {
			cells[k] = strings.TrimSpace(cells[k])
		}
		if head == nil {
			head = cells
			continue
		}
		rows = append(rows, cells)
	}
	return head, rows
}

func col(t *testing.T, head []string, name string) int {
	t.Helper()
	for i, h := range head {
		if h == name {
			return i
		}
	}
	t.Fatalf("no column %q in %v", name, head)
	return -1
}

// TestOneValuePerQuantity writes a capture with a noisy drive that has GC
// bursts, I/O and phases beside a drive whose channels recorded nothing,
// runs `report` and `compare` on it, and reads every output back —
// report.json, report.md, summary.csv (encoding/csv), the terminal
// headline, compare.md and compare.csv — checking that each power quantity
// shows the one value report.json holds (to the decimals printed), and "—"
// or an empty cell exactly where report.json has null.
func TestOneValuePerQuantity(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	scen := func(d time.Duration, wl string) synthcap.Scenario {
		return synthcap.Scenario{
			RateHz: 10000, Duration: d, StartHost: 1e12, Seed: 5, NoiseA: 0.002, CurrentLSB: 0.0001, VoltLSB: 0.00125,
			Drives: []synthcap.Drive{
				{Port: 1, Name: "noisy", IdleW: 0.35, BusyW: 1.8, GCW: 0.9, GCFirst: 300 * time.Millisecond, GCEvery: 2 * time.Second, GCDur: 60 * time.Millisecond},
				{Port: 2, Name: "silent", IdleW: 0.2},
			},
			Bursts:    []synthcap.Bursts{{Port: 1, First: 4 * time.Second, Every: 1500 * time.Millisecond, Ops: 8, OpDur: 2 * time.Millisecond, Size: 4096}},
			Phases:    []synthcap.Phase{{At: 0, Name: "idle"}, {At: 4 * time.Second, Name: wl}},
			Gaps:      []synthcap.Gap{{Channel: 2, Start: 0, Count: 1 << 40}, {Channel: 3, Start: 0, Count: 1 << 40}},
			MarkEvery: time.Second, RTTMin: 300 * time.Microsecond, Jitter: 200 * time.Microsecond,
		}
	}
	ctx := context.Background()
	var reps []string
	var stdout string
	for i, s := range []synthcap.Scenario{scen(12*time.Second, "workload:a"), scen(8*time.Second, "workload:b")} {
		capPath := filepath.Join(dir, "c"+strconv.Itoa(i)+".iwcap")
		if err := synthcap.Write(capPath, s); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "run"+strconv.Itoa(i))
		o, e, code := run(t, ctx, "report", capPath, "--out", out)
		if code != 0 {
			t.Fatalf("report: exit %d %s%s", code, o, e)
		}
		if i == 0 {
			stdout = o
		}
		reps = append(reps, filepath.Join(out, report.FileJSON))
	}
	cmpDir := filepath.Join(dir, "cmp")
	cmpOut, e, code := run(t, ctx, append([]string{"compare", "--out", cmpDir}, reps...)...)
	if code != 0 {
		t.Fatalf("compare: exit %d %s%s", code, cmpOut, e)
	}

	r, err := analysis.LoadJSON(reps[0])
	if err != nil {
		t.Fatal(err)
	}
	// null in the file itself, not only NaN after reading it.
	var raw struct {
		Drives []map[string]json.RawMessage `json:"drives"`
	}
	b, _ := os.ReadFile(reps[0])
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"active_idle_w", "average_w", "peak_w", "energy_j", "p50_w", "active_idle_u95_w"} {
		if got := string(raw.Drives[1][k]); got != "null" {
			t.Errorf("silent drive: %s = %s in report.json, want null", k, got)
		}
	}
	noisy := r.Drives[0]
	if noisy.ActiveIdleU95W == nil || noisy.AverageU95W == nil || noisy.EnergyU95J == nil || noisy.Bursts.Count == 0 {
		t.Fatalf("noisy drive lacks intervals or bursts: %+v", noisy)
	}
	near := func(what string, got, want, tol float64) {
		if math.Abs(got-want) > tol {
			t.Errorf("%s %.6f, truth %.6f", what, got, want)
		}
	}
	near("active idle", float64(noisy.ActiveIdleW), 0.35, float64(*noisy.ActiveIdleU95W))

	// report.md
	mdb, err := os.ReadFile(filepath.Join(dir, "run0", report.FileMD))
	if err != nil {
		t.Fatal(err)
	}
	md := string(mdb)
	head, rows := mdTable(t, md, "## Summary")
	pct, _ := mdTable(t, md, "## Peaks and percentiles")
	_, prow := mdTable(t, md, "## Peaks and percentiles")
	for i, d := range r.Drives {
		row := rows[i]
		if row[0] != d.Name {
			t.Fatalf("summary row %d is %q, want %q", i, row[0], d.Name)
		}
		w := "report.md " + d.Name
		checkPM(t, w+" active idle", parseShown(t, row[col(t, head, "Active idle (W)")]), float64(d.ActiveIdleW), (*float64)(d.ActiveIdleU95W))
		checkPM(t, w+" average", parseShown(t, row[col(t, head, "Average (W)")]), float64(d.AverageW), (*float64)(d.AverageU95W))
		checkPM(t, w+" energy", parseShown(t, row[col(t, head, "Energy (J)")]), float64(d.EnergyJ), (*float64)(d.EnergyU95J))
		checkPeak(t, w+" peak", parseShown(t, row[col(t, head, "Peak (W)")]), float64(d.PeakW), d.PeakCI95W)
		for name, v := range map[string]float64{"p50 (W)": float64(d.P50W), "p95 (W)": float64(d.P95W), "p99 (W)": float64(d.P99W), "1 s (W)": float64(d.PeakWindows.W1s)} {
			checkPM(t, w+" "+name, parseShown(t, prow[i][col(t, pct, name)]), v, nil)
		}
		checkPeak(t, w+" Peak sample", parseShown(t, prow[i][col(t, pct, "Peak sample (W)")]), float64(d.PeakW), d.PeakCI95W)
	}
	ph, phRows := mdTable(t, md, "## Phases: noisy")
	for i, p := range noisy.Phases {
		checkPM(t, "report.md phase "+p.Name+" average", parseShown(t, phRows[i][col(t, ph, "Average (W)")]), float64(p.AverageW), (*float64)(p.AverageU95W))
		checkPM(t, "report.md phase "+p.Name+" active idle", parseShown(t, phRows[i][col(t, ph, "Active idle (W)")]), float64(p.ActiveIdleW), (*float64)(p.ActiveIdleU95W))
	}

	// summary.csv
	f, err := os.Open(filepath.Join(dir, "run0", report.FileCSV))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	ci := map[string]int{}
	for i, h := range recs[0] {
		ci[h] = i
	}
	csvVal := func(rec []string, key string) shown { return parseShown(t, rec[ci[key]]) }
	u := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	for _, rec := range recs[1:] {
		var d *analysis.DriveReport
		for k := range r.Drives {
			if r.Drives[k].Name == rec[ci["drive"]] {
				d = &r.Drives[k]
			}
		}
		if d == nil {
			t.Fatalf("summary.csv row for unknown drive %q", rec[0])
		}
		vals := map[string]float64{"active_idle_w": float64(d.ActiveIdleW), "average_w": float64(d.AverageW), "peak_w": float64(d.PeakW), "energy_j": float64(d.EnergyJ),
			"p50_w": float64(d.P50W), "p95_w": float64(d.P95W), "p99_w": float64(d.P99W), "active_idle_u95_w": u((*float64)(d.ActiveIdleU95W)), "average_u95_w": u((*float64)(d.AverageU95W)), "energy_u95_j": u((*float64)(d.EnergyU95J))}
		if phase := rec[ci["phase"]]; phase != "all" {
			found := false
			for _, p := range d.Phases {
				if p.Name == phase {
					found = true
					vals = map[string]float64{"active_idle_w": float64(p.ActiveIdleW), "average_w": float64(p.AverageW), "peak_w": float64(p.PeakW), "energy_j": float64(p.EnergyJ),
						"p50_w": float64(p.P50W), "active_idle_u95_w": u((*float64)(p.ActiveIdleU95W)), "average_u95_w": u((*float64)(p.AverageU95W)), "energy_u95_j": u((*float64)(p.EnergyU95J))}
				}
			}
			if !found {
				t.Fatalf("summary.csv phase %q not in report.json", phase)
			}
		}
		for k, v := range vals {
			if sh := csvVal(rec, k); !same(sh, v, 6) {
				t.Errorf("summary.csv %s/%s %s = %q, report.json %v", d.Name, rec[ci["phase"]], k, sh.text, v)
			}
		}
	}

	// The terminal headline of `report`.
	for _, d := range r.Drives {
		var line string
		for _, l := range strings.Split(stdout, "\n") {
			if strings.HasPrefix(l, d.Name+" ") {
				line = l
			}
		}
		if line == "" {
			t.Fatalf("headline has no line for %q:\n%s", d.Name, stdout)
		}
		fields := splitHeadline(strings.TrimSpace(strings.TrimPrefix(line, d.Name)))
		if len(fields) < 4 {
			t.Fatalf("headline line %q", line)
		}
		checkPM(t, "headline "+d.Name+" active idle", parseShown(t, fields[0]), float64(d.ActiveIdleW), (*float64)(d.ActiveIdleU95W))
		checkPM(t, "headline "+d.Name+" average", parseShown(t, fields[1]), float64(d.AverageW), (*float64)(d.AverageU95W))
		checkPeak(t, "headline "+d.Name+" peak", parseShown(t, fields[2]), float64(d.PeakW), d.PeakCI95W)
		checkPM(t, "headline "+d.Name+" energy", parseShown(t, fields[3]), float64(d.EnergyJ), (*float64)(d.EnergyU95J))
	}

	// compare.md and compare.csv
	cmb, err := os.ReadFile(filepath.Join(cmpDir, "compare.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := string(cmb)
	chead, crows := mdTable(t, cmd, "# Comparison")
	for _, row := range crows {
		if row[0] != "run0" {
			continue
		}
		var d *analysis.DriveReport
		for k := range r.Drives {
			if r.Drives[k].Name == row[1] {
				d = &r.Drives[k]
			}
		}
		checkPM(t, "compare.md "+d.Name+" active idle", parseShown(t, row[col(t, chead, "Active idle (W)")]), float64(d.ActiveIdleW), (*float64)(d.ActiveIdleU95W))
		checkPM(t, "compare.md "+d.Name+" average", parseShown(t, row[col(t, chead, "Average (W)")]), float64(d.AverageW), (*float64)(d.AverageU95W))
		checkPM(t, "compare.md "+d.Name+" energy", parseShown(t, row[col(t, chead, "Energy (J)")]), float64(d.EnergyJ), (*float64)(d.EnergyU95J))
		if ds := row[col(t, chead, "DevSlp (mW)")]; !d.DevSlp.Entered && ds != analysis.Dash {
			t.Errorf("compare.md %s: DevSlp %q for a drive that never entered DevSlp, want %s", d.Name, ds, analysis.Dash)
		}
	}
	if !strings.Contains(cmd, "different workloads") || !strings.Contains(cmd, "durations differ") {
		t.Errorf("compare.md does not note the different workloads and durations:\n%s", cmd)
	}
	if !strings.Contains(cmpOut, "note: ") {
		t.Errorf("compare's output has no note: %s", cmpOut)
	}
	f, err = os.Open(filepath.Join(cmpDir, "compare.csv"))
	if err != nil {
		t.Fatal(err)
	}
	crecs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	ci = map[string]int{}
	for i, h := range crecs[0] {
		ci[h] = i
	}
	for _, rec := range crecs[1:] {
		if rec[ci["run"]] != "run0" {
			continue
		}
		for k := range r.Drives {
			d := &r.Drives[k]
			if d.Name != rec[ci["drive"]] {
				continue
			}
			ds := math.NaN()
			if d.DevSlp.PowerW.Ok() {
				ds = float64(d.DevSlp.PowerW)
			}
			for key, v := range map[string]float64{"active_idle_w": float64(d.ActiveIdleW), "average_w": float64(d.AverageW), "energy_j": float64(d.EnergyJ), "peak_w": float64(d.PeakW),
				"devslp_power_w": ds, "active_idle_u95_w": u((*float64)(d.ActiveIdleU95W)), "average_u95_w": u((*float64)(d.AverageU95W)), "energy_u95_j": u((*float64)(d.EnergyU95J))} {
				if sh := csvVal(rec, key); !same(sh, v, 6) {
					t.Errorf("compare.csv %s %s = %q, report.json %v", d.Name, key, sh.text, v)
				}
			}
		}
	}
}

// splitHeadline splits a headline row into its values: "0.3500 ± 0.0001"
// stays one value.
func splitHeadline(s string) []string {
	f := strings.Fields(s)
	var out []string
	for i := 0; i < len(f); i++ {
		if i+2 < len(f) && strings.HasPrefix(f[i+1], "[") && strings.HasSuffix(f[i+2], "]") {
			out = append(out, f[i]+" "+f[i+1]+" "+f[i+2])
			i += 2
			continue
		}
		if i+2 < len(f) && f[i+1] == "±" {
			out = append(out, f[i]+" ± "+f[i+2])
			i += 2
			continue
		}
		out = append(out, f[i])
	}
	return out
}

// checkPeak checks a printed peak and its interval "[lo, hi]" against
// report.json's peak_w and peak_ci95_w, each rounded to the decimals shown.
func checkPeak(t *testing.T, where string, sh shown, v float64, ci *[2]units.Watts) {
	t.Helper()
	checkPM(t, where, sh, v, nil)
	switch {
	case math.IsNaN(v):
	case (ci != nil) != (sh.ci != nil):
		t.Errorf("%s: shows %q, report.json peak_ci95_w %v", where, sh.text, ci)
	case ci != nil && (!same(shown{v: sh.ci[0]}, float64(ci[0]), sh.dv) || !same(shown{v: sh.ci[1]}, float64(ci[1]), sh.dv)):
		t.Errorf("%s: shows %q, report.json peak_ci95_w %v", where, sh.text, *ci)
	}
}
