package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/capture/record"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
)

// TestRecordRestartedHubStream (issue 13, deliverable 4): a hub stream
// whose index restarts at 0 half-way (two emulator sessions back to back,
// as when a second START restarted the hub). Before, record kept half the
// samples with no gap and no word; now it keeps them all, says the index
// restarted, and report says so in a note.
func TestRecordRestartedHubStream(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stream := filepath.Join(dir, "hub.bin")
	f, err := os.Create(stream)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := hubemu.WriteFast(f, hubemu.Options{Ports: 1, Rate: 1000}, time.Second); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	capPath := filepath.Join(dir, "c.iwcap")
	out, e, code := run(t, context.Background(), "record", "--meter", "hub", "--port", stream, "--out", capPath, "--json")
	if code != 0 {
		t.Fatalf("record exit %d: %s%s", code, out, e)
	}
	var res record.Summary
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res.Samples != 2*2*1000 || res.Restarts != 1 || res.Duplicates != 0 || res.Lost != 0 {
		t.Fatalf("record: %+v (want 4000 samples, 1 restart)", res)
	}
	out, e, code = run(t, context.Background(), "report", capPath, "--out", filepath.Join(dir, "r"))
	if code != 0 || !strings.Contains(out, "note: the meter's sample index restarted 1×") {
		t.Fatalf("report exit %d: %s%s", code, out, e)
	}
}

// TestRecordLineLogBadLines: a line log with a banner, a header and two
// bad readings. The capture keeps their places (two one-sample bad-line
// gaps), record counts them with the first one's line and byte, and the
// report's notes and report.json carry them.
func TestRecordLineLogBadLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	capPath := filepath.Join(dir, "ina.iwcap")
	out, e, code := run(t, context.Background(), "record", "--meter", "line", "--port", "../../fixtures/linemeter/ina226.csv",
		"--columns", "millis,loadV,current_mA", "--rate", "500", "--out", capPath, "--json")
	if code != 0 {
		t.Fatalf("record exit %d: %s%s", code, out, e)
	}
	var res record.Summary
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res.Samples != 4 || res.BadLines != 4 || res.FirstBadLine != 1 || res.LostBy["bad-line"] != 2 {
		t.Fatalf("record: %+v", res)
	}
	out, e, code = run(t, context.Background(), "report", capPath, "--out", filepath.Join(dir, "r"))
	want := "note: line meter: 4 lines were not readings (first: line 1 at byte 0); the 2 after the first reading"
	if code != 0 || !strings.Contains(out, want) {
		t.Fatalf("report exit %d: %s%s\nwant %q", code, out, e, want)
	}
	b, err := os.ReadFile(filepath.Join(dir, "r", "report.json"))
	if err != nil || !strings.Contains(string(b), "4 lines were not readings") || !strings.Contains(string(b), `"bad-line": 2`) {
		t.Fatalf("report.json: %v\n%s", err, b)
	}
}

// TestRecordRefusesImpossibleCalibration: a hub stream whose IDENTITY says
// the bus LSB is 0 (every reading 0 W) or a current LSB of 0xFFFFFFFF nA
// (34 kW for one drive) is refused before anything is recorded: exit 2,
// naming the field, and no capture.
func TestRecordRefusesImpossibleCalibration(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i, c := range []struct {
		edit func(*hub.Identity)
		want string
	}{
		{func(id *hub.Identity) { id.BusLSBuV = 0 }, "IDENTITY bus voltage LSB 0 µV outside 10–10000 µV"},
		{func(id *hub.Identity) { id.Rails[0].CurrentLSBnA = 0xFFFFFFFF }, "IDENTITY rail 0 (5v): current LSB 4294967295 nA"},
	} {
		id := hub.Identity{Version: hub.ProtocolVersion, Ports: 1, BusLSBuV: 1250,
			Rails: []hub.RailDesc{{Rail: meter.Rail5V, MaxMilliVolt: 6000, CurrentLSBnA: 50000}}, Rates: []uint32{1000}}
		c.edit(&id)
		s := hub.Samples{First: 0, Mask: 1, Count: 1, Data: []byte{0xA0, 0x0F, 0x40, 0x06}}
		stream := filepath.Join(dir, fmt.Sprintf("bad%d.bin", i))
		data := append(hub.AppendFrame(nil, hub.TypeIdentity, 0, id.Append(nil)), hub.AppendFrame(nil, hub.TypeSamples, 0, s.Append(nil))...)
		if err := os.WriteFile(stream, data, 0o644); err != nil {
			t.Fatal(err)
		}
		capPath := filepath.Join(dir, fmt.Sprintf("bad%d.iwcap", i))
		_, e, code := run(t, context.Background(), "record", "--meter", "hub", "--port", stream, "--out", capPath)
		if code != 2 || !strings.Contains(e, c.want) {
			t.Errorf("exit %d, %q; want exit 2 and %q", code, e, c.want)
		}
		if _, err := os.Stat(capPath); err == nil {
			t.Errorf("%s was created", capPath)
		}
	}
}
