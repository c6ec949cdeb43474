package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/capture/record"
	"github.com/idlewatt/idlewatt/internal/testutil"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/ppk2/ppk2emu"
	"github.com/idlewatt/idlewatt/meter/registry"
	"github.com/idlewatt/idlewatt/meter/scpi/scpiemu"
)

// capSummary is what a capture holds, read back record by record.
type capSummary struct {
	h          capture.Header
	samples    int
	pSum       float64
	pMin, pMax float64
	vLast      float64
	gaps       []meter.Gap
	marks      int
	events     []meter.Event
	next       uint64 // channel 0's next index: samples and gaps must tile
	tiled      bool
}

func (c *capSummary) meanW() float64 { return c.pSum / float64(c.samples) }

func readCapture(t *testing.T, path string) *capSummary {
	t.Helper()
	defer func() {
		if c := summaryOf[path]; c != nil {
			t.Logf("%s: %s %q at %g Hz: %d samples, %.6f–%.6f W (mean %.6f W), %d gaps, %d marks, %d events",
				filepath.Base(path), c.h.Meter.Kind, c.h.Meter.Model, c.h.RateHz, c.samples, c.pMin, c.pMax, c.meanW(), len(c.gaps), c.marks, len(c.events))
		}
	}()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c := &capSummary{h: r.Header(), pMin: math.Inf(1), pMax: math.Inf(-1), tiled: true}
	first := true
	at := func(start, n uint64) {
		if !first && start != c.next {
			c.tiled = false
		}
		first, c.next = false, start+n
	}
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		switch rec.Kind {
		case capture.KindSamples:
			b := rec.Block
			if b.Channel != 0 {
				continue
			}
			at(b.Start, uint64(b.Len()))
			for k := range b.I {
				p := float64(b.V[k]) * float64(b.I[k])
				c.pSum += p
				c.pMin, c.pMax = min(c.pMin, p), max(c.pMax, p)
				c.vLast = float64(b.V[k])
			}
			c.samples += b.Len()
		case capture.KindGap:
			if rec.Gap.Channel <= 0 {
				at(rec.Gap.Start, rec.Gap.Count)
			}
			c.gaps = append(c.gaps, rec.Gap)
		case capture.KindMark:
			c.marks++
		case capture.KindEvent:
			c.events = append(c.events, rec.Event)
		}
	}
	summaryOf[path] = c
	return c
}

// summaryOf keeps what readCapture found, for its log line.
var summaryOf = map[string]*capSummary{}

// near reports whether got is within rel of want (captures store float32).
var near = testutil.WithinRel

// runMsg runs the command line and returns its exit code and error text.
func runMsg(t *testing.T, args ...string) (int, string) {
	t.Helper()
	_, e, code := run(t, context.Background(), args...)
	return code, e
}

// wantUsage runs base followed by each of bad and expects exit 2 (bad
// usage or input) every time; the messages go to the test log.
func wantUsage(t *testing.T, base []string, bad [][]string) {
	t.Helper()
	for _, b := range bad {
		code, e := runMsg(t, append(append([]string(nil), base...), b...)...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", b, code, e)
		}
		t.Logf("%v: %s", b, strings.TrimSpace(e))
	}
}

// recordOK runs record and fails the test unless it exits 0.
func recordOK(t *testing.T, ctx context.Context, args ...string) {
	t.Helper()
	out, e, code := run(t, ctx, append([]string{"record"}, args...)...)
	if code != 0 {
		t.Fatalf("record %v: exit %d: %s%s", args, code, out, e)
	}
}

// TestRecordPPK2Live records from ppk2emu on a pty, in source mode at
// 3.3 V, averaging 100 raw samples into 1 kS/s; the emulated DUT draws
// 12.5 mA, so 41.25 mW.
func TestRecordPPK2Live(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("live pty test")
	}
	emu, err := ppk2emu.New(ppk2emu.Options{Drive: meter.ConstantDrive{V5: 3.3, I5: 0.0125}})
	if err != nil {
		t.Skip("no pty:", err)
	}
	defer emu.Close()
	capPath := filepath.Join(t.TempDir(), "ppk2.iwcap")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	recordOK(t, ctx, "--meter", "ppk2", "--port", emu.Path(), "--supply-mv", "3300", "--rate", "1000",
		"--duration", "2s", "--out", capPath)
	st := emu.State()
	if st.Mode != 2 || st.VDD != 3300 || !st.DUTOn {
		t.Errorf("emulator state after record: %+v (want source mode, 3300 mV, DUT on)", st)
	}
	c := readCapture(t, capPath)
	if c.h.Meter.Kind != "ppk2" || c.h.RateHz != 1000 || len(c.h.Channels) != 1 || c.h.Channels[0].Rail != meter.Rail3V3 {
		t.Errorf("header: %q at %g Hz, channels %+v", c.h.Meter.Kind, c.h.RateHz, c.h.Channels)
	}
	// 2 s at 1 kS/s, less start-up: how much of it the emulator streams
	// depends on how much of the 2 s a loaded machine gives it (958 at
	// load 17), so only "a stream, whole, never more than 2 s of it".
	if c.samples < 100 || c.samples > 2100 || !c.tiled {
		t.Errorf("%d samples (tiled %v), want 100–2100 with no hole", c.samples, c.tiled)
	}
	if m := c.meanW(); !near(m, 0.04125, 0.05) || !near(c.vLast, 3.3, 1e-6) {
		t.Errorf("mean %.5f W at %v V, want 41.25 mW at 3.3 V", m, c.vLast)
	}
	if c.marks < 1 {
		t.Error("no clock marks")
	}
	var logic bool
	for _, e := range c.events {
		logic = logic || e.Kind == meter.EventLogic
	}
	if !logic {
		t.Errorf("no initial logic event in %+v", c.events)
	}
}

// TestRecordPPK2Dump replays the test-vector dump: 1000 raw words of
// 18048.485 µA at the metadata's 3000 mV.
func TestRecordPPK2Dump(t *testing.T) {
	t.Parallel()
	capPath := filepath.Join(t.TempDir(), "dump.iwcap")
	out, e, code := run(t, context.Background(), "record", "--meter", "ppk2", "--port", "../../fixtures/ppk2/vector.dump",
		"--out", capPath, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, e)
	}
	var res record.Summary
	if err := json.Unmarshal([]byte(out), &res); err != nil || !res.Replayed || res.RateHz != 100_000 || res.Samples != 1000 {
		t.Fatalf("result %+v (%v)", res, err)
	}
	c := readCapture(t, capPath)
	want := 3.0 * 18048.485e-6
	if c.samples != 1000 || !near(c.pMin, want, 1e-6) || !near(c.pMax, want, 1e-6) || len(c.gaps) != 0 {
		t.Errorf("%d samples, %v–%v W, gaps %v; want 1000 at %v W", c.samples, c.pMin, c.pMax, c.gaps, want)
	}
	// Averaged ten to one.
	capPath2 := filepath.Join(t.TempDir(), "dump10.iwcap")
	recordOK(t, context.Background(), "--meter", "ppk2", "--port", "../../fixtures/ppk2/vector.dump", "--rate", "10000", "--out", capPath2)
	if c := readCapture(t, capPath2); c.samples != 100 || c.h.RateHz != 10_000 {
		t.Errorf("10 kS/s: %d samples at %g Hz", c.samples, c.h.RateHz)
	}
}

// TestRecordBattery polls the power_now fixture (4.215 W, discharging)
// every 50 ms for half a second.
func TestRecordBattery(t *testing.T) {
	t.Parallel()
	capPath := filepath.Join(t.TempDir(), "bat.iwcap")
	recordOK(t, context.Background(), "--meter", "battery", "--port", "../../fixtures/battery/power_now",
		"--interval", "50ms", "--duration", "500ms", "--out", capPath)
	c := readCapture(t, capPath)
	if c.h.Meter.Kind != "battery" || c.h.RateHz != 20 {
		t.Errorf("header: %q at %g Hz", c.h.Meter.Kind, c.h.RateHz)
	}
	if c.samples < 1 || c.samples > 12 || !c.tiled || !near(c.pMin, 4.215, 1e-6) || !near(c.pMax, 4.215, 1e-6) {
		t.Errorf("%d samples (tiled %v), %v–%v W; want about 10 at 4.215 W", c.samples, c.tiled, c.pMin, c.pMax)
	}
	if c.marks != c.samples {
		t.Errorf("%d marks for %d polls", c.marks, c.samples)
	}
	// An energy-only gauge that never steps gives power for no poll: every
	// poll is a warm-up gap, none a made-up value.
	capPath = filepath.Join(t.TempDir(), "energy.iwcap")
	recordOK(t, context.Background(), "--meter", "battery", "--port", "../../fixtures/battery/energy_only",
		"--interval", "50ms", "--duration", "300ms", "--out", capPath)
	c = readCapture(t, capPath)
	if c.samples != 0 || len(c.gaps) < 2 || c.gaps[0].Reason != "warmup" {
		t.Errorf("energy-only: %d samples, gaps %+v", c.samples, c.gaps)
	}
	// A charging battery measures nothing of the laptop's draw.
	if code, e := runMsg(t, "record", "--meter", "battery", "--port", "../../fixtures/battery/charging",
		"--duration", "1s", "--out", filepath.Join(t.TempDir(), "c.iwcap")); code != 1 || !strings.Contains(e, "Charging") {
		t.Errorf("charging battery: exit %d, %s", code, e)
	}
}

// TestRecordLineMeter reads the INA226 and CurrentRanger fixture logs.
func TestRecordLineMeter(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	capPath := filepath.Join(dir, "ina.iwcap")
	recordOK(t, context.Background(), "--meter", "line", "--port", "../../fixtures/linemeter/ina226.csv",
		"--columns", "millis,loadV,current_mA", "--rate", "500", "--out", capPath)
	c := readCapture(t, capPath)
	// 5.012 V × 120.5 mA … 5.012 V × 118.0 mA; the four bad lines skipped.
	if c.samples != 4 || c.h.RateHz != 500 || !near(c.pMax, 5.011*0.121, 1e-6) || !near(c.pMin, 5.012*0.118, 1e-6) {
		t.Errorf("%d samples at %g Hz, %v–%v W", c.samples, c.h.RateHz, c.pMin, c.pMax)
	}
	// The config file can carry the map: the alias linemeter, meter.columns.
	conf := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(conf, []byte("meter:\n  columns: currentranger\n  voltage_v: 3.3\n  rate_hz: 700\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	capPath = filepath.Join(dir, "cr.iwcap")
	recordOK(t, context.Background(), "--config", conf, "--meter", "linemeter", "--port", "../../fixtures/linemeter/currentranger.txt",
		"--out", capPath)
	c = readCapture(t, capPath)
	if c.samples != 4 || c.h.RateHz != 700 || c.h.Channels[0].Rail != meter.Rail3V3 ||
		!near(c.pMax, 3.3*0.0012, 1e-6) || !near(c.pMin, 3.3*-0.000001, 1e-6) {
		t.Errorf("currentranger: %d samples at %g Hz on %v, %v–%v W", c.samples, c.h.RateHz, c.h.Channels[0].Rail, c.pMin, c.pMax)
	}
	wantUsage(t, []string{"record", "--meter", "line", "--port", "../../fixtures/linemeter/ina226.csv",
		"--out", filepath.Join(dir, "bad.iwcap"), "--overwrite"}, [][]string{
		{"--columns", "millis,loadV,current_mA"},                                // no --rate
		{"--rate", "500"},                                                       // no --columns
		{"--columns", "millis,loadV", "--rate", "500"},                          // no current column
		{"--columns", "currentranger", "--rate", "500"},                         // no voltage
		{"--columns", "millis,loadV,current_mA", "--rate", "5", "--ports", "2"}, // one port
	})
}

// TestRecordSCPI polls scpiemu (an N6705 whose channel 1 draws 12.5 mA at
// 5 V) for a second at its 50 Hz, then at 100 Hz.
func TestRecordSCPI(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("live pty test")
	}
	emu, err := scpiemu.New(scpiemu.Options{})
	if err != nil {
		t.Skip("no pty:", err)
	}
	defer emu.Close()
	dir := t.TempDir()
	capPath := filepath.Join(dir, "scpi.iwcap")
	recordOK(t, context.Background(), "--meter", "scpi", "--port", emu.Path(), "--duration", "1s", "--out", capPath)
	c := readCapture(t, capPath)
	if c.h.Meter.Kind != "scpi" || !strings.Contains(c.h.Meter.Model, "N6705C") || c.h.RateHz != 50 {
		t.Errorf("header: %q %q at %g Hz", c.h.Meter.Kind, c.h.Meter.Model, c.h.RateHz)
	}
	// Polled at 50 Hz, not as fast as the emulator answers (thousands/s);
	// the bounds allow for a loaded machine.
	if c.samples < 1 || c.samples > 55 || !c.tiled || !near(c.pMin, 0.0625, 1e-6) || !near(c.pMax, 0.0625, 1e-6) {
		t.Errorf("%d samples (tiled %v), gaps %v, %v–%v W; want about 50 at 62.5 mW", c.samples, c.tiled, c.gaps, c.pMin, c.pMax)
	}
	if c.marks < 1 || c.marks > 3 {
		t.Errorf("%d marks in 1 s, want about one a second", c.marks)
	}
	capPath = filepath.Join(dir, "scpi100.iwcap")
	recordOK(t, context.Background(), "--meter", "scpi", "--port", emu.Path(), "--rate", "100", "--duration", "1s", "--out", capPath)
	if c := readCapture(t, capPath); c.h.RateHz != 100 || c.samples < 1 || c.samples > 105 || !c.tiled {
		t.Errorf("--rate 100: %d samples (tiled %v) at %g Hz, want about 100", c.samples, c.tiled, c.h.RateHz)
	}
	// A family the instrument is not: its set-up commands are rejected.
	code, e := runMsg(t, "record", "--meter", "scpi", "--port", emu.Path(), "--family", "k2450",
		"--duration", "1s", "--out", filepath.Join(dir, "k.iwcap"))
	if code != 1 || !strings.Contains(e, "-113") {
		t.Errorf("--family k2450 on an N6705: exit %d, %s", code, e)
	}
	if code, e := runMsg(t, "record", "--meter", "scpi", "--port", emu.Path(), "--family", "hp3458",
		"--out", filepath.Join(dir, "h.iwcap")); code != 2 || !strings.Contains(e, "n6705") {
		t.Errorf("--family hp3458: exit %d, %s", code, e)
	}
	if _, _, code := run(t, context.Background(), "record", "--meter", "scpi", "--port", emu.Path(), "--rate", "1000",
		"--out", filepath.Join(dir, "r.iwcap")); code != 2 {
		t.Errorf("--rate 1000 above the N6705's 100 Hz: exit %d, want 2", code)
	}
}

func TestRecordPPK2BadOptions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	wantUsage(t, []string{"record", "--meter", "ppk2", "--port", "../../fixtures/ppk2/vector.dump",
		"--out", filepath.Join(dir, "bad.iwcap"), "--overwrite"}, [][]string{
		{"--mode", "ampere"},    // no supply voltage
		{"--mode", "voltmeter"}, // no such mode
		{"--supply-mv", "9000"}, // beyond the regulator
		{"--rate", "30000"},     // does not divide 100 kS/s
		{"--ports", "2"},        // one port
		{"--supply-mv", "lots"}, // not a number
		{"--metadata", "guess"}, // no such behaviour
	})
	// Ampere mode with the supply stated: power uses the stated voltage.
	capPath := filepath.Join(dir, "amp.iwcap")
	recordOK(t, context.Background(), "--meter", "ppk2", "--port", "../../fixtures/ppk2/vector.dump",
		"--mode", "ampere", "--supply-mv", "5000", "--out", capPath)
	if c := readCapture(t, capPath); c.samples != 1000 || !near(c.vLast, 5, 1e-6) {
		t.Errorf("ampere mode: %d samples at %v V", c.samples, c.vLast)
	}
	// The other metadata behaviour and no spike filter: the dump has default
	// calibration and one range, so the values stay those of the vector.
	capPath = filepath.Join(dir, "zr.iwcap")
	recordOK(t, context.Background(), "--meter", "ppk2", "--port", "../../fixtures/ppk2/vector.dump",
		"--metadata", "zero-r-only", "--no-spike-filter", "--out", capPath)
	if c := readCapture(t, capPath); c.samples != 1000 || !near(c.pMax, 3.0*18048.485e-6, 1e-6) {
		t.Errorf("zero-r-only: %d samples, %v W", c.samples, c.pMax)
	}
}

// TestMetersAllRecordable: every listed kind opens with record.
func TestMetersAllRecordable(t *testing.T) {
	t.Parallel()
	out, e, code := run(t, context.Background(), "meters", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	var got struct {
		Meters []registry.ListEntry `json:"meters"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, d := range got.Meters {
		kinds[d.Kind] = true
		if !d.Registered || !strings.Contains(d.Record, "--meter "+d.Kind) {
			t.Errorf("%s: registered %v, record %q", d.Kind, d.Registered, d.Record)
		}
	}
	for _, k := range registry.Kinds() {
		if !kinds[k] {
			t.Errorf("kind %s is registered but not listed", k)
		}
	}
	if text, _, _ := run(t, context.Background(), "meters"); strings.Contains(text, "not yet") {
		t.Errorf("meters says a kind is not usable:\n%s", text)
	}
}
