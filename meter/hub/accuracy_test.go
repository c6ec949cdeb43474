package hub_test

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/internal/serialport"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
)

// stated: port 2's rails at ±0.1 % gain and ±10 µA offset (the campaign's
// drift family), port 1 stating nothing.
var stated = []hub.AccEntry{
	{Port: 2, Rail: meter.Rail5V, CurrentGainPPM: 1000, CurrentOffsetNA: 10_000},
	{Port: 2, Rail: meter.Rail12V, VoltGainPPM: 500, CurrentGainPPM: 1000, CurrentOffsetNA: 10_000},
}

func checkStated(t *testing.T, where string, info meter.Info) {
	t.Helper()
	for _, ch := range info.Channels {
		switch {
		case ch.Port == 2:
			wantV := 0.0
			if ch.Rail == meter.Rail12V {
				wantV = 5e-4
			}
			if math.Abs(ch.CurrentGainErr-1e-3) > 1e-12 || math.Abs(float64(ch.CurrentOffset)-10e-6) > 1e-15 || math.Abs(ch.VoltGainErr-wantV) > 1e-12 {
				t.Errorf("%s: %s states gain %g, offset %g A, volt gain %g; want 0.001, 1e-05, %g", where, ch.Name(), ch.CurrentGainErr, float64(ch.CurrentOffset), ch.VoltGainErr, wantV)
			}
		case ch.CurrentGainErr != 0 || ch.CurrentOffset != 0 || ch.VoltGainErr != 0:
			t.Errorf("%s: %s states an accuracy the hub did not: %+v", where, ch.Name(), ch)
		}
	}
}

// The stated accuracy reaches the channels the host records, live and from
// a recorded stream; a hub that states none (NAK, unknown command) opens as
// before with none.
func TestStatedAccuracy(t *testing.T) {
	for _, tc := range []struct {
		name string
		acc  []hub.AccEntry
	}{{"stated", stated}, {"none", nil}} {
		emu, err := hubemu.New(hubemu.Options{Ports: 2, Seed: 1, Accuracy: tc.acc})
		if err != nil {
			t.Skipf("no pty: %v", err)
		}
		port, err := serialport.Open(emu.Path(), 921600)
		if err != nil {
			emu.Close()
			t.Fatal(err)
		}
		h, err := hub.New(port, hub.Options{})
		if err != nil {
			emu.Close()
			t.Fatal(err)
		}
		if tc.acc == nil {
			if h.Accuracy() != nil {
				t.Errorf("none: the hub NAKed READ_ACCURACY, yet Accuracy() = %+v", h.Accuracy())
			}
			for _, ch := range h.Info().Channels {
				if ch.CurrentGainErr != 0 || ch.CurrentOffset != 0 {
					t.Errorf("none: %s states %+v", ch.Name(), ch)
				}
			}
		} else {
			checkStated(t, "live", h.Info())
		}
		h.Close()
		emu.Close()
	}
	var buf bytes.Buffer
	if err := hubemu.WriteFast(&buf, hubemu.Options{Ports: 2, Seed: 1, Accuracy: stated}, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	rp, err := hub.NewReplay(&buf, "fast")
	if err != nil {
		t.Fatal(err)
	}
	checkStated(t, "recorded", rp.Info())
}

// A stated accuracy the hub cannot have is refused with the entry named.
func TestStatedAccuracyRefused(t *testing.T) {
	for _, bad := range [][]hub.AccEntry{
		{{Port: 3, Rail: meter.Rail5V, CurrentGainPPM: 1000}},
		{{Port: 1, Rail: meter.Rail5V}, {Port: 1, Rail: meter.Rail5V}},
		{{Port: 1, Rail: meter.Rail5V, CurrentGainPPM: 60_000}},
		{{Port: 1, Rail: meter.Rail5V, CurrentOffsetNA: 2_000_000_000}},
	} {
		var buf bytes.Buffer
		if err := hubemu.WriteFast(&buf, hubemu.Options{Ports: 2, Seed: 1, Accuracy: bad}, 10*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		_, err := hub.NewReplay(&buf, "fast")
		if !errors.Is(err, meter.ErrCalibration) || !bytes.Contains([]byte(err.Error()), []byte("ACCURACY entry")) {
			t.Errorf("%+v: err = %v, want a calibration error naming the ACCURACY entry", bad, err)
		}
	}
}

// More entries than ACCURACY's one-byte count holds is refused by the
// emulator, not sent as a frame whose count and length disagree.
func TestStatedAccuracyTooMany(t *testing.T) {
	many := make([]hub.AccEntry, 300)
	var buf bytes.Buffer
	if err := hubemu.WriteFast(&buf, hubemu.Options{Ports: 2, Seed: 1, Accuracy: many}, 10*time.Millisecond); err == nil || !strings.Contains(err.Error(), "at most 255") {
		t.Fatalf("300 entries: err = %v", err)
	}
}
