package analysis_test

import (
	"path/filepath"
	"testing"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// TestLoneWrongMarkRejected: a 20 s capture at 1 kS/s whose drive draws
// 0.5 A on 12 V while 200 reads run (host 10–12 s, samples 10000–12000),
// with one clock mark whose meter index is wrong (index 1 at host 6 s).
// Trusted, that mark shifts every sample by 6 s, so the reads land on idle
// power (busy power ≈ 0.5 W instead of ≈ 6.4 W) with no word. It must be
// dropped for the header's start, with a note, and busy power be the
// drive's.
func TestLoneWrongMarkRejected(t *testing.T) {
	const n, start = 20000, hostclock.Time(1e12)
	path := filepath.Join(t.TempDir(), "c.iwcap")
	h := capture.Header{Meter: meter.Info{Kind: "hub"}, RateHz: 1000, StartHost: start,
		Channels: []meter.Channel{{Port: 1, Rail: meter.Rail5V, VoltLSB: 1.25e-3, CurrentLSB: 50e-6},
			{Port: 1, Rail: meter.Rail12V, VoltLSB: 1.25e-3, CurrentLSB: 100e-6}},
		Drives: []capture.DriveInfo{{Port: 1, Name: "SSD"}}}
	w, err := capture.Create(path, h, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for lo := 0; lo < n; lo += 1000 { // 1 s blocks, as a meter delivers them
		v5, i5, v12, i12 := make([]units.Volts, 1000), make([]units.Amps, 1000), make([]units.Volts, 1000), make([]units.Amps, 1000)
		for k := range 1000 {
			v5[k], i5[k], v12[k], i12[k] = 5, 0.08, 12, 0.01
			if idx := lo + k; idx >= 10000 && idx < 12000 {
				i12[k] = 0.5
			}
		}
		for ch, b := range []*meter.Block{{Channel: 0, Start: uint64(lo), V: v5, I: i5}, {Channel: 1, Start: uint64(lo), V: v12, I: i12}} {
			if err := w.Samples(b); err != nil {
				t.Fatal(ch, err)
			}
		}
	}
	if err := w.Mark(meter.MarkEcho{ID: 1, HostSent: start + 6e9 - 1e5, HostRecv: start + 6e9 + 1e5, MeterIndex: 1}); err != nil {
		t.Fatal(err)
	}
	var ios []capture.IOEvent
	for k := range 200 {
		at := start + 10e9 + hostclock.Time(k)*10e6
		ios = append(ios, capture.IOEvent{Port: 1, Op: capture.OpRead, Size: 4096, Issue: at, Complete: at + 9e6})
	}
	if err := w.IO(ios...); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := analysis.Analyze(path, analysis.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if noteWith(r, "the only usable clock mark", "5.999 s") == "" {
		t.Errorf("no note on the rejected mark: %q", r.Notes)
	}
	if r.Alignment.Method != "header" {
		t.Errorf("alignment method %q, want header", r.Alignment.Method)
	}
	if got := r.Drives[0].Segments.BusyW; !(got > 6 && got < 7) {
		t.Errorf("busy power %.3f W, want ≈ 6.4 W (0.4 W on 5 V + 6 W on 12 V)", got)
	}
}
