package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Path finds a Chromium to drive, or "".
func Path() string {
	if p := os.Getenv("IDLEWATT_CHROMIUM"); p != "" {
		return p
	}
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}

// Page is a page open in headless Chromium.
type Page struct {
	Ctx context.Context
	// Loaded is the time from the navigation to the ready selector's
	// being visible, for tests to log: never assert it, it depends on the
	// machine's load.
	Loaded   time.Duration
	mu       sync.Mutex
	pages    map[string]bool // URLs navigated to: not the page's own requests
	errs     []string
	requests []string
}

// Open starts Chromium with a width×height window and loads url, waiting
// for ready (a CSS selector) to be visible.
func Open(t testing.TB, url, ready string, width, height int) *Page {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no browser")
	}
	bin := Path()
	if bin == "" {
		t.Skip("no Chromium found (set IDLEWATT_CHROMIUM, or apt-get install -y chromium): the browser test cannot run here")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin), chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(width, height),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	// A hang guard for the whole session (Chromium's start, the load and
	// every check), not a timing check: a few seconds on an idle machine,
	// so only a page or browser that never answers reaches it.
	ctx, cancelT := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	p := &Page{Ctx: ctx, pages: map[string]bool{}}
	err := chromedp.Listen(ctx, func(ev any) {
		p.mu.Lock()
		defer p.mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning || e.Type == runtime.ConsoleAPICalledTypeAssert {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				p.errs = append(p.errs, fmt.Sprintf("console.%s: %s", e.Type, strings.Join(parts, " ")))
			}
		case *runtime.EventExceptionThrown:
			d := e.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			p.errs = append(p.errs, fmt.Sprintf("exception at %d:%d: %s", d.LineNumber, d.ColumnNumber, msg))
		case *cdplog.EventEntryAdded:
			if e.Entry.Level == cdplog.EntryLevelError || e.Entry.Level == cdplog.EntryLevelWarning {
				p.errs = append(p.errs, fmt.Sprintf("log %s (%s): %s %s", e.Entry.Level, e.Entry.Source, e.Entry.Text, e.Entry.URL))
			}
		case *network.EventRequestWillBeSent:
			if !p.pages[e.Request.URL] {
				p.requests = append(p.requests, e.Request.URL)
			}
		}
	})
	if err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	// chromedp enables the Runtime, Log and Network domains of the tab.
	if err := p.Navigate(url, ready); err != nil {
		t.Fatalf("loading %s: %v (errors so far: %v)", url, err, p.Errors())
	}
	return p
}

// Navigate loads url in the page and waits for ready (a CSS selector) to
// be visible, setting Loaded. The navigation itself is not one of the
// page's Requests.
func (p *Page) Navigate(url, ready string) error {
	p.mu.Lock()
	p.pages[url] = true
	p.mu.Unlock()
	start := time.Now()
	if err := chromedp.Do(p.Ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(ready))); err != nil {
		return err
	}
	p.Loaded = time.Since(start)
	return nil
}

// Errors are the console errors and warnings and the exceptions so far.
func (p *Page) Errors() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.errs...)
}

// Requests are the URLs of every request the page made so far, the
// navigations to it aside.
func (p *Page) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}

// Eval evaluates js (awaiting a promise it returns) into a T.
func Eval[T any](t testing.TB, p *Page, js string) T {
	t.Helper()
	v, err := chromedp.Run(p.Ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluating %s: %v", js, err)
	}
	return v
}

// Click clicks the element sel with a real mouse click, once its box has
// stayed put for five animation frames.
func (p *Page) Click(t testing.TB, sel string) {
	t.Helper()
	settle := `new Promise(function (ok) {
		var el = document.querySelector(` + "`" + sel + "`" + `), last = '', same = 0, n = 0;
		if (el) el.scrollIntoView({ behavior: 'instant', block: 'center' });
		(function frame() {
			var r = el ? JSON.stringify(el.getBoundingClientRect()) : '';
			same = r === last ? same + 1 : 0; last = r;
			if (same >= 5 || ++n > 240) ok(true); else requestAnimationFrame(frame);
		})();
	})`
	// A real mouse click lands on coordinates: scroll the element into
	// view and wait until its box has stayed put for five animation frames
	// (the readout and charts of the previous action finish laying out)
	// before chromedp reads the box, or under load the click lands where
	// the element used to be (seen: 26 px above a table row).
	Eval[bool](t, p, settle)
	if err := chromedp.Do(p.Ctx, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible)); err != nil {
		t.Fatalf("clicking %s: %v", sel, err)
	}
}
