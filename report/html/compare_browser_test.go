package html

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/synthcap"
	"github.com/idlewatt/idlewatt/internal/browsertest"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/testutil"
)

// compareRun analyses a synthetic scenario with a Pyramid of budget b, as
// `idlewatt compare --html` does for each run.
func compareRun(t testing.TB, label string, sc synthcap.Scenario, b Budget) CompareRun {
	t.Helper()
	capPath := filepath.Join(t.TempDir(), "run.iwcap")
	if err := synthcap.Write(capPath, sc); err != nil {
		t.Fatal(err)
	}
	opts := analysis.DefaultOptions()
	p := NewPyramidFor(capPath, b)
	opts.Samples = p
	rep, err := analysis.Analyze(capPath, opts)
	if err != nil {
		t.Fatal(err)
	}
	return CompareRun{Label: label, Report: rep, Pyramid: p, Capture: capPath}
}

// writeCompare writes compare.html for runs (baseline the first).
func writeCompare(t testing.TB, runs []CompareRun) string {
	t.Helper()
	var reps []*analysis.Report
	var labels []string
	for _, r := range runs {
		reps = append(reps, r.Report)
		labels = append(labels, r.Label)
	}
	path := filepath.Join(t.TempDir(), CompareFileName)
	if err := WriteCompare(path, runs, 0, analysis.CompareNotes(reps, labels), outfile.Options{}); err != nil {
		t.Fatal(err)
	}
	return path
}

// compare.html in a real browser: two runs of different length and power
// (one with a hole in its samples) load with no console error and no
// network request and draw; every drive's envelope over the whole view
// reaches report.json's min and peak; a mouse drag selects; selections of
// each run's whole span and of each phase give report.json's energy, mean
// power, I/O and residency for every run (0.1 %), also with the runs
// aligned on a shared phase; table rows (click and keyboard) zoom and
// select; the strips draw the DevSlp state; the delta table is analysis'
// formatting; stacked, log and mW redraw.
func TestBrowserCompare(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no browser")
	}
	a := synthcap.Review(75*time.Second, 5000, 20)
	b := synthcap.Review(70*time.Second, 5000, -10)
	b.Drives[0].IdleW, b.Drives[1].IdleW = 0.45, 0.18
	b.Gaps = []synthcap.Gap{{Channel: -1, Start: 60000, Count: 3000}}
	runs := []CompareRun{compareRun(t, "run1", a, CompareBudget(2)), compareRun(t, "run2", b, CompareBudget(2))}
	reps := []*analysis.Report{runs[0].Report, runs[1].Report}
	path := writeCompare(t, runs)
	st, _ := os.Stat(path)
	pg := openInBrowser(t, path)
	t.Logf("compare.html %.2f MB; interactive %.0f ms after navigation (page's own clock %.0f ms)", float64(st.Size())/1e6, pg.LoadMs, pg.ReadyMs)
	px := browsertest.Eval[[3]float64](t, pg.Page, drawnPixelsJS)
	if px[1] < 200 || px[0] < 0.01*px[2] {
		t.Errorf("chart canvas: %.0f drawn pixels, %.0f in the first line's colour, of %.0f: not drawn", px[0], px[1], px[2])
	}

	type series struct {
		run int
		d   *analysis.DriveReport
	}
	var ser []series
	var want []string
	for i, r := range reps {
		for k := range r.Drives {
			ser = append(ser, series{i, &r.Drives[k]})
			want = append(want, runs[i].Label+": "+r.Drives[k].Name)
		}
	}
	if labels := browsertest.Eval[[]string](t, pg.Page, `window.idlewatt.series`); strings.Join(labels, "|") != strings.Join(want, "|") {
		t.Fatalf("series %q, want %q", labels, want)
	}

	// Both ways of decoding the embedded arrays (Uint8Array.fromBase64, and
	// atob where a browser lacks it) give the same numbers.
	dec := browsertest.Eval[[][]float64](t, pg.Page, `(() => {
	  const b = btoa(String.fromCharCode(...new Uint8Array(new Float32Array([1.5, -2, 3e-7, 2.2]).buffer)));
	  const f = Uint8Array.fromBase64, fast = Array.from(IW.f32(b));
	  Uint8Array.fromBase64 = undefined;
	  const slow = Array.from(IW.f32(b));
	  Uint8Array.fromBase64 = f;
	  return [fast, slow, [typeof f === 'function' ? 1 : 0]];
	})()`)
	if fmt.Sprint(dec[0]) != fmt.Sprint(dec[1]) || len(dec[0]) != 4 || dec[0][0] != 1.5 {
		t.Errorf("decoding: Uint8Array.fromBase64 gives %v, atob %v", dec[0], dec[1])
	}
	if dec[2][0] != 1 {
		t.Logf("this Chromium has no Uint8Array.fromBase64: only the atob path was used")
	}

	// The envelope: over the whole view each drive's band reaches its
	// lowest and highest sample (float32 in the page), and the mean lies
	// inside it in every column.
	for i, s := range ser {
		c := browsertest.Eval[[3][]*float64](t, pg.Page, fmt.Sprintf(`window.idlewatt.columns(%d, 1000)`, i))
		lo, hi, inside := math.Inf(1), math.Inf(-1), 0
		for j := range c[0] {
			if c[0][j] == nil {
				continue
			}
			mn, mx, me := *c[0][j], *c[1][j], *c[2][j]
			lo, hi = math.Min(lo, mn), math.Max(hi, mx)
			if me >= mn*(1-1e-6) && me <= mx*(1+1e-6) {
				inside++
			} else {
				t.Errorf("series %d column %d: mean %g outside its band %g–%g", i, j, me, mn, mx)
				break
			}
		}
		if !testutil.WithinRel(hi, float64(s.d.PeakW), 1e-6) || !testutil.WithinRel(lo, float64(s.d.MinW), 1e-6) {
			t.Errorf("%s: band over the whole view %.6f–%.6f W, report.json min %.6f, peak %.6f W", want[i], lo, hi, s.d.MinW, s.d.PeakW)
		}
		if inside < 500 {
			t.Errorf("%s: only %d of 1000 columns drawn", want[i], inside)
		}
	}

	// A real mouse drag across 30–60 % of the chart selects that interval
	// and fills the panel with one row per drive and run.
	r := browsertest.Eval[[4]float64](t, pg.Page, `(() => { const r = document.querySelector('.u-over').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`)
	v0 := browsertest.Eval[[2]float64](t, pg.Page, `window.idlewatt.view()`)
	y := r[1] + r[3]/2
	if err := chromedp.Do(pg.Ctx, chromedp.DragAndDropXY(r[0]+0.3*r[2], y, r[0]+0.6*r[2], y, 12)); err != nil {
		t.Fatal(err)
	}
	dragged := browsertest.Eval[[]float64](t, pg.Page, `window.idlewatt.selection()`)
	span := v0[1] - v0[0]
	if len(dragged) != 2 || math.Abs(dragged[0]-(v0[0]+0.3*span)) > 0.01*span || math.Abs(dragged[1]-(v0[0]+0.6*span)) > 0.01*span {
		t.Errorf("dragging over 30–60 %% of the chart selected %v, want about %.2f–%.2f s", dragged, v0[0]+0.3*span, v0[0]+0.6*span)
	}
	if n := browsertest.Eval[int](t, pg.Page, `document.querySelectorAll('#sel-table tbody tr').length`); n != len(ser) {
		t.Errorf("the selection panel after a drag has %d rows, want %d", n, len(ser))
	}
	if txt := browsertest.Eval[string](t, pg.Page, `document.querySelector('#sel-table tbody tr:last-child').textContent`); !strings.Contains(txt, " J (") || !strings.Contains(txt, "mAh") {
		t.Errorf("the last selection row (a run against the baseline) shows no energy delta or charge: %q", txt)
	}

	// check selects [a, z) on the axis and holds series i's figures to
	// report.json's: energy within 0.1 %, and the mean power.
	check := func(what string, i int, a, z, energy, mean float64) selStats {
		t.Helper()
		got := browsertest.Eval[[]selStats](t, pg.Page, fmt.Sprintf(`window.idlewatt.select(%g, %g)`, a, z))
		s := got[i]
		if !testutil.WithinRel(s.EnergyJ, energy, 1e-3) {
			t.Errorf("%s: %s over %.4f–%.4f s: selection %.6f J, report.json %.6f J (%+.3f %%)", what, want[i], a, z, s.EnergyJ, energy, 100*(s.EnergyJ/energy-1))
		} else {
			t.Logf("%s: %s: selection %.6f J, report.json %.6f J (%+.4f %%)", what, want[i], s.EnergyJ, energy, 100*(s.EnergyJ/energy-1))
		}
		if !math.IsNaN(mean) && !testutil.WithinRel(s.MeanW, mean, 1e-3) {
			t.Errorf("%s: %s: selection mean %.6f W, report.json %.6f W", what, want[i], s.MeanW, mean)
		}
		return s
	}
	for i, s := range ser {
		rep := reps[s.run]
		end := rep.Capture.StartS + rep.Capture.DurationS + 1e-3
		got := check("whole run", i, float64(rep.Capture.StartS), float64(end), float64(s.d.EnergyJ), float64(s.d.AverageW))
		if uint64(got.IOOps) != s.d.IO.Ops {
			t.Errorf("%s: whole-run selection has %v I/O ops, report.json %d", want[i], got.IOOps, s.d.IO.Ops)
		}
		if g, w := got.Residency["active"], s.d.Residency.Active; math.Abs(g-w) > 0.002 {
			t.Errorf("%s: whole-run selection active residency %.4f, report.json %.4f", want[i], g, w)
		}
		for k, ph := range s.d.Phases {
			z := end
			if k+1 < len(s.d.Phases) {
				z = s.d.Phases[k+1].StartS
			}
			check("phase "+ph.Name, i, float64(ph.StartS), float64(z), float64(ph.EnergyJ), float64(ph.AverageW))
		}
	}

	// Aligned on the workload phase, the axis starts each run there: one
	// selection from 0 covers every run's workload phase (the last one).
	const wl = "workload:pcmark7-like"
	offs := browsertest.Eval[[]float64](t, pg.Page, fmt.Sprintf(`window.idlewatt.align(%q)`, wl))
	for i, s := range ser {
		last := s.d.Phases[len(s.d.Phases)-1]
		if last.Name != wl {
			t.Fatalf("%s: last phase %q", want[i], last.Name)
		}
		if math.Abs(offs[s.run]-float64(last.StartS)) > 1e-9 && s.d.Port == reps[s.run].Drives[0].Port {
			t.Errorf("run %d aligned at %.6f s, its workload starts at %.6f s", s.run+1, offs[s.run], last.StartS)
		}
		check("aligned on "+wl, i, float64(last.StartS)-offs[s.run], 80, float64(last.EnergyJ), float64(last.AverageW))
	}
	browsertest.Eval[[]float64](t, pg.Page, `window.idlewatt.align('')`)

	// Deeper than the buckets, around a DEVSLP pin edge, the chart draws
	// every sample: the scenario's power steps from idle to DevSlp at the
	// pin (no noise), so every column is one level or the other, never a
	// bucket's mean across the step.
	edge := browsertest.Eval[float64](t, pg.Page, `JSON.parse(document.getElementById('idlewatt-data').textContent).series[0].drive.pins[0][0]`)
	browsertest.Eval[[2]float64](t, pg.Page, fmt.Sprintf(`window.idlewatt.zoom(%g, %g)`, edge-0.004, edge+0.004))
	deep := browsertest.Eval[[3][]*float64](t, pg.Page, `window.idlewatt.columns(0, 1000)`)
	var idle, slp, other int
	for _, v := range deep[2] {
		switch {
		case v == nil:
		case testutil.WithinRel(*v, a.Drives[0].IdleW, 1e-4):
			idle++
		case testutil.WithinRel(*v, a.Drives[0].DevSlpW, 1e-4):
			slp++
		default:
			other++
		}
	}
	if idle < 100 || slp < 100 || other > 0 {
		t.Errorf("8 ms around the DEVSLP edge at %.4f s: %d columns at idle power, %d at DevSlp power, %d in between (a bucket's mean, not the samples)", edge, idle, slp, other)
	}

	// A DevSlp cycle row zooms to its cycle (the scenarios assert DEVSLP
	// over 60–65 s) and selects it; the strips show the DevSlp state.
	pg.Click(t, `tr.cycle-row`)
	view := browsertest.Eval[[2]float64](t, pg.Page, `window.idlewatt.view()`)
	if !(view[0] > 55 && view[0] < 60 && view[1] > 65 && view[1] < 70) {
		t.Errorf("after clicking the first DevSlp cycle the view is %.3f–%.3f s, want about 58.75–66.25", view[0], view[1])
	}
	if sel := browsertest.Eval[[2]float64](t, pg.Page, `window.idlewatt.selection()`); math.Abs(sel[0]-60) > 0.01 || math.Abs(sel[1]-65) > 0.01 {
		t.Errorf("the cycle row selected %v, want the pin interval 60–65 s", sel)
	}
	const purpleJS = `(() => {
	  const c = document.querySelector('canvas.strips'), d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
	  let n = 0;
	  for (let i = 0; i < d.length; i += 4) if (d[i+3] > 200 && Math.abs(d[i]-0x6a) < 20 && Math.abs(d[i+1]-0x3d) < 20 && Math.abs(d[i+2]-0x9a) < 20) n++;
	  return n;
	})()`
	if n := browsertest.Eval[int](t, pg.Page, purpleJS); n < 1000 {
		t.Errorf("strips zoomed on a DevSlp cycle: %d pixels in the DevSlp colour", n)
	}

	// A delta row shows both its runs.
	pg.Click(t, `tr.delta-row`)
	view = browsertest.Eval[[2]float64](t, pg.Page, `window.idlewatt.view()`)
	if view[0] > 0.01 || view[1] < 74.9 {
		t.Errorf("after clicking a delta row the view is %v, want both runs (0–75 s)", view)
	}

	// Keyboard: a focused phase row acts on Enter; arrows pan; Home shows
	// the whole runs.
	ab := browsertest.Eval[[2]float64](t, pg.Page, `(() => { const r = document.querySelectorAll('tr.phase-row')[1]; r.focus(); return [+r.dataset.a, +r.dataset.b]; })()`)
	if err := chromedp.Do(pg.Ctx, chromedp.KeyEvent(kb.Enter)); err != nil {
		t.Fatal(err)
	}
	view = browsertest.Eval[[2]float64](t, pg.Page, `window.idlewatt.view()`)
	if math.Abs(view[0]-ab[0]) > 1e-6 || math.Abs(view[1]-ab[1]) > 1e-6 {
		t.Errorf("Enter on a phase row: view %v, want %v", view, ab)
	}
	browsertest.Eval[bool](t, pg.Page, `document.activeElement.blur(), true`)
	if err := chromedp.Do(pg.Ctx, chromedp.KeyEvent(kb.ArrowRight)); err != nil {
		t.Fatal(err)
	}
	v2 := browsertest.Eval[[2]float64](t, pg.Page, `window.idlewatt.view()`)
	if sp := view[1] - view[0]; math.Abs(v2[0]-(view[0]+0.25*sp)) > 1e-6*sp {
		t.Errorf("→ from %v: view %v, want a quarter of the span to the right", view, v2)
	}
	if err := chromedp.Do(pg.Ctx, chromedp.KeyEvent(kb.Home)); err != nil {
		t.Fatal(err)
	}
	if v, rg := browsertest.Eval[[2]float64](t, pg.Page, `window.idlewatt.view()`), browsertest.Eval[[2]float64](t, pg.Page, `window.idlewatt.range()`); v != rg {
		t.Errorf("Home: view %v, want the whole runs %v", v, rg)
	}

	// The delta table is analysis' formatting of CompareDeltas.
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
	got := browsertest.Eval[[][]string](t, pg.Page, `[...document.querySelectorAll('#deltas tbody tr')].map(r => [...r.cells].map(c => c.textContent))`)
	if fmt.Sprint(got) != fmt.Sprint(cells) || len(got) != 2 {
		t.Errorf("delta table %q, want %q", got, cells)
	}

	// Stacked: one chart per drive and run, drawn; log and mW redraw.
	pg.Click(t, `#c-stack`)
	if n := browsertest.Eval[int](t, pg.Page, `document.querySelectorAll('.u-wrap canvas').length`); n != len(ser) {
		t.Errorf("stacked: %d charts, want %d", n, len(ser))
	}
	if n := browsertest.Eval[int](t, pg.Page, `document.querySelectorAll('canvas.strips').length`); n != len(ser) {
		t.Errorf("stacked: %d strip canvases, want one per chart (%d)", n, len(ser))
	}
	// A selection shows on every stacked chart.
	shown := browsertest.Eval[[]float64](t, pg.Page, `window.idlewatt.select(20, 30), [...document.querySelectorAll('.u-select')].map(e => e.getBoundingClientRect().width)`)
	if len(shown) != len(ser) {
		t.Errorf("stacked: %d selection boxes, want %d", len(shown), len(ser))
	}
	for i, w := range shown {
		if w < 10 {
			t.Errorf("stacked chart %d: the selection box is %.0f px wide", i+1, w)
		}
	}
	pg.Click(t, `#c-log`)
	pg.Click(t, `#c-mw`)
	if px := browsertest.Eval[[3]float64](t, pg.Page, drawnPixelsJS); px[1] < 100 {
		t.Errorf("stacked log/mW chart: %.0f pixels in the first line's colour", px[1])
	}

	// A baseline run without a single sample: the page still loads
	// cleanly, draws the other run and has no delta over the selection.
	_, erep, ep, ecap := emptyReport(t)
	epath := writeCompare(t, []CompareRun{{Label: "empty", Report: erep, Pyramid: ep, Capture: ecap}, runs[0]})
	if err := pg.Navigate(fileURL(epath), readySel); err != nil {
		t.Fatalf("compare.html with an empty baseline run: %v", err)
	}
	if n := browsertest.Eval[int](t, pg.Page, `window.idlewatt.select(10, 20).length`); n != len(runs[0].Report.Drives) {
		t.Errorf("with an empty baseline run: %d series, want %d", n, len(runs[0].Report.Drives))
	}
	if txt := browsertest.Eval[string](t, pg.Page, `document.querySelector('#sel-table tbody tr').textContent`); strings.Contains(txt, " J (") {
		t.Errorf("a delta against an empty baseline: %q", txt)
	}
	if e := pg.Errors(); len(e) > 0 {
		t.Errorf("console errors: %v", e)
	}
	if n := pg.Requests(); len(n) > 0 {
		t.Errorf("network requests: %v", n)
	}
}

// TestBrowserCompareTiming measures compare.html for two synthetic runs of
// IDLEWATT_COMPARE_LONG each (e.g. "10m", "1h"; two drives at 10 kS/s):
// size, time to interactive, and that it loads cleanly and draws. Not part
// of CI (minutes for 1 h):
//
//	IDLEWATT_COMPARE_LONG=1h go test ./report/html -run BrowserCompareTiming -v -timeout 30m
func TestBrowserCompareTiming(t *testing.T) {
	long := os.Getenv("IDLEWATT_COMPARE_LONG")
	if long == "" {
		t.Skip("set IDLEWATT_COMPARE_LONG=10m (or 1h) to measure")
	}
	d, err := time.ParseDuration(long)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now() // a measurement to log; nothing is asserted on it
	b := synthcap.Review(d, 10000, -10)
	b.Drives[0].IdleW, b.Drives[1].IdleW, b.Seed = 0.45, 0.18, 8
	runs := []CompareRun{compareRun(t, "a", synthcap.Review(d, 10000, 20), CompareBudget(2)), compareRun(t, "b", b, CompareBudget(2))}
	path := writeCompare(t, runs)
	t.Logf("two %v captures, two drives each, generated, analysed and compared in %v", d, time.Since(start).Round(time.Millisecond))
	st, _ := os.Stat(path)
	if keep := os.Getenv("IDLEWATT_HTML_KEEP"); keep != "" { // to look at it by hand, or time it again with TestBrowserTiming
		if b, err := os.ReadFile(path); err == nil {
			_ = os.WriteFile(keep, b, 0o644)
		}
	}
	for i := range 3 {
		pg := openInBrowser(t, path)
		px := browsertest.Eval[[3]float64](t, pg.Page, drawnPixelsJS)
		if i == 0 {
			t.Log(browsertest.Eval[string](t, pg.Page, `document.getElementById('depth').textContent`))
		}
		t.Logf("run %d: compare.html %.2f MB; interactive %.0f ms after navigation (page's own clock %.0f ms); %.0f trace pixels", i+1, float64(st.Size())/1e6, pg.LoadMs, pg.ReadyMs, px[1])
		if px[1] < 200 {
			t.Errorf("chart not drawn: %.0f trace pixels", px[1])
		}
		if errs := pg.Errors(); len(errs) > 0 {
			t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
		}
		if reqs := pg.Requests(); len(reqs) > 0 {
			t.Errorf("network requests: %v", reqs)
		}
	}
}
