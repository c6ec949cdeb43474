package html

import (
	"fmt"
	"math"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/synthcap"
	"github.com/idlewatt/idlewatt/internal/browsertest"
	"github.com/idlewatt/idlewatt/internal/testutil"
)

// reportPage is a report opened in headless Chromium (internal/browsertest
// records every console message, exception and network request) with its
// load times. LoadMs is the test's own time from navigation to the page's
// ready flag; ReadyMs the page's performance.now() when it was ready. Both
// are logged (and measured by TestBrowserTiming), never asserted: they
// depend on the machine's load.
type reportPage struct {
	*browsertest.Page
	LoadMs, ReadyMs float64
}

const readySel = `body[data-ready="1"]`

func openInBrowser(t testing.TB, htmlPath string) *reportPage {
	t.Helper()
	p := browsertest.Open(t, fileURL(htmlPath), readySel, 1400, 1000)
	return &reportPage{Page: p, LoadMs: float64(p.Loaded.Microseconds()) / 1e3,
		ReadyMs: browsertest.Eval[float64](t, p, `window.idlewatt.readyMs`)}
}

func fileURL(path string) string { return (&url.URL{Scheme: "file", Path: path}).String() }

type selStats struct {
	Port      int                `json:"port"`
	EnergyJ   float64            `json:"energy_j"`
	MeasuredS float64            `json:"measured_s"`
	MeanW     float64            `json:"mean_w"`
	MaxW      float64            `json:"max_w"`
	IOOps     float64            `json:"io_ops"`
	Residency map[string]float64 `json:"residency"`
	Rails     []struct {
		Rail      string  `json:"rail"`
		ChargeMAh float64 `json:"charge_mah"`
	} `json:"rails"`
}

// drawnPixels counts the pixels of the first chart's canvas that are drawn
// in the mean trace's colour and in any colour at all.
const drawnPixelsJS = `(() => {
  const src = document.querySelector('.u-wrap canvas');
  const c = document.createElement('canvas');
  c.width = src.width; c.height = src.height;
  const x = c.getContext('2d', {willReadFrequently: true});
  x.drawImage(src, 0, 0);
  const d = x.getImageData(0, 0, c.width, c.height).data;
  let any = 0, trace = 0;
  for (let i = 0; i < d.length; i += 4) {
    if (d[i+3] > 0) any++;
    if (d[i+3] > 200 && Math.abs(d[i]-0x1f) < 30 && Math.abs(d[i+1]-0x5f) < 30 && Math.abs(d[i+2]-0x9f) < 30) trace++;
  }
  return [any, trace, c.width * c.height];
})()`

// The whole page in a real browser: it loads with no console error and no
// network request, draws its charts, a zoom plus selection gives
// report.json's energy for the same interval within 0.1 %, and a click on a
// DevSlp cycle row zooms to that cycle.
func TestBrowserReport(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no browser")
	}
	sc := synthcap.Review(75*time.Second, 10000, 20)
	// A hole in every channel in the idle phase and one in a single rail
	// in the workload: the page must draw gaps and still integrate.
	sc.Gaps = []synthcap.Gap{{Channel: -1, Start: 100000, Count: 5000}, {Channel: 1, Start: 300000, Count: 777}}
	_, htmlPath, rep, _ := scenarioReport(t, sc)
	st, _ := os.Stat(htmlPath)
	if keep := os.Getenv("IDLEWATT_HTML_KEEP"); keep != "" { // to look at it by hand
		if b, err := os.ReadFile(htmlPath); err == nil {
			_ = os.WriteFile(keep, b, 0o644)
		}
	}
	b := openInBrowser(t, htmlPath)
	t.Logf("report.html %.2f MB; interactive %.0f ms after navigation (page's own clock %.0f ms)", float64(st.Size())/1e6, b.LoadMs, b.ReadyMs)

	px := browsertest.Eval[[3]float64](t, b.Page, drawnPixelsJS)
	if px[1] < 200 || px[0] < 0.01*px[2] {
		t.Errorf("chart canvas: %.0f drawn pixels, %.0f in the trace colour, of %.0f: not drawn", px[0], px[1], px[2])
	}

	var last selStats // the last checkEnergy's selection for its port
	// A real mouse drag across the first chart selects that interval.
	r := browsertest.Eval[[4]float64](t, b.Page, `(() => { const r = document.querySelector('.u-over').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`)
	v0 := browsertest.Eval[[2]float64](t, b.Page, `window.idlewatt.view()`)
	y := r[1] + r[3]/2
	if err := chromedp.Do(b.Ctx, chromedp.DragAndDropXY(r[0]+0.3*r[2], y, r[0]+0.6*r[2], y, 12)); err != nil {
		t.Fatal(err)
	}
	dragged := browsertest.Eval[[]float64](t, b.Page, `window.idlewatt.selection()`)
	span := v0[1] - v0[0]
	if len(dragged) != 2 || math.Abs(dragged[0]-(v0[0]+0.3*span)) > 0.01*span || math.Abs(dragged[1]-(v0[0]+0.6*span)) > 0.01*span {
		t.Errorf("dragging over 30–60 %% of the chart selected %v, want about %.2f–%.2f s", dragged, v0[0]+0.3*span, v0[0]+0.6*span)
	}
	if txt := browsertest.Eval[string](t, b.Page, `document.getElementById('sel-body').textContent`); !strings.Contains(txt, "energy") || !strings.Contains(txt, " J (") || !strings.Contains(txt, "mAh") || !strings.Contains(txt, "Δt") {
		t.Errorf("the selection panel after a drag: %q", txt)
	}

	checkEnergy := func(what string, port int, a, z, want float64) {
		t.Helper()
		got := browsertest.Eval[[]selStats](t, b.Page, fmt.Sprintf(`window.idlewatt.zoom(%[1]g - 0.5, %[2]g + 0.5), window.idlewatt.select(%[1]g, %[2]g)`, a, z))
		for _, s := range got {
			if s.Port != port {
				continue
			}
			if !testutil.WithinRel(s.EnergyJ, want, 1e-3) {
				t.Errorf("%s, port %d, %.4f–%.4f s: selection %.6f J, report.json %.6f J (%.3f %%)", what, port, a, z, s.EnergyJ, want, 100*(s.EnergyJ/want-1))
			} else {
				t.Logf("%s, port %d: selection %.6f J, report.json %.6f J (%+.4f %%)", what, port, s.EnergyJ, want, 100*(s.EnergyJ/want-1))
			}
			last = s
			view := browsertest.Eval[[2]float64](t, b.Page, `window.idlewatt.view()`)
			if !(view[0] < a && view[1] > z && view[1]-view[0] < z-a+1.01) {
				t.Errorf("%s: zoomed to %.3f–%.3f s, the view is %v", what, a-0.5, z+0.5, view)
			}
			return
		}
		t.Errorf("%s: no selection result for port %d", what, port)
	}
	// A phase runs until the next one starts (its duration_s is measured
	// time, short of the span by its gaps); the last to the end.
	end := rep.Capture.StartS + rep.Capture.DurationS + 1e-3
	for _, d := range rep.Drives {
		for i, ph := range d.Phases {
			z := end
			if i+1 < len(d.Phases) {
				z = d.Phases[i+1].StartS
			}
			checkEnergy("phase "+ph.Name, d.Port, float64(ph.StartS), float64(z), float64(ph.EnergyJ))
		}
		checkEnergy("whole run", d.Port, float64(rep.Capture.StartS), float64(end), float64(d.EnergyJ))
		// The whole run's I/O and residency, from the page's own data.
		if uint64(last.IOOps) != d.IO.Ops {
			t.Errorf("port %d: whole-run selection has %v I/O ops, report.json %d", d.Port, last.IOOps, d.IO.Ops)
		}
		if got, want := last.Residency["active"], d.Residency.Active; math.Abs(got-want) > 0.002 {
			t.Errorf("port %d: whole-run selection active residency %.4f, report.json %.4f", d.Port, got, want)
		}
	}

	// A DevSlp cycle row zooms to its cycle (the scenario asserts DEVSLP
	// over 60–65 s).
	b.Click(t, `tr.cycle-row`)
	view := browsertest.Eval[[2]float64](t, b.Page, `window.idlewatt.view()`)
	if !(view[0] > 55 && view[0] < 60 && view[1] > 65 && view[1] < 70) {
		t.Errorf("after clicking the first DevSlp cycle the view is %.3f–%.3f s, want about 58.75–66.25", view[0], view[1])
	}
	sel := browsertest.Eval[[2]float64](t, b.Page, `window.idlewatt.selection()`)
	if math.Abs(sel[0]-60) > 0.01 || math.Abs(sel[1]-65) > 0.01 {
		t.Errorf("the cycle row selected %v, want the pin interval 60–65 s", sel)
	}
	px = browsertest.Eval[[3]float64](t, b.Page, drawnPixelsJS)
	if px[1] < 50 {
		t.Errorf("zoomed chart: %.0f pixels in the trace colour", px[1])
	}

	// The keyboard does what the mouse does: Home shows the whole run, and
	// Enter on a focused cycle row zooms to its cycle again.
	if err := chromedp.Do(b.Ctx, chromedp.KeyEvent(kb.Home)); err != nil {
		t.Fatal(err)
	}
	if v := browsertest.Eval[[2]float64](t, b.Page, `window.idlewatt.view()`); v != [2]float64(browsertest.Eval[[2]float64](t, b.Page, `window.idlewatt.range`)) {
		t.Errorf("Home: view %v, want the whole run", v)
	}
	browsertest.Eval[bool](t, b.Page, `document.querySelector('tr.cycle-row').focus(), true`)
	if err := chromedp.Do(b.Ctx, chromedp.KeyEvent(kb.Enter)); err != nil {
		t.Fatal(err)
	}
	if v := browsertest.Eval[[2]float64](t, b.Page, `window.idlewatt.view()`); v != view {
		t.Errorf("Enter on the first DevSlp cycle row: view %v, the click gave %v", v, view)
	}

	// The buttons, the wheel and a double click (core.js's controls): "+"
	// halves the span about its middle, "→" pans a quarter, the wheel
	// zooms out by 1.25 about the cursor, a double click shows the run.
	b.Click(t, `#b-in`)
	if v := browsertest.Eval[[2]float64](t, b.Page, `window.idlewatt.view()`); !testutil.WithinRel(v[1]-v[0], (view[1]-view[0])/2, 1e-9) || !testutil.WithinRel(v[0]+v[1], view[0]+view[1], 1e-9) {
		t.Errorf("+ from %v: view %v, want half the span about the same middle", view, v)
	}
	in := browsertest.Eval[[2]float64](t, b.Page, `window.idlewatt.view()`)
	b.Click(t, `#b-right`)
	if v := browsertest.Eval[[2]float64](t, b.Page, `window.idlewatt.view()`); !testutil.WithinRel(v[0], in[0]+0.25*(in[1]-in[0]), 1e-9) || !testutil.WithinRel(v[1]-v[0], in[1]-in[0], 1e-9) {
		t.Errorf("→ from %v: view %v, want a quarter of the span to the right", in, v)
	}
	in = browsertest.Eval[[2]float64](t, b.Page, `window.idlewatt.view()`)
	browsertest.Eval[bool](t, b.Page, `(() => { const o = document.querySelector('.u-over'), r = o.getBoundingClientRect();
		o.dispatchEvent(new WheelEvent('wheel', { deltaY: 100, clientX: r.left + r.width / 2, clientY: r.top + r.height / 2, bubbles: true, cancelable: true })); return true; })()`)
	if v := browsertest.Eval[[2]float64](t, b.Page, `window.idlewatt.view()`); !testutil.WithinRel(v[1]-v[0], 1.25*(in[1]-in[0]), 1e-6) {
		t.Errorf("wheel out from %v: view %v, want 1.25 × the span", in, v)
	}
	if err := chromedp.Do(b.Ctx, chromedp.DoubleClick(chromedp.CSS(`.u-over`), chromedp.NodeVisible)); err != nil {
		t.Fatal(err)
	}
	if v := browsertest.Eval[[2]float64](t, b.Page, `window.idlewatt.view()`); v != [2]float64(browsertest.Eval[[2]float64](t, b.Page, `window.idlewatt.range`)) {
		t.Errorf("double click: view %v, want the whole run", v)
	}

	// The peak row zooms to the drive's highest sample, embedded at full
	// resolution (−20…+120 ms around it).
	b.Click(t, `tr.peak-row`)
	view = browsertest.Eval[[2]float64](t, b.Page, `window.idlewatt.view()`)
	if !testutil.WithinRel(view[1]-view[0], 0.12, 1e-6) {
		t.Errorf("after clicking the first peak row the view is %v, want 120 ms around the peak", view)
	}

	// Controls: log axis, mW, per-rail and overlay rebuild the charts
	// without errors.
	for _, c := range []string{`#c-log`, `#c-mw`, `#c-rails`, `#c-overlay`} {
		b.Click(t, c)
	}
	if n := browsertest.Eval[int](t, b.Page, `document.querySelectorAll('.u-wrap canvas').length`); n != 1 {
		t.Errorf("overlay: %d charts, want 1", n)
	}
	px = browsertest.Eval[[3]float64](t, b.Page, drawnPixelsJS)
	if px[1] < 50 {
		t.Errorf("log/mW chart: %.0f pixels in the trace colour", px[1])
	}
	// A capture without samples: the page still loads cleanly.
	empty, _, _, _ := emptyReport(t)
	if err := b.Navigate(fileURL(empty), readySel); err != nil {
		t.Errorf("the page of a capture without samples: %v", err)
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
	if reqs := b.Requests(); len(reqs) > 0 {
		t.Errorf("the page made %d network requests: %v", len(reqs), reqs)
	}
}

// TestBrowserTiming measures an existing report.html (IDLEWATT_HTML_FILE)
// or one generated from a synthetic capture of IDLEWATT_HTML_LONG (e.g.
// "1h", two drives at 10 kS/s): size, time to interactive, and that the
// page loads cleanly and draws. Not part of CI (it takes minutes for 1 h):
//
//	IDLEWATT_HTML_LONG=1h go test ./report/html -run BrowserTiming -v -timeout 30m
func TestBrowserTiming(t *testing.T) {
	path := os.Getenv("IDLEWATT_HTML_FILE")
	if path == "" {
		long := os.Getenv("IDLEWATT_HTML_LONG")
		if long == "" {
			t.Skip("set IDLEWATT_HTML_FILE=report.html or IDLEWATT_HTML_LONG=1h to measure")
		}
		d, err := time.ParseDuration(long)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now() // a measurement to log; nothing is asserted on it
		var rep *analysis.Report
		_, path, rep, _ = synthReport(t, d, 10000)
		t.Logf("%v capture, %d drives, generated and reported in %v", d, len(rep.Drives), time.Since(start).Round(time.Millisecond))
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if keep := os.Getenv("IDLEWATT_HTML_KEEP"); keep != "" { // to look at it, or time it again
		if b, err := os.ReadFile(path); err == nil {
			_ = os.WriteFile(keep, b, 0o644)
		}
	}
	for i := range 3 {
		b := openInBrowser(t, path)
		px := browsertest.Eval[[3]float64](t, b.Page, drawnPixelsJS)
		if i == 0 {
			t.Log(browsertest.Eval[string](t, b.Page, `document.getElementById('depth').textContent`))
		}
		t.Logf("run %d: %s %.2f MB; interactive %.0f ms after navigation (page's own clock %.0f ms); %.0f trace pixels", i+1, path, float64(st.Size())/1e6, b.LoadMs, b.ReadyMs, px[1])
		if px[1] < 200 {
			t.Errorf("chart not drawn: %.0f trace pixels", px[1])
		}
		if errs := b.Errors(); len(errs) > 0 {
			t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
		}
		if reqs := b.Requests(); len(reqs) > 0 {
			t.Errorf("network requests: %v", reqs)
		}
	}
}
