package main

// No number without its check (issue 26 item 3), through the commands that
// print and draw them: the fixtures are TestSafetyCLIFixtures'.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/analysis"
)

const hostileDir = "../../fixtures/hostile/"

// TestPlotDrawsSamplesWhenSummariesDisagree: a capture whose summary levels
// are ×1000 or zeroed (CRC intact) while its samples say 0.4 W is drawn
// from the samples, with a note naming the first bad chunk; the clean one
// from its summaries at the same level.
func TestPlotDrawsSamplesWhenSummariesDisagree(t *testing.T) {
	t.Parallel()
	peak := func(name string) (float64, []string) {
		pd, err := analysis.PlotTraces(hostileDir+name, analysis.PlotOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		hi, lo := 0.0, 1e300
		for _, tr := range pd.Traces {
			for k := range tr.Power.T {
				hi, lo = max(hi, tr.Power.Max[k]), min(lo, tr.Power.Min[k])
			}
		}
		if lo > hi {
			t.Fatalf("%s: nothing drawn", name)
		}
		return hi, pd.Notes
	}
	clean, notes := peak("safety-cli-clean.iwcap")
	if clean < 0.39 || clean > 0.41 || strings.Contains(strings.Join(notes, " "), "disagree") {
		t.Fatalf("clean capture: peak %g W, notes %q", clean, notes)
	}
	for _, name := range []string{"safety-cli-summary-x1000.iwcap", "safety-cli-summary-zero.iwcap"} {
		hi, notes := peak(name)
		if hi < 0.39 || hi > 0.41 {
			t.Errorf("%s: drawn up to %g W, the samples say 0.4 W", name, hi)
		}
		if n := strings.Join(notes, "\n"); !strings.Contains(n, "summary chunk(s) disagree with the samples") || !strings.Contains(n, "at byte ") {
			t.Errorf("%s: no note naming the chunk: %s", name, n)
		}
	}
}

// TestCalibrationRefusedEndToEnd: gains of 0, ×1000 and NaN in every samples
// chunk leave no samples (exit 2, the chunk and reason named); one chunk
// ×1000 among good ones costs that chunk only.
func TestCalibrationRefusedEndToEnd(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"safety-cli-gain-0.iwcap":    "voltage gain 0 V per count is not a positive number",
		"safety-cli-gain-1000.iwcap": "is not the channel's LSB 0.00125 V (header p1.5v): the samples would read 1000×",
		"safety-cli-gain-nan.iwcap":  "calibration entry 0 is not finite",
	} {
		out, e, code := run(t, context.Background(), "report", hostileDir+name, "--out", filepath.Join(t.TempDir(), "r"), "--no-html")
		if code != 2 || !strings.Contains(out+e, want) || !strings.Contains(out+e, "the capture holds no samples") {
			t.Errorf("%s: exit %d, want 2 with %q:\n%s%s", name, code, want, out, e)
		}
	}
	out, e, code := run(t, context.Background(), "report", hostileDir+"safety-cli-gain-1000-one.iwcap", "--out", filepath.Join(t.TempDir(), "r"), "--json", "--no-html")
	if code != 0 || !strings.Contains(out+e, "the samples would read 1000×") {
		t.Fatalf("one chunk ×1000: exit %d:\n%s", code, e)
	}
	if !strings.Contains(out, `"average_w": 0.4`) {
		t.Errorf("one chunk ×1000: the average is not the good chunks' 0.4 W:\n%.600s", out)
	}
}

// TestParquetNoPowerExits2: export --parquet of a capture in which no drive
// has a single power sample (one rail only) exits 2 and writes nothing; it
// used to say "the capture holds no samples" and exit 0 with four files.
func TestParquetNoPowerExits2(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "pq")
	_, e, code := run(t, context.Background(), "export", hostileDir+"safety-cli-one-rail.iwcap", "--parquet", dir)
	if code != 2 || !strings.Contains(e, "no drive has a power sample") {
		t.Errorf("exit %d, want 2: %s", code, e)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s was written (%v)", dir, err)
	}
}
