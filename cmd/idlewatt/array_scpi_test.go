package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter/scpi/scpiemu"
)

// TestRecordSCPIArray records an emulated N6705 in array mode: --rate asks
// for 10 kS/s (100 µs), the instrument rounds it to 102.4 µs, and the
// capture's rate is what it read back. Arrays and the "fetch" gaps between
// them tile the timeline; the values are the emulated 12.5 mA at 5 V.
func TestRecordSCPIArray(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("live pty test")
	}
	emu, err := scpiemu.New(scpiemu.Options{FetchDelay: 10 * time.Millisecond})
	if err != nil {
		t.Skip("no pty:", err)
	}
	defer emu.Close()
	dir := t.TempDir()
	for _, mode := range []string{"array", "array-binary"} {
		capPath := filepath.Join(dir, mode+".iwcap")
		recordOK(t, context.Background(), "--meter", "scpi", "--port", emu.Path(), "--mode", mode, "--rate", "10000",
			"--duration", "500ms", "--out", capPath)
		c := readCapture(t, capPath)
		if c.h.RateHz != 1/102.4e-6 {
			t.Errorf("%s: capture at %v Hz, want the read-back 9765.625 Hz", mode, c.h.RateHz)
		}
		fetch := 0
		for _, g := range c.gaps {
			if g.Reason != "fetch" {
				t.Errorf("%s: gap %+v", mode, g)
			}
			fetch++
		}
		// 4096 points of 102.4 µs are 419 ms: one or two arrays.
		if c.samples%4096 != 0 || c.samples == 0 || fetch != c.samples/4096-1 || !c.tiled {
			t.Errorf("%s: %d samples (tiled %v), %d fetch gaps; want whole arrays of 4096 apart by one gap each", mode, c.samples, c.tiled, fetch)
		}
		if !near(c.pMin, 0.0625, 1e-6) || !near(c.pMax, 0.0625, 1e-6) || c.marks < 1 {
			t.Errorf("%s: %v–%v W, %d marks; want 62.5 mW", mode, c.pMin, c.pMax, c.marks)
		}
	}
	wantUsage(t, []string{"record", "--meter", "scpi", "--port", emu.Path(), "--duration", "1s", "--out", filepath.Join(dir, "x.iwcap")},
		[][]string{{"--mode", "burst"}, {"--mode", "ampere"}})
	// The instrument cannot acquire 10 ns apart: a rate the meter does not
	// support (meter.ErrUnsupported) is bad input, exit 2, like any other
	// unsupported rate (docs/cli.md), naming the interval.
	if code, e := runMsg(t, "record", "--meter", "scpi", "--port", emu.Path(), "--mode", "array", "--rate", "1e8",
		"--duration", "1s", "--out", filepath.Join(dir, "f.iwcap")); code != 2 || !strings.Contains(e, "array interval") {
		t.Errorf("--rate 1e8 in array mode: exit %d, %s", code, e)
	}
}
