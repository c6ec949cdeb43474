package html

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis/synthcap"
)

// The page data pairs each series with the baseline run's series of the
// drive analysis compares it with (by name before port), and no label or
// drive name can end the page's scripts early.
func TestCompareData(t *testing.T) {
	evil := `</script><script>alert(1)</script>`
	base := synthcap.Review(3*time.Second, 1000, 0)
	other := synthcap.Review(3*time.Second, 1000, 0)
	// The other run has the baseline's drives on swapped ports, and a
	// third drive the baseline lacks by name or port.
	other.Drives[0].Port, other.Drives[1].Port = 2, 1
	other.Drives = append(other.Drives, synthcap.Drive{Port: 3, Name: evil, IdleW: 0.3, BusyW: 1})
	other.Bursts = nil
	runs := []CompareRun{compareRun(t, "base", base, CompareBudget(2)), compareRun(t, evil, other, CompareBudget(2))}
	page, err := buildCompare(runs, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(strings.ToLower(string(page)), "</script"); n != 4 {
		t.Errorf("the page has %d </script tags, want 4 (data, uPlot, core, compare)", n)
	}
	m := regexp.MustCompile(`(?s)<script type="application/json" id="idlewatt-data">(.*?)</script>`).FindSubmatch(page)
	if m == nil {
		t.Fatal("no page data")
	}
	var d struct {
		Runs []struct {
			Label string `json:"label"`
		} `json:"runs"`
		Series []struct {
			Run   int `json:"run"`
			Base  int `json:"base"`
			Drive struct {
				Port int    `json:"port"`
				Name string `json:"name"`
			} `json:"drive"`
		} `json:"series"`
		Deltas []struct {
			Series int `json:"series"`
		} `json:"deltas"`
	}
	if err := json.Unmarshal(m[1], &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Runs) != 2 || d.Runs[1].Label != evil || len(d.Series) != 5 {
		t.Fatalf("runs %+v, %d series", d.Runs, len(d.Series))
	}
	for i, s := range d.Series {
		switch {
		case s.Run == 0 && s.Base != -1:
			t.Errorf("series %d of the baseline run has a baseline series %d", i, s.Base)
		case s.Run == 1 && s.Drive.Name == evil:
			if s.Base != -1 {
				t.Errorf("the drive the baseline lacks is paired with series %d", s.Base)
			}
		case s.Run == 1:
			if b := d.Series[s.Base]; b.Run != 0 || b.Drive.Name != s.Drive.Name || b.Drive.Port == s.Drive.Port {
				t.Errorf("%s on port %d is paired with %s on port %d of run %d, want the baseline's drive of the same name", s.Drive.Name, s.Drive.Port, b.Drive.Name, b.Drive.Port, b.Run)
			}
		}
	}
	if len(d.Deltas) != 3 {
		t.Errorf("%d delta rows, want the other run's 3", len(d.Deltas))
	}
	for _, r := range d.Deltas {
		if r.Series < 2 || r.Series > 4 {
			t.Errorf("a delta row names series %d, not one of the other run's", r.Series)
		}
	}

	// A run whose capture was a FIFO (read once, by the analysis) is drawn
	// without its events, and the page says so.
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	runs[1].Capture = fifo
	page, err = buildCompare(runs, 0, nil)
	if err != nil {
		t.Fatalf("a run read from a FIFO: %v", err)
	}
	if !strings.Contains(string(page), "fifo is not a regular file: its I/O, DEVSLP pin and phase events are not shown") {
		t.Errorf("the page does not say the FIFO run's events are missing")
	}
}
