package live

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/capture/notes"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// settle waits until the view has taken everything queued before it.
func (v *View) settle() {
	c := make(chan struct{})
	v.in <- item{kind: itemSync, sync: c}
	<-c
}

func header(rate float64) capture.Header {
	return capture.Header{RateHz: units.Hertz(rate), StartHost: hostclock.Time(1e9), Tool: "test",
		Channels: []meter.Channel{{Port: 1, Rail: meter.Rail5V}, {Port: 1, Rail: meter.Rail12V}, {Port: 2, Rail: meter.Rail5V}},
		Drives:   []capture.DriveInfo{{Port: 1, Name: "ssd <one>"}, {Port: 2, Name: "nvme", Interface: capture.InterfaceNVMe}}}
}

// block is n samples of channel ch from index start at v volts and i amps.
func block(ch int, start uint64, n int, v, i float64) *meter.Block {
	b := &meter.Block{Channel: ch, Start: start, V: make([]units.Volts, n), I: make([]units.Amps, n)}
	for j := range n {
		b.V[j], b.I[j] = units.Volts(v), units.Amps(i)
	}
	return b
}

func f32s(t *testing.T, s string) []float32 {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float32, len(b)/4)
	for j := range out {
		out[j] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*j:]))
	}
	return out
}

func u32s(t *testing.T, s string) []uint32 {
	b, _ := base64.StdEncoding.DecodeString(s)
	out := make([]uint32, len(b)/4)
	for j := range out {
		out[j] = binary.LittleEndian.Uint32(b[4*j:])
	}
	return out
}

func get(t *testing.T, h http.Handler, url string) dataJSON {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "http://127.0.0.1:1"+url, nil)
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Fatalf("%s: %d %s", url, rec.Code, rec.Body)
	}
	var d dataJSON
	if err := json.Unmarshal(rec.Body.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func sum32(xs []float32) (s float64) {
	for _, x := range xs {
		s += float64(x)
	}
	return s
}

// The view sums each drive's rails sample by sample: 2 s of 5 V × 0.1 A
// plus 12 V × 0.05 A at 10 kS/s is 1.1 W, 2.2 J; one sample's spike is in
// its fine bucket's max; samples one rail lacks are missing for the drive;
// events come through in order; a second request gets only what is new.
func TestViewBuckets(t *testing.T) {
	v := New(Options{})
	defer v.Close()
	v.Start(header(10000))
	for start := uint64(0); start < 20000; start += 500 {
		v.Samples(block(0, start, 500, 5, 0.1))
		b := block(1, start, 500, 12, 0.05)
		if start == 10000 {
			b.I[123] = 0.5 // 6 W for one sample on the 12 V rail
		}
		v.Samples(b)
		v.Samples(block(2, start, 500, 3.3, 0.2))
	}
	v.Gap(meter.Gap{Channel: 0, Start: 20000, Count: 1000, Reason: "crc"})
	v.Samples(block(1, 20000, 1000, 12, 0.05))
	v.State(capture.StateEvent{Host: hostclock.Time(1e9 + 0.5e9), Kind: capture.StatePhase, Value: "idle"})
	v.Event(meter.Event{Kind: meter.EventDevSlp, Port: 1, Index: 5000, Value: 1})
	v.Event(meter.Event{Kind: meter.EventDevSlp, Port: 1, Index: 15000, Value: 0})
	v.IO([]capture.IOEvent{{Port: 1, Op: capture.OpRead, Size: 4096, Issue: hostclock.Time(1e9 + 1.2e9), Complete: hostclock.Time(1e9 + 1.21e9)}})
	v.settle()
	h := v.Handler()
	d := get(t, h, "/api/data?back=60")
	if !d.Started || d.DtS != 1e-4 || d.FineW != 1e-3 || len(d.Drives) != 2 || d.Skipped != 0 {
		t.Fatalf("data: started %v dt %g fine %g drives %d skipped %d", d.Started, d.DtS, d.FineW, len(d.Drives), d.Skipped)
	}
	p1 := d.Drives[0]
	if p1.Name != "ssd <one>" || len(p1.Rails) != 2 || p1.Rails[1].Rail != "12v" || !d.Drives[1].NVMe {
		t.Errorf("drives %+v", d.Drives)
	}
	// The total reaches index 21000 (the 12 V rail's end), the 5 V rail's
	// gap leaves 1000 samples out.
	cnt := u32s(t, p1.Total.Cnt)
	var n uint64
	for _, c := range cnt {
		n += uint64(c)
	}
	if p1.Total.K0 != 0 || p1.Total.N != 2100 {
		t.Errorf("total buckets k0 %d n %d, want 0 and 2100 (to 2.1 s)", p1.Total.K0, p1.Total.N)
	}
	if n != 20000 {
		t.Errorf("drive 1 total holds %d samples, want 20000 (the 1000 its 5 V rail lacks are missing)", n)
	}
	e := sum32(f32s(t, p1.Total.E))
	want := 20000*1.1*1e-4 + (6.0-0.6)*1e-4
	if math.Abs(e-want) > 1e-6*want {
		t.Errorf("drive 1 energy %.9f J, want %.9f", e, want)
	}
	mx := f32s(t, p1.Total.Max)
	if k := 10123 / 10; math.Abs(float64(mx[k])-6.5) > 1e-6 || math.Abs(float64(mx[k+1])-1.1) > 1e-6 {
		t.Errorf("fine bucket %d max %g W (next %g), want the 6.5 W spike in it alone", k, mx[k], mx[k+1])
	}
	// Charge of the 12 V rail: 21000 samples of 50 mA plus the spike.
	q := sum32(f32s(t, p1.Rails[1].Q))
	if wantQ := (21000*0.05 + 0.45) * 1e-4; math.Abs(q-wantQ) > 1e-6*wantQ {
		t.Errorf("12 V charge %.9f C, want %.9f", q, wantQ)
	}
	kinds := ""
	for _, ev := range d.Events {
		kinds += ev.Kind + " "
	}
	if kinds != "phase pin pin io busy " {
		t.Errorf("events %q", kinds)
	}
	if ev := d.Events[0]; math.Abs(ev.T-0.5) > 1e-9 || ev.Text != "idle" {
		t.Errorf("the phase at %g s (%q), want 0.5 s from the header's start time", ev.T, ev.Text)
	}
	if ev := d.Events[1]; ev.T != 0.5 || !ev.On || ev.Src != "meter" {
		t.Errorf("the meter's pin edge %+v, want asserted at index 5000 = 0.5 s", ev)
	}
	if ev := d.Events[3]; ev.K != 1200 || ev.Ops != 1 || ev.Bytes != 4096 {
		t.Errorf("I/O %+v, want 1 op of 4096 B in fine bucket 1200", ev)
	}
	// Nothing new: the next request gets no event, and buckets only from
	// the slowest series' end on (port 2 stopped at 2 s, port 1 went on to
	// 2.1 s: those 100 are sent again, which the page's rings take as the
	// same buckets).
	again := get(t, h, "/api/data?since="+itoa(d.Next)+"&csince="+itoa(d.CNext)+"&ev="+itoa(int64(d.EvNext)))
	if d.Next != 2000 || again.Drives[1].Total.N != 0 || again.Drives[0].Total.K0 != 2000 || again.Drives[0].Total.N != 100 || len(again.Events) != 0 {
		t.Errorf("a second request from %d resent %d+%d buckets from %d, %d events", d.Next, again.Drives[0].Total.N, again.Drives[1].Total.N, again.Drives[0].Total.K0, len(again.Events))
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// A clock mark places host events: the lowest round trip wins.
func TestViewMarks(t *testing.T) {
	v := New(Options{})
	defer v.Close()
	v.Start(header(1000))
	// Meter sample 2000 (2 s) seen at host 10 s ± 1 ms, and ± 10 ms.
	v.Mark(meter.MarkEcho{HostSent: hostclock.Time(10e9 - 10e6), HostRecv: hostclock.Time(10e9 + 10e6 + 4e6), MeterIndex: 2000})
	v.Mark(meter.MarkEcho{HostSent: hostclock.Time(10e9 - 1e6), HostRecv: hostclock.Time(10e9 + 1e6), MeterIndex: 2000})
	v.State(capture.StateEvent{Host: hostclock.Time(11e9), Kind: capture.StateNote, Value: "x"})
	v.settle()
	d := get(t, v.Handler(), "/api/data")
	if len(d.Events) != 1 || math.Abs(d.Events[0].T-3) > 1e-9 {
		t.Errorf("events %+v, want the note at 3 s (1 s after the mark at sample 2000)", d.Events)
	}
}

// The recorder's calls never wait: with the view's goroutine held up (its
// lock taken, as a slow page request could), a full queue skips blocks and
// counts their samples.
func TestViewNeverBlocks(t *testing.T) {
	v := New(Options{Queue: 8})
	defer v.Close()
	v.Start(header(1000))
	v.mu.Lock()
	for k := range 100 {
		v.Samples(block(0, uint64(k*10), 10, 5, 0.1))
		v.State(capture.StateEvent{Kind: capture.StateNote, Value: "n"})
	}
	v.mu.Unlock()
	v.settle()
	if s := v.skipped.Load(); s == 0 || s%10 != 0 {
		t.Errorf("%d samples skipped, want whole blocks of 10", s)
	}
	if v.skipEv.Load() == 0 {
		t.Error("no event skipped")
	}
}

// Listen: no host is 127.0.0.1; a host beyond loopback is refused unless
// any; the page is served with its CSP; foreign Host names and
// cross-origin POSTs are refused.
func TestListenAndHandler(t *testing.T) {
	for _, a := range []string{"127.0.0.1:0", ":0", "localhost:0"} {
		l, err := Listen(a, false)
		if err != nil {
			t.Errorf("%s: %v", a, err)
			continue
		}
		if u := URL(l); !strings.HasPrefix(u, "http://127.0.0.1:") && !strings.HasPrefix(u, "http://[::1]:") {
			t.Errorf("%s: served at %s", a, u)
		}
		l.Close()
	}
	for _, a := range []string{"0.0.0.0:0", "[::]:0", "8.8.8.8:80", "nonsense"} {
		if l, err := Listen(a, false); err == nil {
			l.Close()
			t.Errorf("%s: not refused", a)
		} else if a != "nonsense" && !errors.Is(err, ErrNotLoopback) {
			t.Errorf("%s: %v, want ErrNotLoopback", a, err)
		}
	}
	dir := t.TempDir()
	capPath := filepath.Join(dir, "run.iwcap")
	os.WriteFile(capPath, []byte("x"), 0o644)
	v := New(Options{Capture: capPath, Title: "live <test>"})
	defer v.Close()
	v.Start(header(1000))
	h := v.Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1:8080/", nil))
	if rec.Code != 200 || !strings.Contains(rec.Header().Get("Content-Security-Policy"), "default-src 'none'") ||
		!strings.Contains(rec.Body.String(), "live &lt;test&gt;") || strings.Contains(rec.Body.String(), "http://") && strings.Contains(rec.Body.String(), "src=\"http") {
		t.Errorf("page: %d, CSP %q", rec.Code, rec.Header().Get("Content-Security-Policy"))
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "http://evil.example:8080/api/data", nil))
	if rec.Code != http.StatusMisdirectedRequest {
		t.Errorf("a foreign Host: %d", rec.Code)
	}
	post := func(origin, body string) int {
		req := httptest.NewRequest("POST", "http://127.0.0.1:8080/api/note", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	if c := post("http://evil.example", `{"at_s": 1, "text": "x"}`); c != http.StatusForbidden {
		t.Errorf("cross-origin note: %d", c)
	}
	if c := post("", `{"at_s": 1, "text": ""}`); c != http.StatusBadRequest {
		t.Errorf("empty note: %d", c)
	}
	if c := post("http://127.0.0.1:8080", `{"at_s": 1.5, "to_s": 2, "text": "<b>fan</b>"}`); c != 200 {
		t.Errorf("note: %d", c)
	}
	ns, err := notes.Read(capPath)
	if err != nil || len(ns) != 1 || ns[0].Text != "<b>fan</b>" || ns[0].Source != "live view" {
		t.Errorf("notes file: %+v %v", ns, err)
	}
	if d := get(t, h, "/api/data"); len(d.Events) != 1 || d.Events[0].Kind != "note" || d.Events[0].T2 != 2 {
		t.Errorf("the note's event: %+v", d.Events)
	}
}
