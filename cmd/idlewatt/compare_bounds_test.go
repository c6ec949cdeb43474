package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis/synthcap"
	"github.com/idlewatt/idlewatt/report"
)

// TestCompareBoundsDrives: more drives than one table and chart can hold is
// bad input, refused before anything is drawn (a 25,000-drive report.json
// drew for 90 s, ignoring SIGTERM).
func TestCompareBoundsDrives(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "cmp")
	args := []string{"compare", "--out", out}
	for range report.MaxCompareDrives/2 + 1 { // the fixture holds 2 drives
		args = append(args, "../../fixtures/reports/small/report.json")
	}
	_, e, code := run(t, context.Background(), args...)
	if code != 2 || !strings.Contains(e, "at most 500 fit one table and chart") {
		t.Fatalf("exit %d: %s", code, e)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("--out created for a refused comparison: %v", err)
	}
	if _, e, code := run(t, context.Background(), "compare", "--out", out, "../../fixtures/reports/small/report.json"); code != 0 {
		t.Fatalf("one report: exit %d: %s", code, e)
	}
}

// TestCompareRefusesImpossibleHeadline: a report.json whose headline value
// is negative, beyond any drive's or ±huge (active_idle_w −1e308 was charted
// without a note) is bad input naming the file and the key, refused before
// anything is written; null (not measured) is still compared, shown as —.
func TestCompareRefusesImpossibleHeadline(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile("../../fixtures/reports/small/report.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	variant := func(name, key string, val any) string {
		var m map[string]any
		if err := json.Unmarshal(src, &m); err != nil {
			t.Fatal(err)
		}
		d := m["drives"].([]any)[1].(map[string]any)
		if k, sub, ok := strings.Cut(key, "."); ok {
			d[k].(map[string]any)[sub] = val
		} else {
			d[key] = val
		}
		b, _ := json.Marshal(m)
		p := filepath.Join(dir, name+".json")
		os.WriteFile(p, b, 0o644)
		return p
	}
	good := "../../fixtures/reports/small/report.json"
	for _, tc := range []struct {
		key  string
		val  any
		want string
	}{
		{"active_idle_w", -1e308, "-1e+308 is negative"},
		{"active_idle_w", 1e308, "is beyond any drive's"},
		{"average_w", -0.5, "-0.5 is negative"},
		{"peak_w", 2e6, "is beyond any drive's"},
		{"peak_windows.1s_w", -1, "is negative"},
		{"energy_j", 1e13, "is beyond any drive's"},
		{"duration_s", -6, "is negative"},
		{"active_idle_u95_w", -0.1, "is negative"},
		{"devslp.power_w", 1e300, "is beyond any drive's"},
	} {
		p := variant(strings.ReplaceAll(tc.key, ".", "-"), tc.key, tc.val)
		out := filepath.Join(dir, "cmp-"+tc.key)
		_, e, code := run(t, context.Background(), "compare", good, p, "--out", out)
		if want := p + ": drives[1]." + tc.key + " (drive \"B 256GB\"): "; code != 2 || !strings.Contains(e, want) || !strings.Contains(e, tc.want) {
			t.Errorf("%s = %v: exit %d, want 2 and %q … %q: %s", tc.key, tc.val, code, want, tc.want, e)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s = %v: --out written for a refused comparison: %v", tc.key, tc.val, err)
		}
	}
	// null is "not measured": compared, shown as — in the table, no bar.
	p := variant("null-idle", "active_idle_w", nil)
	out := filepath.Join(dir, "cmp-null")
	if _, e, code := run(t, context.Background(), "compare", good, p, "--out", out); code != 0 {
		t.Fatalf("null active_idle_w: exit %d: %s", code, e)
	}
	md, _ := os.ReadFile(filepath.Join(out, "compare.md"))
	if !strings.Contains(string(md), "| B 256GB | — | 0.200000") {
		t.Errorf("null active_idle_w not shown as —:\n%s", md)
	}
}

// compare --html finds each run's capture beside its report.json when the
// run directories were moved after the runs (capture.path names where the
// capture was).
func TestCompareHTMLMovedRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	for _, r := range []string{"run1", "run2"} {
		d := filepath.Join(dir, r)
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := synthcap.Write(filepath.Join(d, "capture.iwcap"), synthcap.Review(4*time.Second, 2000, 0)); err != nil {
			t.Fatal(err)
		}
		if o, e, code := run(t, ctx, "report", filepath.Join(d, "capture.iwcap"), "--out", d, "--no-html"); code != 0 {
			t.Fatalf("report %s: exit %d %s%s", r, code, o, e)
		}
	}
	moved := filepath.Join(dir, "moved")
	if err := os.Mkdir(moved, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"run1", "run2"} {
		if err := os.Rename(filepath.Join(dir, r), filepath.Join(moved, r)); err != nil {
			t.Fatal(err)
		}
	}
	cmp := filepath.Join(dir, "cmp")
	if o, e, code := run(t, ctx, "compare", "--out", cmp, "--html", filepath.Join(moved, "run1", "report.json"), filepath.Join(moved, "run2", "report.json")); code != 0 {
		t.Fatalf("compare --html of moved runs: exit %d %s%s", code, o, e)
	}
	b, err := os.ReadFile(filepath.Join(cmp, "compare.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"label":"run1"`, `"label":"run2"`, `"state_t":[0`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("compare.html has no %q", want)
		}
	}
}
