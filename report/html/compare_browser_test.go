package html

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/synthcap"
	"github.com/idlewatt/idlewatt/internal/outfile"
)

// compare.html in a real browser: two runs of different length and power
// on one axis load with no console error and no network request, the chart
// is drawn with a line per run and drive, the delta table shows the cells
// analysis formats for compare.md, and each line's mean over its whole run
// is report.json's average power (within 0.1 %).
func TestBrowserCompare(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no browser")
	}
	a := synthcap.Review(30*time.Second, 5000, 20)
	b := synthcap.Review(20*time.Second, 5000, -10)
	b.Drives[0].IdleW, b.Drives[1].IdleW = 0.45, 0.18
	var runs []CompareRun
	var reps []*analysis.Report
	for i, sc := range []synthcap.Scenario{a, b} {
		_, _, rep, p := scenarioReport(t, sc)
		runs = append(runs, CompareRun{Label: fmt.Sprintf("run%d", i+1), Report: rep, Pyramid: p})
		reps = append(reps, rep)
	}
	path := filepath.Join(t.TempDir(), CompareFileName)
	if err := WriteCompare(path, runs, 0, analysis.CompareNotes(reps, []string{"run1", "run2"}), outfile.Options{}); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	pg := openInBrowser(t, path)
	t.Logf("compare.html %.2f MB; interactive %.0f ms after navigation (page's own clock %.0f ms)", float64(st.Size())/1e6, pg.LoadMs, pg.ReadyMs)
	px := eval[[3]float64](t, pg, drawnPixelsJS)
	if px[1] < 200 || px[0] < 0.01*px[2] {
		t.Errorf("chart canvas: %.0f drawn pixels, %.0f in the first line's colour, of %.0f: not drawn", px[0], px[1], px[2])
	}
	labels := eval[[]string](t, pg, `window.idlewatt.series`)
	var want []string
	for i, r := range reps {
		for _, d := range r.Drives {
			want = append(want, runs[i].Label+": "+d.Name)
		}
	}
	if strings.Join(labels, "|") != strings.Join(want, "|") {
		t.Errorf("lines %q, want %q", labels, want)
	}
	k := 0
	for i, r := range reps {
		for _, d := range r.Drives {
			m := eval[float64](t, pg, fmt.Sprintf(`window.idlewatt.mean(%d, -1e9, 1e9)`, k))
			if !within(m, d.AverageW, 1e-3) {
				t.Errorf("%s %s: line's mean %.6f W, report.json average %.6f W", runs[i].Label, d.Name, m, d.AverageW)
			}
			k++
		}
	}
	var cells [][]string
	for _, row := range analysis.CompareDeltas(reps, 0) {
		if row.Run == 0 {
			continue
		}
		c := []string{runs[row.Run].Label, row.Drive.Name, row.BaseDrive.Name}
		for j := range row.Deltas {
			c = append(c, analysis.FormatCompareDelta(row, j))
		}
		cells = append(cells, c)
	}
	got := eval[[][]string](t, pg, `[...document.querySelectorAll('#deltas tbody tr')].map(r => [...r.cells].map(c => c.textContent))`)
	if fmt.Sprint(got) != fmt.Sprint(cells) || len(got) != 2 {
		t.Errorf("delta table %q, want %q", got, cells)
	}
	v := eval[[2]float64](t, pg, `window.idlewatt.zoom(5, 6)`)
	if v != [2]float64{5, 6} {
		t.Errorf("zoom to 5–6 s: view %v", v)
	}
	if px := eval[[3]float64](t, pg, drawnPixelsJS); px[1] < 50 {
		t.Errorf("after zooming: %.0f pixels in the first line's colour", px[1])
	}
	if e := pg.errors(); len(e) > 0 {
		t.Errorf("console errors: %v", e)
	}
	if n := pg.network(); len(n) > 0 {
		t.Errorf("network requests: %v", n)
	}
}
