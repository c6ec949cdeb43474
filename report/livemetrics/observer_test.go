package livemetrics

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// TestObserver: a recording's records reach the textfile through the
// Observer — samples, a DevSlp cycle phase as the "devslp-cycle" state and
// a cycle, a verdict, the final link counters at Flush; with no listener
// and no textfile it makes no metrics; a textfile that cannot be written
// is said once and the recording goes on.
func TestObserver(t *testing.T) {
	dir := t.TempDir()
	h := capture.Header{Created: "2026-01-01T00:00:00Z", Meter: meter.Info{Kind: "hub"}, RateHz: 1000, Tool: "test",
		Channels: []meter.Channel{{Port: 1, Rail: meter.Rail5V, VoltLSB: 0.00125, CurrentLSB: 0.0001}}}
	block := &meter.Block{Channel: 0, V: []units.Volts{5, 5}, I: []units.Amps{0.08, 0.08}}

	var none Observer
	none.Start(h)
	none.Samples(block)
	none.State(capture.StateEvent{Kind: capture.StatePhase, Port: 1, Value: "idle"})
	none.Flush(meter.Stats{})
	none.Close()
	if none.Metrics() != nil {
		t.Error("no listener, no textfile: metrics made")
	}

	file := filepath.Join(dir, "m.prom")
	o := &Observer{Textfile: file}
	o.Start(h)
	o.Samples(block)
	o.State(capture.StateEvent{Kind: capture.StatePhase, Port: 1, Value: "devslp-cycle:3"})
	o.Verdict(1, "pass")
	o.Flush(meter.Stats{Frames: 7, CRCErrors: 2})
	o.Close()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{"idlewatt_samples_total", `state="devslp-cycle"`, "idlewatt_devslp_cycles_total", `verdict="pass"`, "idlewatt_link_crc_errors_total 2"} {
		if !strings.Contains(text, want) {
			t.Errorf("textfile lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "devslp-cycle:3") {
		t.Error("a series per cycle: want one per phase kind")
	}

	var log bytes.Buffer
	bad := &Observer{Textfile: filepath.Join(dir, "no-such-dir", "m.prom"), Log: &log}
	bad.Start(h)
	bad.Flush(meter.Stats{})
	bad.Flush(meter.Stats{})
	if n := strings.Count(log.String(), "metrics textfile"); n != 1 {
		t.Errorf("failed textfile said %d times, want once: %q", n, log.String())
	}
}
