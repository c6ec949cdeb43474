package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// namedValue is a quantity as an output shows it: its name (the label or
// column it is under), the drive it is of, where, and the text.
type namedValue struct {
	drive, name, where, text string
}

// reportValues are the JSON values the named quantities must show: by
// drive name, by quantity name, the text every output must print.
type reportValues map[string]map[string]string

// expected builds the texts each named quantity must show, from
// report.json and states.json: the DevSlp figures as states.PM prints
// them (2 decimals, mW and ms), residency to 0.1 %, the mean in each
// state's intervals as the Interface-states table prints it.
func expected(t *testing.T, dir string) reportValues {
	t.Helper()
	var rep struct {
		Drives []struct {
			Name        string             `json:"name"`
			Residency   map[string]float64 `json:"residency"`
			StatePowerW map[string]float64 `json:"state_power_w"`
			DevSlp      struct {
				FloorW     *float64 `json:"floor_w"`
				FloorU95W  *float64 `json:"floor_u95_w"`
				EntryMs    *float64 `json:"entry_ms"`
				EntryU95Ms *float64 `json:"entry_u95_ms"`
				RiseMs     *float64 `json:"rise_ms"`
				RiseU95Ms  *float64 `json:"rise_u95_ms"`
				ExitMs     *float64 `json:"exit_ms"`
				ExitU95Ms  *float64 `json:"exit_u95_ms"`
				PreCycleW  *float64 `json:"pre_cycle_w"`
				PreU95W    *float64 `json:"pre_cycle_u95_w"`
				Cycles     []struct {
					Cycle     int      `json:"cycle"`
					FloorW    *float64 `json:"floor_w"`
					FloorU95W *float64 `json:"floor_u95_w"`
				} `json:"cycle_results"`
			} `json:"devslp"`
		} `json:"drives"`
	}
	readJSON(t, filepath.Join(dir, "report.json"), &rep)
	var st struct {
		Drives []struct {
			Name      string             `json:"name"`
			Residency map[string]float64 `json:"residency"`
			PowerW    map[string]float64 `json:"power_w"`
			PowerU95W map[string]float64 `json:"power_u95_w"`
		} `json:"drives"`
	}
	readJSON(t, filepath.Join(dir, "states.json"), &st)
	out := reportValues{}
	for i, d := range rep.Drives {
		m := map[string]string{}
		ds := d.DevSlp
		m["DevSlp floor"] = pm(ds.FloorW, ds.FloorU95W, 1e3)
		m["entry"] = pm(ds.EntryMs, ds.EntryU95Ms, 1)
		m["power rise"] = pm(ds.RiseMs, ds.RiseU95Ms, 1)
		m["exit to first read"] = pm(ds.ExitMs, ds.ExitU95Ms, 1)
		m["pre-cycle"] = pm(ds.PreCycleW, ds.PreU95W, 1e3)
		for _, c := range ds.Cycles {
			m[fmt.Sprintf("cycle %d: DevSlp floor", c.Cycle)] = pm(c.FloorW, c.FloorU95W, 1e3)
		}
		for k, v := range d.Residency {
			m["residency "+k] = fmt.Sprintf("%.1f %%", 100*v)
		}
		if i < len(st.Drives) {
			s := st.Drives[i]
			for k, v := range s.Residency {
				if got := fmt.Sprintf("%.1f %%", 100*v); got != m["residency "+k] {
					t.Errorf("%s: %s residency %s: states.json %s, report.json %s", dir, d.Name, k, got, m["residency "+k])
				}
			}
			for k, v := range s.PowerW {
				if d.StatePowerW[k] != v {
					t.Errorf("%s: %s power in %s: states.json %v, report.json state_power_w %v", dir, d.Name, k, v, d.StatePowerW[k])
				}
				x := v
				var u *float64
				if uu, ok := s.PowerU95W[k]; ok {
					u = &uu
				}
				m["mean in intervals "+k] = pm(&x, u, 1e3)
			}
		}
		out[d.Name] = m
	}
	return out
}

// shownValues finds every named quantity report.md and a terminal output
// print: the DevSlp, Residency, Declared figures and Interface-states
// tables, the verdict lines ("DevSlp floor X mW", "cycle N: DevSlp floor
// …", "entry …"), measure's headline floor and residency columns, and the
// "declared:" lines.
func shownValues(t *testing.T, dir, terminal string, names []string) []namedValue {
	t.Helper()
	var out []namedValue
	md := filepath.Join(dir, "report.md")
	rows := mdTableUnder(t, md, "DevSlp")
	col := func(rows [][]string, name string) int {
		for i, c := range rows[0] {
			if c == name {
				return i
			}
		}
		t.Fatalf("%s: no column %q in %v", md, name, rows[0])
		return -1
	}
	for _, r := range rows[1:] {
		for name, c := range map[string]string{"DevSlp floor": "Floor (mW)", "entry": "Entry (ms)", "power rise": "Power rise (ms)",
			"exit to first read": "Exit to first read (ms)", "pre-cycle": "Pre-cycle (mW)"} {
			out = append(out, namedValue{r[0], name, "report.md DevSlp table", r[col(rows, c)]})
		}
		out = append(out, reasonValues(r[0], "report.md DevSlp reason", r[col(rows, "Reason")])...)
	}
	rows = mdTableUnder(t, md, "Residency")
	for _, r := range rows[1:] {
		for i, h := range rows[0][1:] {
			out = append(out, namedValue{r[0], "residency " + strings.ToLower(h), "report.md Residency table", r[i+1]})
		}
	}
	rows = mdTableUnder(t, md, "Interface states detected from power")
	for _, r := range rows[1:] {
		st := r[col(rows, "State")]
		if strings.HasPrefix(st, "transitions") || strings.HasPrefix(st, "not classified") {
			continue
		}
		out = append(out, namedValue{r[0], "residency " + st, "report.md Interface states", r[col(rows, "Residency")]},
			namedValue{r[0], "mean in intervals " + st, "report.md Interface states", r[col(rows, "Mean in intervals (mW)")]})
	}
	if b, _ := os.ReadFile(md); strings.Contains(string(b), "## Declared figures") {
		rows = mdTableUnder(t, md, "Declared figures")
		for _, r := range rows[1:] {
			if _, meas, ok := strings.Cut(r[col(rows, "Declared · measured")], "measured "); ok {
				out = append(out, namedValue{r[0], r[col(rows, "Quantity")], "report.md Declared figures", strings.TrimSuffix(strings.TrimSuffix(meas, " mW"), " W")})
			}
		}
	}
	// The terminal: verdict lines name their port; the other lines their drive.
	byPort := map[string]string{}
	for i, n := range names {
		byPort[strconv.Itoa(i+1)] = n
	}
	verdict := regexp.MustCompile(`^DevSlp port (\d+): (.*)$`)
	figure := regexp.MustCompile(`(?:^|[;,] )(DevSlp floor|entry|power rise|exit to first read) (\S+(?: ± \S+)?) (mW|ms)`)
	for _, l := range strings.Split(terminal, "\n") {
		if m := verdict.FindStringSubmatch(l); m != nil {
			drive := byPort[m[1]]
			body := m[2]
			if v, ok := strings.CutPrefix(body, "pre-cycle (Slumber) power "); ok {
				out = append(out, namedValue{drive, "pre-cycle", "terminal", strings.TrimSuffix(v, " mW")})
				continue
			}
			// The pooled figures follow the last "; ": the reason, if any,
			// comes before them.
			reason, figs := "", body
			if i := strings.LastIndex(body, "; "); i >= 0 {
				reason, figs = body[:i], body[i:]
			}
			out = append(out, reasonValues(drive, "terminal verdict reason", reason)...)
			for _, f := range figure.FindAllStringSubmatch(figs, -1) {
				out = append(out, namedValue{drive, f[1], "terminal verdict", f[2]})
			}
			continue
		}
		if rest, ok := strings.CutPrefix(l, "declared: "); ok {
			for _, n := range names {
				if q, ok := strings.CutPrefix(rest, n+": "); ok {
					name, text, _ := strings.Cut(q, ": ")
					if _, meas, ok := strings.Cut(text, "measured "); ok {
						meas = strings.Split(meas, " (")[0]
						out = append(out, namedValue{n, name, "terminal declared", strings.TrimSuffix(strings.TrimSuffix(meas, " mW"), " W")})
					}
				}
			}
		}
		// measure's headline: "... <floor> mW a/b/c/d/e/f %".
		for _, n := range names {
			if !strings.HasPrefix(l, n+" ") {
				continue
			}
			hm := regexp.MustCompile(`(\S+ ± \S+|\S+|—)(?: mW)? +(\d+\.\d)/(\d+\.\d)/(\d+\.\d)/(\d+\.\d)/(\d+\.\d)/(\d+\.\d) %$`).FindStringSubmatch(l)
			if hm == nil {
				continue
			}
			out = append(out, namedValue{n, "DevSlp floor", "terminal headline", hm[1]})
			for i, s := range []string{"active", "background", "idle", "partial", "slumber", "devslp"} {
				out = append(out, namedValue{n, "residency " + s, "terminal headline", hm[2+i] + " %"})
			}
		}
	}
	return out
}

// reasonValues are the figures a verdict reason worded from one cycle
// quotes: "cycle N: DevSlp floor X ± Y mW …".
func reasonValues(drive, where, reason string) []namedValue {
	m := regexp.MustCompile(`cycle (\d+): DevSlp floor (\S+ ± \S+) mW`).FindStringSubmatch(reason)
	if m == nil {
		if strings.Contains(reason, "DevSlp floor") {
			// A floor in a reason that does not say whose it is.
			return []namedValue{{drive, "DevSlp floor", where, "unlabelled: " + reason}}
		}
		return nil
	}
	return []namedValue{{drive, "cycle " + m[1] + ": DevSlp floor", where, m[2]}}
}

// checkOneValueEach: every named quantity an output prints shows the one
// value report.json (and states.json) hold for it, in every table, line
// and file. A second value under one name — the DevSlp table's floor and
// another "devslp" power, or a verdict line with a reason's floor beside
// the pooled one — fails.
func checkOneValueEach(t *testing.T, dir, terminal string) {
	t.Helper()
	want := expected(t, dir)
	var names []string
	var rep struct {
		Drives []struct {
			Name string `json:"name"`
		} `json:"drives"`
	}
	readJSON(t, filepath.Join(dir, "report.json"), &rep)
	for _, d := range rep.Drives {
		names = append(names, d.Name)
	}
	seen := map[string]int{}
	for _, v := range shownValues(t, dir, terminal, names) {
		w, ok := want[v.drive][v.name]
		if !ok {
			t.Errorf("%s: %s shows %q for %s, which report.json does not have", v.where, v.drive, v.text, v.name)
			continue
		}
		seen[v.name]++
		got := strings.TrimSpace(v.text)
		if strings.HasSuffix(v.name, "%") || strings.HasPrefix(v.name, "residency") {
			got = strings.ReplaceAll(got, " %", "") + " %"
		}
		if got != w {
			t.Errorf("%s: %s %s is %q, report.json %q", v.where, v.drive, v.name, v.text, w)
		}
	}
	for _, name := range []string{"DevSlp floor", "entry", "residency devslp", "mean in intervals devslp"} {
		if seen[name] == 0 {
			t.Errorf("no output showed %q", name)
		}
	}
}
