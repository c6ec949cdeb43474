package main

import (
	"bufio"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/analysis/judge"
)

// devslpJSON is a DevSlp block as report.json, states.json and
// measure.json write it (the keys they share).
type devslpJSON struct {
	Outcome    string   `json:"outcome"`
	FloorW     *float64 `json:"floor_w"`
	FloorU95W  *float64 `json:"floor_u95_w"`
	EntryMs    *float64 `json:"entry_ms"`
	EntryU95Ms *float64 `json:"entry_u95_ms"`
	RiseMs     *float64 `json:"rise_ms"`
	ExitMs     *float64 `json:"exit_ms"`
	PreCycleW  *float64 `json:"pre_cycle_w"`
	PowerW     *float64 `json:"power_w"`
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// mdTable returns the rows of the report.md table under heading, as cells.
func mdTableUnder(t *testing.T, path, heading string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows [][]string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "## "):
			in = l == "## "+heading
		case in && strings.HasPrefix(l, "|") && !strings.HasPrefix(l, "|---"):
			var cells []string
			for _, c := range strings.Split(strings.Trim(l, "|"), "|") {
				cells = append(cells, strings.TrimSpace(c))
			}
			rows = append(rows, cells)
		}
	}
	if len(rows) < 2 {
		t.Fatalf("%s: no table under %q", path, heading)
	}
	return rows
}

func pm(x, u *float64, scale float64) string {
	n := func(p *float64) judge.NumMs { // the unit does not show in PM's text
		if p == nil {
			return judge.NoneMs
		}
		return judge.NumMs(*p)
	}
	return judge.PM(n(x), n(u), scale)
}

// TestOneNumberEverywhere runs measure on drives unlike the built-ins (a
// noisy SSD with a 1.2 mW floor and a 300 ms exit, an HDD without DevSlp),
// then report on its capture, and reads every output back: each DevSlp and
// residency quantity must show one value in the terminal, report.md,
// report.json, states.json and measure.json, and again from `report`.
func TestOneNumberEverywhere(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end run on the emulator")
	}
	out := filepath.Join(t.TempDir(), "run")
	stdout, stderr, code := run(t, context.Background(), "measure", "--config", "../../fixtures/configs/hard-drives.yaml", "--out", out, "--quiet")
	t.Logf("measure exit %d\n%s\n%s", code, stdout, stderr)
	// The HDD is not_supported (no failure); the SSD passes unless the
	// host was too loaded to read promptly (inconclusive, exit 1).
	var meas struct {
		DevSlp map[string]devslpJSON `json:"devslp"`
	}
	readJSON(t, filepath.Join(out, "measure.json"), &meas)
	ssd, hdd := meas.DevSlp["1"], meas.DevSlp["2"]
	if hdd.Outcome != "not_supported" || hdd.FloorW != nil || hdd.EntryMs != nil {
		t.Errorf("hdd verdict %+v, want not_supported with null values", hdd)
	}
	wantCode := 0
	if ssd.Outcome != "pass" {
		wantCode = 1
		if !strings.Contains(stdout, "overloaded host") {
			t.Errorf("hard-ssd verdict %q, want pass", ssd.Outcome)
		}
	}
	if code != wantCode {
		t.Errorf("measure exit %d with verdicts %s/%s, want %d", code, ssd.Outcome, hdd.Outcome, wantCode)
	}
	if ssd.FloorW == nil || math.Abs(*ssd.FloorW-0.0012) > math.Max(0.0002, *ssd.FloorU95W) {
		t.Errorf("hard-ssd floor %v ± %v W, truth 0.0012 W", ssd.FloorW, ssd.FloorU95W)
	}

	check := func(dir string, mj map[string]devslpJSON, terminal string) {
		var rep struct {
			Drives []struct {
				Port      int                `json:"port"`
				Residency map[string]float64 `json:"residency"`
				DevSlp    devslpJSON         `json:"devslp"`
			} `json:"drives"`
		}
		readJSON(t, filepath.Join(dir, "report.json"), &rep)
		var st struct {
			Drives []struct {
				Port      int                `json:"port"`
				Residency map[string]float64 `json:"residency"`
				DevSlp    *devslpJSON        `json:"devslp"`
			} `json:"drives"`
		}
		readJSON(t, filepath.Join(dir, "states.json"), &st)
		dsTable := mdTableUnder(t, filepath.Join(dir, "report.md"), "DevSlp")
		resTable := mdTableUnder(t, filepath.Join(dir, "report.md"), "Residency")
		col := func(rows [][]string, name string) int {
			for i, c := range rows[0] {
				if c == name {
					return i
				}
			}
			t.Fatalf("report.md: no column %q in %v", name, rows[0])
			return -1
		}
		for i, d := range rep.Drives {
			p := strconv.Itoa(d.Port)
			js := d.DevSlp
			same := func(what string, a, b *float64) {
				if (a == nil) != (b == nil) || (a != nil && *a != *b) {
					t.Errorf("%s port %s %s: report.json %v, other %v", dir, p, what, a, b)
				}
			}
			if mj != nil {
				m := mj[p]
				same("floor_w (measure.json)", js.FloorW, m.FloorW)
				same("entry_ms (measure.json)", js.EntryMs, m.EntryMs)
				same("rise_ms (measure.json)", js.RiseMs, m.RiseMs)
				same("exit_ms (measure.json)", js.ExitMs, m.ExitMs)
				if js.Outcome != m.Outcome {
					t.Errorf("port %s outcome: report.json %s, measure.json %s", p, js.Outcome, m.Outcome)
				}
			}
			sd := st.Drives[i].DevSlp
			if sd == nil {
				t.Fatalf("%s: states.json port %s has no devslp block", dir, p)
			}
			same("floor_w (states.json)", js.FloorW, sd.FloorW)
			same("entry_ms (states.json)", js.EntryMs, sd.EntryMs)
			same("exit_ms (states.json)", js.ExitMs, sd.ExitMs)
			same("power_w (states.json)", js.PowerW, sd.PowerW)
			for k, v := range d.Residency {
				if st.Drives[i].Residency[k] != v {
					t.Errorf("%s port %s residency %s: report.json %v, states.json %v", dir, p, k, v, st.Drives[i].Residency[k])
				}
			}
			// report.md prints the same values with the same formatting.
			row := dsTable[1+i]
			for _, c := range []struct {
				col, want string
			}{
				{"Outcome", js.Outcome},
				{"Floor (mW)", pm(js.FloorW, js.FloorU95W, 1e3)},
				{"Entry (ms)", pm(js.EntryMs, js.EntryU95Ms, 1)},
				{"Exit to first read (ms)", pm(js.ExitMs, nil, 1)},
			} {
				got := row[col(dsTable, c.col)]
				if c.col == "Exit to first read (ms)" {
					got = strings.Split(got, " ±")[0]
				}
				if got != c.want {
					t.Errorf("%s report.md port %s %s: %q, report.json %q", dir, p, c.col, got, c.want)
				}
			}
			rrow := resTable[1+i]
			for _, k := range []string{"Active", "Background", "Idle", "Slumber", "DevSlp"} {
				want := strconv.FormatFloat(100*d.Residency[strings.ToLower(k)], 'f', 1, 64) + " %"
				if got := rrow[col(resTable, k)]; got != want {
					t.Errorf("%s report.md port %s residency %s: %q, report.json %q", dir, p, k, got, want)
				}
			}
			// The terminal's verdict line carries the same figures.
			if terminal != "" && js.FloorW != nil {
				line := regexp.MustCompile(`DevSlp port ` + p + `: [^\n]*`).FindString(terminal)
				for _, want := range []string{"floor " + pm(js.FloorW, js.FloorU95W, 1e3) + " mW", "entry " + pm(js.EntryMs, js.EntryU95Ms, 1) + " ms"} {
					if !strings.Contains(line, want) {
						t.Errorf("terminal %q lacks %q", line, want)
					}
				}
			}
		}
	}
	check(out, meas.DevSlp, stdout)

	// `report` of the same capture judges the same cycles the same way.
	again := filepath.Join(t.TempDir(), "again")
	rout, e, c := run(t, context.Background(), "report", filepath.Join(out, "capture.iwcap"), "--out", again)
	if c != 0 {
		t.Fatalf("report exit %d: %s", c, e)
	}
	check(again, meas.DevSlp, rout)
	// … and classifies against the same levels (the run's profiles are in
	// the capture's header), so residency and state power agree too.
	var a, b struct {
		Drives []struct {
			Residency   map[string]float64 `json:"residency"`
			StatePowerW map[string]float64 `json:"state_power_w"`
		} `json:"drives"`
	}
	readJSON(t, filepath.Join(out, "report.json"), &a)
	readJSON(t, filepath.Join(again, "report.json"), &b)
	for i := range a.Drives {
		for k, v := range a.Drives[i].Residency {
			if b.Drives[i].Residency[k] != v {
				t.Errorf("drive %d residency %s: measure %v, report %v", i, k, v, b.Drives[i].Residency[k])
			}
		}
		for k, v := range a.Drives[i].StatePowerW {
			if b.Drives[i].StatePowerW[k] != v {
				t.Errorf("drive %d state power %s: measure %v, report %v", i, k, v, b.Drives[i].StatePowerW[k])
			}
		}
	}
}

// TestDevSlpVerifyExitStatus: a failed verdict exits 1 with the reason; a
// set-up where nothing supports DevSlp exits 1 too (nothing verified),
// without calling the drive a failure.
func TestDevSlpVerifyExitStatus(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end run on the emulator")
	}
	for _, c := range []struct {
		profile, want, not string
	}{
		{"broken-devslp", "FAIL", "NOT SUPPORTED"},
		{"hdd-7200", "no drive supports DevSlp", "FAIL"},
	} {
		t.Run(c.profile, func(t *testing.T) {
			dir := t.TempDir()
			cfgPath := filepath.Join(dir, "c.yaml")
			body := "meter:\n  kind: emulator\ndrives:\n  - name: d\n    port: 1\n    profile: " + c.profile +
				"\n    size_bytes: 16777216\ndevslp:\n  cycles: 2\n  policy: med_power_with_dipm\n  settle: 500ms\n  hold: 200ms\n  return: 300ms\n"
			if err := os.WriteFile(cfgPath, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := run(t, context.Background(), "devslp", "verify", "--config", cfgPath, "--out", filepath.Join(dir, "out"), "--quiet")
			if code != 1 || !strings.Contains(stdout+stderr, c.want) || strings.Contains(stdout, c.not) {
				t.Errorf("exit %d, want 1 saying %q and not %q:\n%s\n%s", code, c.want, c.not, stdout, stderr)
			}
			if c.profile == "broken-devslp" {
				// The help promises a table per cycle: one row per cycle
				// run, each with its outcome.
				rows := 0
				for _, l := range strings.Split(stdout, "\n") {
					if f := strings.Fields(l); len(f) > 2 && (f[0] == "1" || f[0] == "2") && (f[1] == "fail" || f[1] == "inconclusive" || f[1] == "pass") {
						rows++
					}
				}
				if !strings.Contains(stdout, "cycle outcome") || rows != 2 {
					t.Errorf("no per-cycle table of 2 rows (%d):\n%s", rows, stdout)
				}
			}
		})
	}
}
