package accuracy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeCampaign writes a scored campaign of n drives of seed into a new
// directory: drive i holds its active-idle interval unless i%miss == 0.
func writeCampaign(t *testing.T, seed uint64, n, miss int, fam string) string {
	t.Helper()
	dir := t.TempDir()
	var rs []DriveResult
	for i := range n {
		held := i%miss != 0
		tv, mv, lo, hi := 1.0, 1.001, 0.999, 1.0005
		if held {
			hi = 1.002
		}
		e := mv - tv
		rs = append(rs, DriveResult{Case: Case{Seed: seed, Index: i, Family: fam}, Dir: filepath.Join(dir, "runs", "hub-0000"),
			Checks: []Check{{Metric: "active_idle_w", Unit: "W", Truth: &tv, Measured: &mv, Lo: &lo, Hi: &hi, Err: &e, Tol: 0.01, Status: "ok", Held: &held}}})
	}
	c := summariseCampaign(Options{Seed: seed, Phases: Phases{Cycles: 4}}, rs, 0)
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "accuracy.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A pool tabulates every campaign's drives together: its counts are the
// sums of theirs, each family's cell pools the seeds, and each campaign's
// own coverage is listed. The same seed twice, or one campaign, is refused.
func TestPoolSumsCampaigns(t *testing.T) {
	a := writeCampaign(t, 12, 25, 5, "ar1")  // 20 of 25 held: 80 %, under the family goal
	b := writeCampaign(t, 13, 25, 25, "ar1") // 24 of 25
	c := writeCampaign(t, 14, 25, 25, "ar1") // 24 of 25
	p, err := Pool(PoolOptions{From: []string{a, b, c}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Drives != 75 || p.Coverage.Held != 68 || p.Coverage.Intervals != 75 {
		t.Fatalf("pooled %d drives, %d of %d held; want 75, 68 of 75", p.Drives, p.Coverage.Held, p.Coverage.Intervals)
	}
	if len(p.Families) != 1 || p.Families[0].Drives != 75 {
		t.Fatalf("families %+v: want ar1 with 75 drives", p.Families)
	}
	for _, m := range p.Families[0].Metrics {
		if m.Metric == "active_idle_w" && !m.CoverageMet {
			t.Errorf("ar1 active idle pooled 68/75 = 90.7 %% is under the family goal by the table; seed 12 alone (80 %%) is, the pool is not")
		}
	}
	if len(p.Pooled) != 3 || p.Pooled[0].Seed != 12 || p.Pooled[0].Coverage.Held != 20 {
		t.Fatalf("sources %+v", p.Pooled)
	}
	var md strings.Builder
	p.Markdown(&md)
	if !strings.Contains(md.String(), "Pooled: seeds 12, 13, 14 (75 drives)") {
		t.Errorf("markdown lacks the pooled seeds:\n%s", md.String())
	}
	if _, err := Pool(PoolOptions{From: []string{a, a}}); err == nil || !strings.Contains(err.Error(), "seed 12 again") {
		t.Errorf("same seed twice: err %v", err)
	}
	if _, err := Pool(PoolOptions{From: []string{a}}); err == nil {
		t.Error("one campaign pooled without an error")
	}
}
