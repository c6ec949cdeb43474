package html

import (
	"bytes"
	"fmt"
	"image/png"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/synthcap"
	"github.com/idlewatt/idlewatt/capture/notes"
	"github.com/idlewatt/idlewatt/internal/browsertest"
	"github.com/idlewatt/idlewatt/internal/outfile"
)

// The viewer's selection panel, cursors, readout, legend, CSV export,
// annotations, NVMe strip and interval banner in a real browser at
// 1400×1000: the panel sits beside the charts inside the viewport (its box,
// and its pixels in a screenshot); hovering a chart gives the time in s and
// every series (5 V and 12 V too) in W; a click sets cursor A and a
// shift+click cursor B, which select that interval; typed cursors do the
// same; the CSV of a selection holds its buckets and their energy; the
// annotations are drawn and listed (escaped) and their rows zoom; the NVMe
// drive's strip shows the APST setting phases; and a report of part of a
// capture says so.
func TestBrowserViewerFeatures(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no browser")
	}
	sc := synthcap.Review(75*time.Second, 10000, 20)
	sc.Phases = append(sc.Phases, synthcap.Phase{At: 20 * time.Second, Port: 2, Name: "settle:nvme_latency_us=5500,aspm=powersupersave"},
		synthcap.Phase{At: 30 * time.Second, Port: 2, Name: "idle:nvme_latency_us=5500,aspm=powersupersave"})
	dir := t.TempDir()
	capPath := filepath.Join(dir, "run.iwcap")
	if err := synthcap.Write(capPath, sc); err != nil {
		t.Fatal(err)
	}
	opts := analysis.DefaultOptions()
	p := NewPyramidFor(capPath, Budget{})
	opts.Samples = p
	rep, err := analysis.Analyze(capPath, opts)
	if err != nil {
		t.Fatal(err)
	}
	to := 42.0
	rep.Annotations = []notes.Note{{AtS: 12.5, Text: `fan <script>alert(1)</script> on`}, {AtS: 40, ToS: &to, Text: "door open & closed", Source: "cli"}}
	rep.Drives[1].Interface = "nvme" // the page draws port 2 as an NVMe drive
	rep.Interval = &analysis.IntervalReport{FromS: 0, ToS: 75}
	htmlPath := filepath.Join(dir, FileName)
	if err := Write(htmlPath, rep, p, Options{Capture: capPath, Out: outfile.Options{Inputs: []string{capPath}}}); err != nil {
		t.Fatal(err)
	}
	b := openInBrowser(t, htmlPath)
	if err := chromedp.Do(b.Ctx, chromedp.EmulateViewport(1400, 1000)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(b.Ctx, chromedp.Evaluate[bool](`new Promise(ok => requestAnimationFrame(() => requestAnimationFrame(() => ok(true))))`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatal(err)
	}

	// The panel: beside the first chart, inside the viewport, drawn.
	box := browsertest.Eval[[4]float64](t, b.Page, `(() => { window.scrollTo(0, 0); const r = document.getElementById('selection').getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })()`)
	chart := browsertest.Eval[[4]float64](t, b.Page, `(() => { const r = document.querySelector('.u-over').getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })()`)
	if box[0] < 0 || box[1] < 0 || box[2] > 1400 || box[3] > 1000 || box[2]-box[0] < 200 {
		t.Errorf("the selection panel's box %v is not inside the 1400×1000 viewport", box)
	}
	if !(box[0] > chart[2]) || box[1] > chart[3] {
		t.Errorf("the panel %v is not beside the first chart %v", box, chart)
	}
	shot, err := chromedp.Run(b.Ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if keep := os.Getenv("IDLEWATT_HTML_SHOT"); keep != "" {
		_ = os.WriteFile(keep, shot, 0o644)
	}
	if bg, n := panelPixels(t, shot, box); float64(bg) < 0.5*float64(n) {
		t.Errorf("screenshot: %d of %d pixels in the panel's box have its background", bg, n)
	}

	// Legend and readout.
	leg := browsertest.Eval[string](t, b.Page, `document.querySelector('.legend-extra').textContent`)
	for _, want := range []string{"5v rail", "12v rail", "mean", "min–max", "DEVSLP", "note"} {
		if !strings.Contains(leg, want) {
			t.Errorf("legend %q lacks %q", leg, want)
		}
	}
	if n := browsertest.Eval[int](t, b.Page, `document.querySelectorAll('.drive')[0].querySelectorAll('.rail-swatch').length`); n != 2 {
		t.Errorf("%d rail swatches in the first legend, want 2", n)
	}
	mid := (chart[1] + chart[3]) / 2
	if err := chromedp.Do(b.Ctx, chromedp.MouseEvent("mouseMoved", chart[0]+0.5*(chart[2]-chart[0]), mid)); err != nil {
		t.Fatal(err)
	}
	vals := browsertest.Eval[[]string](t, b.Page, `Array.from(document.querySelectorAll('.drive')[0].querySelectorAll('.u-legend .u-series')).map(e => e.textContent)`)
	if len(vals) != 6 {
		t.Fatalf("readout %q, want t, mean, min, max, 5v, 12v", vals)
	}
	if !strings.HasSuffix(vals[0], " s") {
		t.Errorf("the readout's time %q has no unit", vals[0])
	}
	for _, v := range vals[1:] {
		if !strings.HasSuffix(v, " W") || strings.Contains(v, "–") {
			t.Errorf("readout %q: want a value in W (5v and 12v too)", v)
		}
	}

	// Cursors: click = A, shift+click = B; they make the selection.
	xA, xB := chart[0]+0.2*(chart[2]-chart[0]), chart[0]+0.5*(chart[2]-chart[0])
	v0 := browsertest.Eval[[2]float64](t, b.Page, `window.idlewatt.view()`)
	if err := chromedp.Do(b.Ctx, chromedp.MouseClickXY(xA, mid)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(b.Ctx, chromedp.MouseClickXY(xB, mid, chromedp.ButtonModifiers(chromedp.ModifierShift))); err != nil {
		t.Fatal(err)
	}
	sel := browsertest.Eval[[]float64](t, b.Page, `window.idlewatt.selection()`)
	span := v0[1] - v0[0]
	if len(sel) != 2 || math.Abs(sel[0]-(v0[0]+0.2*span)) > 0.01*span || math.Abs(sel[1]-(v0[0]+0.5*span)) > 0.01*span {
		t.Fatalf("click at 20 %% and shift+click at 50 %% of %v selected %v", v0, sel)
	}
	panel := browsertest.Eval[string](t, b.Page, `document.getElementById('sel-body').textContent`)
	// And the commands for the window at full resolution (export's CSV or
	// Parquet, report's figures), with the selection's times.
	iv := fmt.Sprintf("--from %.4fs --to %.4fs", sel[0], sel[1])
	for _, want := range []string{"A " + fmtT(sel[0]), "B " + fmtT(sel[1]), "Δt " + fmtT(sel[1]-sel[0]), "mAh", " J (", "mWh",
		"idlewatt export ", "--csv window.csv " + iv, "--parquet DIR", "idlewatt report ", iv + " --out window"} {
		if !strings.Contains(panel, want) {
			t.Errorf("panel %q lacks %q", panel, want)
		}
	}
	// Typed cursors.
	browsertest.Eval[bool](t, b.Page, `(() => { const a = document.getElementById('cur-a'), z = document.getElementById('cur-b');
		a.value = '60'; a.dispatchEvent(new Event('change')); z.value = '65'; z.dispatchEvent(new Event('change')); return true; })()`)
	if s := browsertest.Eval[[]float64](t, b.Page, `window.idlewatt.selection()`); len(s) != 2 || s[0] != 60 || s[1] != 65 {
		t.Errorf("typed cursors 60 and 65 selected %v", s)
	}

	// CSV of 60–65 s: the base buckets, their energy the selection's.
	csv := browsertest.Eval[string](t, b.Page, `window.idlewatt.csv(60, 65)`)
	st := browsertest.Eval[[]selStats](t, b.Page, `window.idlewatt.stats(60, 65)`)
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	if !strings.HasPrefix(lines[0], "t_start_s,t_end_s,p1_samples,p1_mean_w,p1_min_w,p1_max_w,p1_energy_j,p2_samples") {
		t.Errorf("CSV header %q", lines[0])
	}
	w := browsertest.Eval[float64](t, b.Page, `JSON.parse(document.getElementById('idlewatt-data').textContent).width_s`)
	var e1 float64
	for _, ln := range lines[1:] {
		f := strings.Split(ln, ",")
		var e float64
		fmt.Sscan(f[6], &e)
		e1 += e
	}
	if rows := len(lines) - 1; math.Abs(float64(rows)-5/w) > 2 {
		t.Errorf("CSV of 5 s: %d rows of %.4g s buckets", rows, w)
	}
	if math.Abs(e1-st[0].EnergyJ) > 2*w*st[0].MaxW+1e-9 {
		t.Errorf("CSV energy %.6f J, the selection %.6f J (more apart than two edge buckets)", e1, st[0].EnergyJ)
	}

	// Annotations: listed escaped, drawn, and their rows zoom.
	if n := browsertest.Eval[int](t, b.Page, `document.querySelectorAll('tr.note-row').length`); n != 2 {
		t.Errorf("%d annotation rows, want 2", n)
	}
	if h := browsertest.Eval[string](t, b.Page, `document.getElementById('tables').innerHTML`); strings.Contains(h, "<script>alert") || !strings.Contains(h, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Errorf("the annotation's text is not escaped in the table")
	}
	b.Click(t, `tr.note-row:nth-of-type(3)`) // the header row, then the two notes
	if v := browsertest.Eval[[2]float64](t, b.Page, `window.idlewatt.view()`); !(v[0] < 40 && v[1] > 42 && v[1]-v[0] < 5) {
		t.Errorf("the 40–42 s note's row zoomed to %v", v)
	}
	if s := browsertest.Eval[[]float64](t, b.Page, `window.idlewatt.selection()`); len(s) != 2 || s[0] != 40 || s[1] != 42 {
		t.Errorf("the 40–42 s note's row selected %v", s)
	}

	// NVMe: port 2's third strip is APST, drawn in the setting's colour
	// over 20–75 s.
	browsertest.Eval[[2]float64](t, b.Page, `window.idlewatt.zoom(0, 75)`)
	apst := browsertest.Eval[[2]float64](t, b.Page, `(() => {
		const cv = document.querySelectorAll('canvas.strips')[1], x = cv.getContext('2d'), d = x.getImageData(0, 0, cv.width, cv.height).data;
		let hit = 0, all = 0; const row = Math.floor(cv.height * 5 / 6);
		for (let i = 0; i < cv.width; i++) { const o = (row * cv.width + i) * 4; all++; if (d[o] === 0x1b && d[o+1] === 0x9e && d[o+2] === 0x77) hit++; }
		return [hit, all]; })()`)
	if apst[0] < 0.3*apst[1] {
		t.Errorf("port 2's APST strip: %v of %v pixels in the setting's colour, want the 20–75 s of 0–75", apst[0], apst[1])
	}
	if leg2 := browsertest.Eval[string](t, b.Page, `document.querySelectorAll('.legend-extra')[1].textContent`); !strings.Contains(leg2, "APST setting") {
		t.Errorf("port 2's legend %q has no APST entry", leg2)
	}
	if txt := browsertest.Eval[string](t, b.Page, `document.querySelector('p.interval') ? document.querySelector('p.interval').textContent : ''`); !strings.Contains(txt, "covers only 0 – 75.000 s") {
		t.Errorf("interval banner %q", txt)
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
	if reqs := b.Requests(); len(reqs) > 0 {
		t.Errorf("the page made %d network requests: %v", len(reqs), reqs)
	}
	_ = url.URL{}
}

// fmtT is the page's IW.fmtT (toPrecision(5) below 100 s, for the times
// of this test: between 1e-4 and 1e5).
func fmtT(t float64) string {
	switch {
	case math.Abs(t) < 1e-9:
		return "0"
	case math.Abs(t) >= 100:
		return fmt.Sprintf("%.2f", t)
	}
	dec := 5 - (int(math.Floor(math.Log10(math.Abs(t)))) + 1)
	return fmt.Sprintf("%.*f", dec, t)
}

// panelPixels counts, in a PNG screenshot, the pixels inside box that are
// the panel's background (#f8f9fc), of those looked at.
func panelPixels(t *testing.T, shot []byte, box [4]float64) (bg, n int) {
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	sx := float64(img.Bounds().Dx()) / 1400
	for y := box[1] + 4; y < math.Min(box[3], 1000)-4; y += 3 {
		for x := box[0] + 4; x < box[2]-4; x += 3 {
			r, g, bb, _ := img.At(int(x*sx), int(y*sx)).RGBA()
			n++
			if r>>8 == 0xf8 && g>>8 == 0xf9 && bb>>8 == 0xfc {
				bg++
			}
		}
	}
	return bg, n
}
