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
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/report"
)

// deltaFig is one headline figure as the test reads it from a report.json
// decoded into plain maps (not through package analysis).
type deltaFig struct {
	stem, unit, md string
	scale          float64
	value          func(d map[string]any) (float64, *float64)
}

func jnum(m map[string]any, k string) float64 {
	if v, ok := m[k].(float64); ok {
		return v
	}
	return math.NaN()
}

func jptr(m map[string]any, k string) *float64 {
	if v, ok := m[k].(float64); ok {
		return &v
	}
	return nil
}

var deltaFigs = []deltaFig{
	{"active_idle", "w", "Δ Active idle (W)", 1, func(d map[string]any) (float64, *float64) {
		return jnum(d, "active_idle_w"), jptr(d, "active_idle_u95_w")
	}},
	{"average", "w", "Δ Average (W)", 1, func(d map[string]any) (float64, *float64) { return jnum(d, "average_w"), jptr(d, "average_u95_w") }},
	{"peak_1s", "w", "Δ Peak 1 s (W)", 1, func(d map[string]any) (float64, *float64) {
		return jnum(d["peak_windows"].(map[string]any), "1s_w"), nil
	}},
	{"energy", "j", "Δ Energy (J)", 1, func(d map[string]any) (float64, *float64) { return jnum(d, "energy_j"), jptr(d, "energy_u95_j") }},
	{"devslp_power", "w", "Δ DevSlp (mW)", 1e3, func(d map[string]any) (float64, *float64) {
		ds := d["devslp"].(map[string]any)
		p := jnum(ds, "power_w")
		if f := jnum(ds, "floor_w"); f == p {
			return p, jptr(ds, "floor_u95_w")
		}
		return p, nil
	}},
}

// wantDelta is the test's own delta: x − b, √(u²+ub²) when both stated,
// 100·(x − b)/b.
type wantDelta struct {
	diff, rel float64
	u         *float64
}

func computeDelta(x float64, u *float64, b float64, ub *float64) wantDelta {
	w := wantDelta{diff: math.NaN(), rel: math.NaN()}
	if math.IsNaN(x) || math.IsNaN(b) {
		return w
	}
	w.diff = x - b
	if u != nil && ub != nil {
		s := math.Sqrt(*u**u + *ub**ub)
		w.u = &s
	}
	if b != 0 {
		w.rel = 100 * (x - b) / b
	}
	return w
}

func readDrives(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Drives []map[string]any `json:"drives"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r.Drives
}

// pairDrive is the documented pairing: same name, else same port, else
// the baseline's only drive.
func pairDrive(base []map[string]any, d map[string]any) map[string]any {
	for _, b := range base {
		if b["name"] == d["name"] {
			return b
		}
	}
	for _, b := range base {
		if b["port"] == d["port"] {
			return b
		}
	}
	if len(base) == 1 {
		return base[0]
	}
	return nil
}

// closeTo: a CSV cell (6 decimals) or a JSON number against the test's own
// value.
func closeTo(got, want, abs float64) bool {
	return math.Abs(got-want) <= abs+1e-9*math.Abs(want)
}

// TestCompareDeltas writes three runs (one with DEVSLP pin cycles, one
// without, one whose drives have other names and a port the baseline
// lacks), runs `compare --baseline runA` with the baseline second among the
// arguments, and reads compare.csv (encoding/csv), compare.json
// (encoding/json) and compare.md back, checking every delta, its interval
// and its relative value against values the test computes from the
// report.json files, and null / "—" exactly where either side is null.
func TestCompareDeltas(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	scen := func(seed int64, drives []synthcap.Drive, pins bool) synthcap.Scenario {
		s := synthcap.Scenario{
			RateHz: 5000, Duration: 8 * time.Second, StartHost: 1e12, Seed: seed, NoiseA: 0.002, CurrentLSB: 0.0001, VoltLSB: 0.00125,
			Drives:    drives,
			Bursts:    []synthcap.Bursts{{Port: drives[0].Port, First: 5500 * time.Millisecond, Every: time.Second, Ops: 8, OpDur: 2 * time.Millisecond, Size: 4096}},
			Phases:    []synthcap.Phase{{At: 0, Name: "idle"}, {At: 5 * time.Second, Name: "workload:a"}},
			MarkEvery: time.Second, RTTMin: 300 * time.Microsecond, Jitter: 200 * time.Microsecond,
		}
		if pins {
			// One DevSlp cycle as the rig records it: the cycle phase, the
			// pin, the read after the release.
			p := drives[0].Port
			s.Pins = []synthcap.Pin{{Port: p, From: 1500 * time.Millisecond, To: 4 * time.Second}}
			s.IO = append(s.IO, synthcap.IO{Port: p, Start: 4001 * time.Millisecond, Dur: 5 * time.Millisecond, Op: capture.OpRead, Size: 4096})
			s.Phases = append(s.Phases, synthcap.Phase{At: time.Second, Port: p, Name: "devslp-cycle:1"}, synthcap.Phase{At: 4500 * time.Millisecond, Port: p, Name: "devslp-end"})
		}
		return s
	}
	runs := []struct {
		name string
		s    synthcap.Scenario
	}{
		{"runB", scen(2, []synthcap.Drive{{Port: 1, Name: "d1", IdleW: 0.42, BusyW: 2.1}, {Port: 2, Name: "d2", IdleW: 0.25, BusyW: 1.5}}, false)},
		{"runA", scen(1, []synthcap.Drive{{Port: 1, Name: "d1", IdleW: 0.40, BusyW: 2.0, DevSlpW: 0.006}, {Port: 2, Name: "d2", IdleW: 0.2, BusyW: 1.5}}, true)},
		{"runC", scen(3, []synthcap.Drive{{Port: 1, Name: "other", IdleW: 0.37, BusyW: 1.8, DevSlpW: 0.005}, {Port: 3, Name: "lonely", IdleW: 0.3, BusyW: 1.5}}, true)},
	}
	ctx := context.Background()
	var reps []string
	drives := map[string][]map[string]any{}
	for i, r := range runs {
		capPath := filepath.Join(dir, "c"+strconv.Itoa(i)+".iwcap")
		if err := synthcap.Write(capPath, r.s); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, r.name)
		if o, e, code := run(t, ctx, "report", capPath, "--out", out); code != 0 {
			t.Fatalf("report %s: exit %d %s%s", r.name, code, o, e)
		}
		p := filepath.Join(out, report.FileJSON)
		reps = append(reps, p)
		drives[r.name] = readDrives(t, p)
	}
	cmpDir := filepath.Join(dir, "cmp")
	if o, e, code := run(t, ctx, append([]string{"compare", "--out", cmpDir, "--baseline", "runA"}, reps...)...); code != 0 {
		t.Fatalf("compare: exit %d %s%s", code, o, e)
	}
	base := drives["runA"]
	type key struct{ run, drive string }
	want := map[key][]wantDelta{}
	wantBase := map[key]string{}
	var stated, oneSided, devslpBoth int
	for _, r := range runs {
		for _, d := range drives[r.name] {
			k := key{r.name, d["name"].(string)}
			var b map[string]any
			if r.name != "runA" {
				b = pairDrive(base, d)
			}
			if b != nil {
				wantBase[k] = b["name"].(string)
			}
			for _, f := range deltaFigs {
				x, u := f.value(d)
				if b == nil {
					want[k] = append(want[k], computeDelta(x, u, math.NaN(), nil))
					continue
				}
				bx, bu := f.value(b)
				w := computeDelta(x, u, bx, bu)
				want[k] = append(want[k], w)
				if w.u != nil {
					stated++
				}
				if f.stem == "devslp_power" {
					if math.IsNaN(x) != math.IsNaN(bx) {
						oneSided++
					} else if !math.IsNaN(w.diff) {
						devslpBoth++
					}
				}
			}
		}
	}
	// The fixture must exercise every case, or the checks below prove little.
	if stated == 0 || oneSided == 0 || devslpBoth == 0 {
		t.Fatalf("fixture: %d deltas with an interval, %d one-sided DevSlp, %d DevSlp on both sides", stated, oneSided, devslpBoth)
	}
	if _, ok := wantBase[key{"runC", "lonely"}]; ok {
		t.Fatal("fixture: lonely should have no baseline drive")
	}

	// compare.csv
	f, err := os.Open(filepath.Join(cmpDir, "compare.csv"))
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
	cell := func(rec []string, name string) string {
		i, ok := ci[name]
		if !ok {
			t.Fatalf("compare.csv has no column %q: %v", name, recs[0])
		}
		return rec[i]
	}
	checkCell := func(where, c string, want float64) {
		t.Helper()
		if math.IsNaN(want) {
			if c != "" {
				t.Errorf("%s: %q, want empty", where, c)
			}
			return
		}
		v, err := strconv.ParseFloat(c, 64)
		if err != nil || !closeTo(v, want, 5e-7) {
			t.Errorf("%s: %q, want %v (%v)", where, c, want, err)
		}
	}
	if len(recs)-1 != len(want) {
		t.Fatalf("compare.csv has %d rows, want %d", len(recs)-1, len(want))
	}
	for _, rec := range recs[1:] {
		k := key{cell(rec, "run"), cell(rec, "drive")}
		w, ok := want[k]
		if !ok {
			t.Fatalf("compare.csv: unexpected row %v", k)
		}
		if cell(rec, "baseline_run") != "runA" || cell(rec, "baseline_drive") != wantBase[k] {
			t.Errorf("compare.csv %v: baseline %q %q, want runA %q", k, cell(rec, "baseline_run"), cell(rec, "baseline_drive"), wantBase[k])
		}
		for j, fg := range deltaFigs {
			where := "compare.csv " + k.run + " " + k.drive + " "
			checkCell(where+"delta_"+fg.stem+"_"+fg.unit, cell(rec, "delta_"+fg.stem+"_"+fg.unit), w[j].diff)
			checkCell(where+"delta_"+fg.stem+"_u95_"+fg.unit, cell(rec, "delta_"+fg.stem+"_u95_"+fg.unit), ptrOrNaN(w[j].u))
			checkCell(where+"delta_"+fg.stem+"_pct", cell(rec, "delta_"+fg.stem+"_pct"), w[j].rel)
		}
	}

	// compare.json
	jb, err := os.ReadFile(filepath.Join(cmpDir, "compare.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cj struct {
		Schema        string           `json:"schema"`
		BaselineRun   string           `json:"baseline_run"`
		BaselineIndex int              `json:"baseline_index"`
		Notes         []string         `json:"notes"`
		Rows          []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(jb, &cj); err != nil {
		t.Fatalf("compare.json: %v", err)
	}
	if cj.Schema != analysis.CompareSchema || cj.BaselineRun != "runA" || cj.BaselineIndex != 2 || len(cj.Rows) != len(want) {
		t.Fatalf("compare.json: schema %q baseline %q #%d, %d rows", cj.Schema, cj.BaselineRun, cj.BaselineIndex, len(cj.Rows))
	}
	for _, row := range cj.Rows {
		k := key{row["run"].(string), row["drive"].(string)}
		w := want[k]
		for j, fg := range deltaFigs {
			for name, v := range map[string]float64{"delta_" + fg.stem + "_" + fg.unit: w[j].diff, "delta_" + fg.stem + "_u95_" + fg.unit: ptrOrNaN(w[j].u), "delta_" + fg.stem + "_pct": w[j].rel} {
				got, present := row[name]
				if !present {
					t.Errorf("compare.json %v: no key %q", k, name)
					continue
				}
				if math.IsNaN(v) {
					if got != nil {
						t.Errorf("compare.json %v %s: %v, want null", k, name, got)
					}
					continue
				}
				g, ok := got.(float64)
				if !ok || !closeTo(g, v, 1e-12) {
					t.Errorf("compare.json %v %s: %v, want %v", k, name, got, v)
				}
			}
		}
	}

	// compare.md: the delta table has one row per drive outside the baseline.
	mb, err := os.ReadFile(filepath.Join(cmpDir, "compare.md"))
	if err != nil {
		t.Fatal(err)
	}
	head, rows := mdTable(t, string(mb), "## Deltas against runA")
	if len(rows) != len(want)-len(base) {
		t.Fatalf("compare.md delta table: %d rows, want %d", len(rows), len(want)-len(base))
	}
	for _, row := range rows {
		k := key{row[0], row[1]}
		w, ok := want[k]
		if !ok || k.run == "runA" {
			t.Fatalf("compare.md delta table: unexpected row %v", k)
		}
		for j, fg := range deltaFigs {
			c := row[col(t, head, fg.md)]
			where := "compare.md " + k.run + " " + k.drive + " " + fg.md
			if math.IsNaN(w[j].diff) {
				if c != analysis.Dash {
					t.Errorf("%s: %q, want %s", where, c, analysis.Dash)
				}
				continue
			}
			pm, rel, hasRel := strings.Cut(c, " (")
			if hasRel != !math.IsNaN(w[j].rel) {
				t.Errorf("%s: %q, relative %v", where, c, w[j].rel)
			}
			if hasRel {
				r, err := strconv.ParseFloat(strings.TrimSuffix(rel, " %)"), 64)
				if err != nil || !closeTo(r, w[j].rel, 0.05+1e-9) {
					t.Errorf("%s: %q, relative %v (%v)", where, c, w[j].rel, err)
				}
			}
			var u *float64
			if w[j].u != nil {
				s := *w[j].u * fg.scale
				u = &s
			}
			checkPM(t, where, parseShown(t, strings.TrimPrefix(pm, "+")), w[j].diff*fg.scale, u)
		}
	}

	// --html: compare.html from each report's capture.path; a capture that
	// is not the report's is refused (exit 2) before anything is written.
	cmp3 := filepath.Join(dir, "cmp3")
	if o, e, code := run(t, ctx, append([]string{"compare", "--out", cmp3, "--html", "--baseline", "2"}, reps...)...); code != 0 {
		t.Fatalf("compare --html: exit %d %s%s", code, o, e)
	}
	hb, err := os.ReadFile(filepath.Join(cmp3, "compare.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"baseline_run":"runA"`, `"run":"runC","drive":"lonely"`, "uPlot"} {
		if !strings.Contains(string(hb), want) {
			t.Errorf("compare.html has no %q", want)
		}
	}
	cmp4 := filepath.Join(dir, "cmp4")
	c0, c1 := filepath.Join(dir, "c0.iwcap"), filepath.Join(dir, "c1.iwcap")
	_, e, code := run(t, ctx, "compare", "--out", cmp4, "--html", "--capture", c1, "--capture", c0, reps[0], reps[1])
	if code != 2 || !strings.Contains(e, "is not the capture of") {
		t.Errorf("swapped captures: exit %d: %s", code, e)
	}
	if _, err := os.Stat(cmp4); !os.IsNotExist(err) {
		t.Errorf("swapped captures: --out written: %v", err)
	}

	// The default baseline is the first argument.
	cmp2 := filepath.Join(dir, "cmp2")
	if o, e, code := run(t, ctx, append([]string{"compare", "--out", cmp2}, reps...)...); code != 0 {
		t.Fatalf("compare: exit %d %s%s", code, o, e)
	}
	if mb, err := os.ReadFile(filepath.Join(cmp2, "compare.md")); err != nil || !strings.Contains(string(mb), "## Deltas against runB\n") {
		t.Errorf("default baseline is not the first run: %v\n%s", err, mb)
	}
}

func ptrOrNaN(u *float64) float64 {
	if u == nil {
		return math.NaN()
	}
	return *u
}

// TestCompareBaselineBad: a --baseline that names no run, or two, is bad
// usage (exit 2) and writes nothing.
func TestCompareBaselineBad(t *testing.T) {
	t.Parallel()
	rep := "../../fixtures/reports/small/report.json"
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--baseline", "0", rep}, "there are 1 runs"},
		{[]string{"--baseline", "3", rep, rep}, "there are 2 runs"},
		{[]string{"--baseline", "nosuch", rep}, `"nosuch": no run has that label (runs: small)`},
		{[]string{"--baseline", "small", rep, rep}, `"small" names runs 1 and 2`},
	} {
		out := filepath.Join(t.TempDir(), "cmp")
		_, e, code := run(t, context.Background(), append([]string{"compare", "--out", out}, c.args...)...)
		if code != 2 || !strings.Contains(e, "--baseline") || !strings.Contains(e, c.msg) {
			t.Errorf("%v: exit %d: %s", c.args, code, e)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v: --out created for a refused comparison: %v", c.args, err)
		}
	}
	out := filepath.Join(t.TempDir(), "cmp")
	if _, e, code := run(t, context.Background(), "compare", "--out", out, "--baseline", "2", rep, rep); code != 0 {
		t.Errorf("--baseline 2: exit %d: %s", code, e)
	}
}
