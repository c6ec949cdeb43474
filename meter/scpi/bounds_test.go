package scpi_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/scpi"
	"github.com/idlewatt/idlewatt/meter/scpi/scpiemu"
)

// TestRailVoltageBounds: array mode multiplies every current by one rail
// voltage; an output that reads 0 V at open (off, not connected) would make
// every sample 0 W, so it is refused (meter.ErrCalibration), as is a stated
// voltage beyond the bounds.
func TestRailVoltageBounds(t *testing.T) {
	emu := startEmu(t, scpiemu.Options{Current: 0.1, Voltage: 0})
	_, err := scpi.Open(emu.Path(), scpi.Options{Array: true, Timeout: replyTimeout})
	if !errors.Is(err, meter.ErrCalibration) || !strings.Contains(err.Error(), "read 0 V outside 0.5–100 V") {
		t.Fatalf("array mode at 0 V: %v", err)
	}
	_, err = scpi.Open(emu.Path(), scpi.Options{Voltage: 500})
	if !errors.Is(err, meter.ErrCalibration) || !strings.Contains(err.Error(), "Options.Voltage 500 V") {
		t.Fatalf("--voltage 500: %v", err)
	}
}

// TestImplausibleReadingIsAGap: a polled current of 1 kA is not a drive's:
// each such poll is a one-sample gap naming it, never a sample, and three
// in a row end the stream.
func TestImplausibleReadingIsAGap(t *testing.T) {
	emu := startEmu(t, scpiemu.Options{Current: 1000, Voltage: 5})
	in, err := scpi.Open(emu.Path(), scpi.Options{Timeout: replyTimeout})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	s := &sink{cancel: func() {}}
	err = in.Stream(context.Background(), meter.StreamConfig{}, s)
	if err == nil || !strings.Contains(err.Error(), "current reading 1000 A beyond ±100 A") || s.n != 0 {
		t.Fatalf("err %v, %d samples", err, s.n)
	}
	bad := 0
	for _, g := range s.gaps {
		if strings.Contains(g.Reason, "over-range") {
			bad++
		}
	}
	if bad != 2 {
		t.Fatalf("gaps %+v; want the first two failed polls as over-range gaps", s.gaps)
	}
}
