package live

import (
	"bytes"
	"context"
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

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/capture/notes"
	"github.com/idlewatt/idlewatt/capture/record"
	"github.com/idlewatt/idlewatt/internal/browsertest"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
)

// waitJS resolves once cond (a JS expression) is true, checking every
// animation frame, or with false after n frames: a bounded wait, the
// assertion is on the outcome.
func waitJS(cond string, n int) string {
	return fmt.Sprintf(`new Promise(function (ok) { var i = 0; (function f() { var v = false; try { v = (%s); } catch (e) {}
		if (v) ok(true); else if (++i > %d) ok(false); else setTimeout(f, 20); })(); })`, cond, n)
}

// The live page while an emulated hub records: data-live-t advances, Pause
// stops it (while the recording goes on), Resume starts it again, a drag
// selects an interval whose figures are the emulator's (5 V × 80 mA =
// 0.4 W per port), the CSV of the selection holds the same buckets, a note
// made on the page lands beside the capture (escaped on the page), the
// panel is within a 1400×1000 viewport, and no request leaves the
// server's own origin.
func TestBrowserLive(t *testing.T) {
	if browsertest.Path() == "" || testing.Short() {
		t.Skip("no Chromium (or -short): set IDLEWATT_CHROMIUM, or apt-get install -y chromium")
	}
	emu, err := hubemu.New(hubemu.Options{Ports: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	m, err := hub.Open(emu.Path(), hub.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	capPath := filepath.Join(t.TempDir(), "live.iwcap")
	v := New(Options{Capture: capPath, Title: "live test"})
	defer v.Close()
	l, err := Listen("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	stop := Serve(l, v)
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec, err := record.Start(ctx, m, record.Options{Path: capPath, Stream: meter.StreamConfig{Rate: 1000},
		Header: capture.Header{Tool: "test", Drives: []capture.DriveInfo{{Port: 1, Name: "ssd <b>one</b>"}, {Port: 2, Name: "two"}}}, Observer: v})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	// A DEVSLP pulse on port 1, reported by the hub as pin events.
	go func() {
		var pin meter.DevSlpPin = m
		time.Sleep(300 * time.Millisecond)
		_ = pin.SetDevSlp(ctx, 1, true)
		time.Sleep(400 * time.Millisecond)
		_ = pin.SetDevSlp(ctx, 1, false)
	}()
	_ = rec.State(capture.StateEvent{Host: rec.Header().StartHost, Kind: capture.StatePhase, Value: "idle"})
	// One read of 4096 B on port 1, 0.2 s into the recording.
	io0 := rec.Header().StartHost.Add(200 * time.Millisecond)
	_ = rec.IO(capture.IOEvent{Port: 1, Op: capture.OpRead, Size: 4096, Issue: io0, Complete: io0.Add(2 * time.Millisecond)})

	base := URL(l)
	p := browsertest.Open(t, base, `body[data-ready="1"]`, 1400, 1000)
	if err := chromedp.Do(p.Ctx, chromedp.EmulateViewport(1400, 1000)); err != nil {
		t.Fatal(err)
	}
	liveT := func() float64 { return browsertest.Eval[float64](t, p, `+document.body.dataset.liveT || 0`) }
	if !browsertest.Eval[bool](t, p, waitJS(`+document.body.dataset.liveT > 1`, 1000)) {
		t.Fatalf("data-live-t did not pass 1 s: %v (errors %v)", liveT(), p.Errors())
	}
	t1 := liveT()
	if !browsertest.Eval[bool](t, p, waitJS(fmt.Sprintf(`+document.body.dataset.liveT > %g`, t1+0.5), 1000)) {
		t.Fatalf("data-live-t stayed at %g s", t1)
	}

	// Pause: the page stops while the recording goes on by a second.
	p.Click(t, `#b-pause`)
	if !browsertest.Eval[bool](t, p, `window.idlewatt.paused()`) {
		t.Fatal("the Pause button did not pause")
	}
	tp := liveT()
	recAt := float64(rec.Progress().Samples) / 4 / 1000 // 4 channels at 1 kS/s
	for deadline := time.Now().Add(20 * time.Second); float64(rec.Progress().Samples)/4/1000 < recAt+1.2 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	if got := float64(rec.Progress().Samples) / 4 / 1000; got < recAt+1.2 {
		t.Fatalf("the recording did not go on while paused (%.2f → %.2f s)", recAt, got)
	}
	if got := liveT(); got != tp {
		t.Errorf("paused at %g s, data-live-t moved to %g s while the recording went on", tp, got)
	}
	if st := browsertest.Eval[string](t, p, `document.getElementById('status').textContent`); !strings.Contains(st, "PAUSED") {
		t.Errorf("status while paused: %q", st)
	}
	// Resume: it advances again, past where it stopped.
	p.Click(t, `#b-pause`)
	if !browsertest.Eval[bool](t, p, waitJS(fmt.Sprintf(`+document.body.dataset.liveT > %g`, tp+1), 1000)) {
		t.Errorf("after Resume data-live-t stayed at %g s", liveT())
	}

	// A 5 s window full of samples, then pause and drag over 30–60 % of
	// the first chart.
	if !browsertest.Eval[bool](t, p, waitJS(`+document.body.dataset.liveT > 6`, 1500)) {
		t.Fatalf("data-live-t did not reach 6 s: %g", liveT())
	}
	browsertest.Eval[float64](t, p, `window.idlewatt.setWindow(5)`)
	p.Click(t, `#b-pause`)
	browsertest.Eval[bool](t, p, `new Promise(function (ok) { requestAnimationFrame(function () { ok(true); }); })`)
	r := browsertest.Eval[[4]float64](t, p, `(() => { const r = document.querySelector('.u-over').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })()`)
	vw := browsertest.Eval[[2]float64](t, p, `window.idlewatt.view()`)
	y := r[1] + r[3]/2
	if err := chromedp.Do(p.Ctx, chromedp.DragAndDropXY(r[0]+0.3*r[2], y, r[0]+0.6*r[2], y, 12)); err != nil {
		t.Fatal(err)
	}
	sel := browsertest.Eval[[]float64](t, p, `window.idlewatt.selection()`)
	span := vw[1] - vw[0]
	if len(sel) != 2 || math.Abs(sel[0]-(vw[0]+0.3*span)) > 0.02*span || math.Abs(sel[1]-(vw[0]+0.6*span)) > 0.02*span {
		t.Fatalf("the drag over 30–60 %% of %v selected %v", vw, sel)
	}
	panel := browsertest.Eval[string](t, p, `document.getElementById('sel-body').textContent`)
	for _, want := range []string{"Δt", " J", "mWh", "mAh", "5v", "12v", "A ", "B "} {
		if !strings.Contains(panel, want) {
			t.Errorf("the selection panel lacks %q: %q", want, panel)
		}
	}
	type st struct {
		Port      int     `json:"port"`
		EnergyJ   float64 `json:"energy_j"`
		MeanW     float64 `json:"mean_w"`
		MeasuredS float64 `json:"measured_s"`
		Rails     []struct {
			Rail      string  `json:"rail"`
			ChargeMAh float64 `json:"charge_mah"`
		} `json:"rails"`
	}
	stats := browsertest.Eval[[]st](t, p, fmt.Sprintf(`window.idlewatt.stats(%g, %g)`, sel[0], sel[1]))
	if len(stats) != 2 {
		t.Fatalf("stats for %d drives", len(stats))
	}
	for _, s := range stats {
		// The emulator's constant drive: 5 V × 80 mA, 12 V × 0 (hubemu
		// default), so 0.4 W and 80 mA·Δt of 5 V charge.
		if math.Abs(s.MeanW-0.4) > 0.004 {
			t.Errorf("port %d: selection mean %.5f W, the emulator draws 0.4 W", s.Port, s.MeanW)
		}
		if math.Abs(s.EnergyJ-s.MeanW*s.MeasuredS) > 1e-6 || s.MeasuredS < 0.9*(sel[1]-sel[0]) {
			t.Errorf("port %d: %.6f J over %.4f s measured of %.4f s", s.Port, s.EnergyJ, s.MeasuredS, sel[1]-sel[0])
		}
		if len(s.Rails) != 2 || math.Abs(s.Rails[0].ChargeMAh-80*s.MeasuredS/3600) > 0.01*80*s.MeasuredS/3600 {
			t.Errorf("port %d: rails %+v, want 5 V charge %.5f mAh", s.Port, s.Rails, 80*s.MeasuredS/3600)
		}
	}
	// The CSV of the selection: one row per fine bucket, the same energy.
	csv := browsertest.Eval[string](t, p, fmt.Sprintf(`window.idlewatt.csv(%g, %g)`, sel[0], sel[1]))
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	if !strings.HasPrefix(lines[0], "t_start_s,t_end_s,p1_samples,p1_mean_w,p1_min_w,p1_max_w,p1_energy_j,p1_5v_mean_w,p1_5v_charge_mah") {
		t.Errorf("CSV header %q", lines[0])
	}
	var csvE float64
	for _, ln := range lines[1:] {
		var a, b, mean, mn, mx, e float64
		var n int
		if _, err := fmt.Sscanf(strings.ReplaceAll(ln, ",", " "), "%g %g %d %g %g %g %g", &a, &b, &n, &mean, &mn, &mx, &e); err != nil {
			t.Fatalf("CSV row %q: %v", ln, err)
		}
		csvE += e
		if math.Abs(mean-0.4) > 0.004 || mn > mean*(1+1e-6) || mx < mean*(1-1e-6) {
			t.Errorf("CSV row %q", ln)
			break
		}
	}
	if rows := len(lines) - 1; math.Abs(float64(rows)-(sel[1]-sel[0])/1e-3) > 3 || math.Abs(csvE-stats[0].EnergyJ) > 0.003*stats[0].EnergyJ+0.4*2e-3 {
		t.Errorf("CSV: %d rows, %.6f J; the selection %.4f s, %.6f J", rows, csvE, sel[1]-sel[0], stats[0].EnergyJ)
	}
	p.Click(t, `#b-csv`) // builds and offers the file in the page: no request (checked below)

	// A note at the selection, from the page.
	if err := chromedp.Do(p.Ctx, chromedp.SendKeys(chromedp.CSS(`#note-text`), `fan <i>on</i>`)); err != nil {
		t.Fatal(err)
	}
	p.Click(t, `#b-note`)
	if !browsertest.Eval[bool](t, p, waitJS(`document.getElementById('notes-list').textContent.indexOf('fan <i>on</i>') >= 0`, 500)) {
		t.Errorf("the note is not listed: %q", browsertest.Eval[string](t, p, `document.getElementById('notes-list').innerHTML`))
	}
	if h := browsertest.Eval[string](t, p, `document.getElementById('notes-list').innerHTML`); strings.Contains(h, "<i>") {
		t.Errorf("the note's text was not escaped: %q", h)
	}
	ns, err := notes.Read(capPath)
	if err != nil || len(ns) != 1 || ns[0].Text != "fan <i>on</i>" || ns[0].ToS == nil || math.Abs(ns[0].AtS-sel[0]) > 1e-6 {
		t.Errorf("notes beside the capture: %+v, %v", ns, err)
	}

	// The panel is beside the charts, inside a 1400×1000 viewport, and
	// drawn there: the screenshot shows its background inside its box.
	box := browsertest.Eval[[4]float64](t, p, `(() => { window.scrollTo(0, 0); const r = document.getElementById('selection').getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })()`)
	if box[0] < 0 || box[1] < 0 || box[2] > 1400 || box[1] > 1000 || box[2]-box[0] < 200 || box[3]-box[1] < 100 {
		t.Errorf("the selection panel's box %v is not inside the 1400×1000 viewport", box)
	}
	checkPanelPixels(t, p, box)
	drv := browsertest.Eval[[]map[string]any](t, p, `window.idlewatt.drives()`)
	if len(drv) != 2 || drv[0]["pins"].(float64) < 1 || drv[0]["busy"].(float64) != 1 || drv[1]["busy"].(float64) != 0 {
		t.Errorf("drives on the page %v, want port 1 with its DEVSLP pulse and one busy interval", drv)
	}
	type ioSt struct {
		Port    int     `json:"port"`
		IOOps   float64 `json:"io_ops"`
		IOBytes float64 `json:"io_bytes"`
	}
	if all := browsertest.Eval[[]ioSt](t, p, `window.idlewatt.stats(0, 3)`); len(all) != 2 || all[0].IOOps != 1 || all[0].IOBytes != 4096 || all[1].IOOps != 0 {
		t.Errorf("I/O over 0–3 s: %+v, want port 1's one read of 4096 B", all)
	}
	if h := browsertest.Eval[string](t, p, `document.querySelector('.drive h3').innerHTML`); strings.Contains(h, "<b>") {
		t.Errorf("the drive name was not escaped: %q", h)
	}

	if errs := p.Errors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
	own, _ := url.Parse(base)
	for _, r := range p.Requests() {
		u, err := url.Parse(r)
		if err != nil || u.Host != own.Host && u.Scheme != "blob" && u.Scheme != "data" {
			t.Errorf("a request left the view's origin %s: %s", own.Host, r)
		}
	}
	t.Logf("%d requests, all to %s; live to %.2f s", len(p.Requests()), own.Host, liveT())
}

// checkPanelPixels takes a screenshot of the viewport and checks that the
// panel's background (#f8f9fc) fills much of its box.
func checkPanelPixels(t *testing.T, p *browsertest.Page, box [4]float64) {
	t.Helper()
	var buf []byte
	buf, err := chromedp.Run(p.Ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if keep := os.Getenv("IDLEWATT_LIVE_SHOT"); keep != "" {
		_ = os.WriteFile(keep, buf, 0o644)
	}
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		t.Fatal(err)
	}
	sx := float64(img.Bounds().Dx()) / 1400
	n, bg := 0, 0
	for y := box[1] + 4; y < math.Min(box[3], 1000)-4; y += 3 {
		for x := box[0] + 4; x < box[2]-4; x += 3 {
			r, g, b, _ := img.At(int(x*sx), int(y*sx)).RGBA()
			n++
			if r>>8 == 0xf8 && g>>8 == 0xf9 && b>>8 == 0xfc {
				bg++
			}
		}
	}
	if n == 0 || float64(bg) < 0.3*float64(n) {
		t.Errorf("screenshot: %d of %d pixels in the panel's box have its background: not drawn there", bg, n)
	}
}
