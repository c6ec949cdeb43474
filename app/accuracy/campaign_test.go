package accuracy

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/states/drivesim"
)

// The CI campaign: eight drives (two hubs) with short phases, and drive 5
// replayed alone at the same time. It asserts that the chain runs end to
// end on every drive, that the table is produced, that the replay is the
// same drive, that the analysis saw no model, and the goals that hold today
// (average power and energy, no false PASS); the rest are logged
// (docs/analysis.md has the long campaign).
func TestShortCampaign(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end campaign on the emulator")
	}
	if err := canStart(); err != nil {
		t.Skip(err)
	}
	const seed = 9 // drives 0–7: four with working DevSlp, one without, two broken, one HDD
	out, rout := t.TempDir(), t.TempDir()
	var c, r *Campaign
	var err, rerr error
	var wg sync.WaitGroup
	wg.Go(func() {
		c, err = Run(context.Background(), Options{Drives: 8, Seed: seed, Out: out, Parallel: 2, Phases: ShortPhases()})
	})
	wg.Go(func() {
		r, rerr = Run(context.Background(), Options{Seed: seed, Replay: []int{5}, Out: rout, Phases: ShortPhases()})
	})
	wg.Wait()
	if err != nil || rerr != nil {
		t.Fatalf("campaign: %v; replay: %v", err, rerr)
	}
	if len(c.Results) != 8 || c.Drives != 8 {
		t.Fatalf("%d results for 8 drives", len(c.Results))
	}
	for _, d := range c.Results {
		if d.Error != "" || d.Truth == nil || d.Measured == nil || len(d.Checks) < 6 {
			t.Errorf("drive %d: the chain did not complete: %q (%d checks)", d.Case.Index, d.Error, len(d.Checks))
		}
	}

	// The table: every metric row, and the files.
	if err := c.WriteFiles(out, "go test", false); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "accuracy.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{"| active_idle_w |", "| average_w |", "| energy_j |", "| devslp_floor_w |", "| entry_ms |", "| exit_ms |",
		"| rise_ms |", "| pre_cycle_w |", "| residency.idle |", "DevSlp verdicts (8 drives)", "### Per noise family", "not expected to meet the goals"} {
		if !strings.Contains(string(md), row) {
			t.Errorf("accuracy.md has no %q", row)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "accuracy.json")); err != nil {
		t.Error(err)
	}
	if err := CheckOut(out, false); err == nil {
		t.Error("an existing campaign was not refused without overwrite")
	}
	// Blind: each run's capture names no profile that exists and records
	// no model; the header states each drive's LSB; every family ran.
	fams := map[string]bool{}
	for _, d := range c.Results {
		fams[d.Case.Family] = true
		if math.Abs(d.LSB5VA/d.Case.Meter.LSB5VA-1) > 0.005 {
			t.Errorf("drive %d: the capture states an LSB of %g A, the hub's is %g A", d.Case.Index, d.LSB5VA, d.Case.Meter.LSB5VA)
		}
		r, err := capture.Open(filepath.Join(d.Dir, "capture.iwcap"))
		if err != nil {
			t.Fatal(err)
		}
		h := r.Header()
		r.Close()
		for _, di := range h.Drives {
			if di.Profile != HiddenProfile {
				t.Errorf("%s: port %d's profile is %q in the capture header", d.Dir, di.Port, di.Profile)
			}
		}
		if strings.Contains(string(h.Config), d.Case.Profile.Name) || strings.Contains(string(h.Config), "active_idle_w") {
			t.Errorf("%s: the capture header's configuration holds the model", d.Dir)
		}
	}
	if len(fams) != len(drivesim.Families) {
		t.Errorf("families run: %v", fams)
	}
	var tb strings.Builder
	c.Table(&tb)
	t.Logf("campaign table:\n%s", tb.String())

	// The replay is drive 5 again: same profile, port, policy and seeds,
	// and its model says so in the truth file.
	if len(r.Results) != 1 {
		t.Fatalf("replay: %d results", len(r.Results))
	}
	a, b := c.Results[5].Case, r.Results[0].Case
	if !reflect.DeepEqual(a, b) {
		t.Errorf("replayed drive differs:\n%+v\n%+v", a, b)
	}
	f, err := os.Open(filepath.Join(r.Results[0].Dir, "truth-p2.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := drivesim.ReadTruth(f)
	f.Close()
	if err != nil || h.Profile != a.Profile.Name || h.Seed != a.EmulatorSeed*100+int64(a.Port) {
		t.Errorf("replay's truth header %+v (%v), want profile %s seed %d", h, err, a.Profile.Name, a.EmulatorSeed*100+int64(a.Port))
	}

	// Goals that hold today.
	for _, m := range c.Metrics {
		if (m.Metric == "average_w" || m.Metric == "energy_j") && !m.Met {
			t.Errorf("%s: %d of %d drives off %s (max relative error %.3f %%)", m.Metric, m.Breaks, m.N, m.Goal, 100**m.RelMax)
		}
	}
	if c.Verdicts.FalsePass != 0 {
		t.Errorf("%d false DevSlp PASS", c.Verdicts.FalsePass)
	}
	t.Logf("goals missed today: %s", strings.Join(c.Missed, "; "))

	// A rescore of the campaign's own captures with this build gives every
	// check the run gave (one path: a capture analysed again reads as it
	// did live), and a drive's report.json is written anew.
	sout := t.TempDir()
	s, err := Rescore(context.Background(), RescoreOptions{From: out, Out: sout, Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range c.Results {
		e := s.Results[i]
		if a, b := checksJSON(t, e.Checks), checksJSON(t, d.Checks); a != b || d.Verdict != e.Verdict || e.Error != "" {
			t.Errorf("drive %d rescored: checks\n%s\nverdict %q error %q; the run's\n%s\nverdict %q", d.Case.Index, a, e.Verdict, e.Error, b, d.Verdict)
		}
		if _, err := os.Stat(filepath.Join(e.Dir, "report.json")); err != nil || filepath.Dir(e.Dir) != filepath.Join(sout, "runs") {
			t.Errorf("drive %d: rescored into %s: %v", d.Case.Index, e.Dir, err)
		}
	}
	if !reflect.DeepEqual(s.Coverage, c.Coverage) || !reflect.DeepEqual(s.Verdicts, c.Verdicts) {
		t.Errorf("rescore: coverage %+v verdicts %+v; the run's %+v %+v", s.Coverage, s.Verdicts, c.Coverage, c.Verdicts)
	}
}

// checksJSON is cs as accuracy.json holds them.
func checksJSON(t *testing.T, cs []Check) string {
	t.Helper()
	b, err := json.MarshalIndent(cs, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
