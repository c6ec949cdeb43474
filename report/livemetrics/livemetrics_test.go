package livemetrics

import (
	"bufio"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// scrape returns the samples of an exposition by "name{labels}".
func scrape(t *testing.T, r io.Reader) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		l := sc.Text()
		if l == "" || l[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		x, err := strconv.ParseFloat(l[i+1:], 64)
		if err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		out[l[:i]] = x
	}
	return out
}

// TestScrapeMatchesCapture records a capture while feeding the metrics the
// same records, scrapes 127.0.0.1, and checks the values against what the
// capture reads back: energy per port (Σ V·I / rate), samples per rail,
// missing samples per reason, CRC errors, the state gauge.
func TestScrapeMatchesCapture(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.iwcap")
	ch := func(port int, rail meter.Rail) meter.Channel {
		return meter.Channel{Port: port, Rail: rail, VoltLSB: 0.00125, CurrentLSB: 0.0001}
	}
	h := capture.Header{Created: "2026-01-01T00:00:00Z", Meter: meter.Info{Kind: "hub"}, RateHz: 1000, Tool: "test",
		Channels: []meter.Channel{ch(1, meter.Rail5V), ch(1, meter.Rail12V), ch(2, meter.Rail5V), ch(2, meter.Rail12V)},
		Drives:   []capture.DriveInfo{{Port: 1, Name: "alpha"}}}
	w, err := capture.Create(path, h, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := New(h)
	rng := rand.New(rand.NewPCG(1, 1))
	idx := uint64(0)
	for f := range 10 {
		if f == 4 {
			g := meter.Gap{Channel: -1, Start: idx, Count: 50, Reason: "crc"}
			_ = w.Gap(g)
			m.Gap(g)
			idx += 50
		}
		for c := range h.Channels {
			b := &meter.Block{Channel: c, Start: idx, V: make([]units.Volts, 500), I: make([]units.Amps, 500)}
			for k := range b.V {
				b.V[k] = units.Volts(float32(float64(4000+rng.IntN(3)) * 0.00125))
				b.I[k] = units.Amps(float32(float64(1000*(c+1)+rng.IntN(50)) * 0.0001))
			}
			_ = w.Samples(b)
			m.Samples(b)
		}
		idx += 500
	}
	m.Stats(meter.Stats{Frames: 40, CRCErrors: 3})
	m.Stats(meter.Stats{Frames: 90, CRCErrors: 7})
	m.State(0, "idle")
	m.State(1, "workload")
	m.DevSlpCycle(1)
	m.DevSlpVerdict(1, "pass")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	// What the capture says.
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	energy := map[int]float64{}
	n := map[string]float64{}
	missing := 0.0
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		switch rec.Kind {
		case capture.KindSamples:
			c := h.Channels[rec.Block.Channel]
			for k := range rec.Block.V {
				energy[c.Port] += float64(rec.Block.V[k]) * float64(rec.Block.I[k]) / float64(h.RateHz)
			}
			n[c.Name()] += float64(len(rec.Block.V))
		case capture.KindGap:
			missing += float64(rec.Gap.Count) * float64(len(h.Channels))
		}
	}
	r.Close()

	l, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	stop := m.Serve(l)
	defer stop()
	// The same address again is refused with a clear error.
	if _, err := Listen(addr); err == nil || !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), "in use") {
		t.Errorf("second Listen(%s): %v, want an address-in-use error", addr, err)
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got := scrape(t, resp.Body)
	rel := func(a, b float64) float64 { return math.Abs(a-b) / math.Max(math.Abs(b), 1e-300) }
	for port, name := range map[int]string{1: "alpha", 2: "port 2"} {
		key := `idlewatt_energy_joules_total{drive="` + name + `",port="` + strconv.Itoa(port) + `"}`
		if e, ok := got[key]; !ok || rel(e, energy[port]) > 1e-12 || energy[port] <= 0 {
			t.Errorf("%s = %v (present %v), capture gives %v", key, e, ok, energy[port])
		}
	}
	for _, c := range h.Channels {
		name := "alpha"
		if c.Port == 2 {
			name = "port 2"
		}
		key := `idlewatt_samples_total{drive="` + name + `",port="` + strconv.Itoa(c.Port) + `",rail="` + c.Rail.String() + `"}`
		if got[key] != n[c.Name()] || n[c.Name()] != 5000 {
			t.Errorf("%s = %v, capture has %v", key, got[key], n[c.Name()])
		}
	}
	checks := map[string]float64{
		`idlewatt_missing_samples_total{reason="crc"}`:                          missing,
		`idlewatt_gaps_total{reason="crc"}`:                                     1,
		`idlewatt_link_crc_errors_total`:                                        7,
		`idlewatt_link_frames_total`:                                            90,
		`idlewatt_state{drive="alpha",port="1",state="workload"}`:               1,
		`idlewatt_state{drive="alpha",port="1",state="idle"}`:                   0,
		`idlewatt_state{drive="port 2",port="2",state="idle"}`:                  1,
		`idlewatt_devslp_cycles_total{drive="alpha",port="1"}`:                  1,
		`idlewatt_devslp_verdicts_total{drive="alpha",port="1",verdict="pass"}`: 1,
	}
	for k, want := range checks {
		if v, ok := got[k]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", k, v, ok, want)
		}
	}
	if p := got[`idlewatt_power_watts{drive="alpha",port="1"}`]; !(p > 0.5 && p < 5) {
		t.Errorf("power gauge of port 1: %v W", p)
	}

	// Textfile mode writes the same exposition.
	tf := filepath.Join(dir, "idlewatt.prom")
	if err := m.WriteTextfile(tf); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(tf)
	defer f.Close()
	if got2 := scrape(t, f); got2[`idlewatt_link_crc_errors_total`] != 7 || len(got2) != len(got) {
		t.Errorf("textfile: %d series (crc %v), HTTP %d", len(got2), got2[`idlewatt_link_crc_errors_total`], len(got))
	}
}

// TestListenDefaultsToLoopback: an address without a host binds 127.0.0.1.
func TestListenDefaultsToLoopback(t *testing.T) {
	l, err := Listen(":0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if h, _, _ := strings.Cut(l.Addr().String(), ":"); h != "127.0.0.1" {
		t.Errorf("Listen(:0) bound %s", l.Addr())
	}
	if _, err := Listen("nonsense"); err == nil {
		t.Error("Listen(nonsense) accepted")
	}
}
