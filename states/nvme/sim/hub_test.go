package sim

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/units"
)

func TestHubDrive(t *testing.T) {
	h := NewHubDrive(profile(t, "980pro-1tb"), 100000, 0, 1)
	n := 2000 // 200 ms at 10 kHz
	v5, v12, v33 := make([]units.Volts, n), make([]units.Volts, n), make([]units.Volts, n)
	i5, i12, i33 := make([]units.Amps, n), make([]units.Amps, n), make([]units.Amps, n)
	h.Render(0, 10000, v5, i5, v12, i12)
	h.Render3V3(0, 10000, v33, i33)
	for k := range n {
		at := time.Duration(k) * 100 * time.Microsecond
		if i5[k] != 0 || i12[k] != 0 || v33[k] != 3.3 {
			t.Fatalf("sample %d: 5 V %v, 12 V %v, 3.3 V rail at %v", k, i5[k], i12[k], v33[k])
		}
		// Each sample is the model's exact mean over its 100 µs, a change
		// inside it included.
		exact := float64(h.Drive().MeanIdlePower(at, at+100*time.Microsecond))
		if w := float64(i33[k]) * 3.3; math.Abs(w-exact) > 1e-12 {
			t.Fatalf("sample %d: %v W, model's mean %v W", k, w, exact)
		}
	}
	// PS0 idle (L1.2) at 50 ms, PS4 after the 100 ms timer and 0.5 ms entry.
	if w := float64(i33[500]) * 3.3; math.Abs(w-0.35) > 1e-9 {
		t.Errorf("50 ms: %v W", w)
	}
	if w := float64(i33[1500]) * 3.3; math.Abs(w-0.005) > 1e-9 {
		t.Errorf("150 ms: %v W", w)
	}
	if wait := h.IO(time.Second); wait != 9600*time.Microsecond {
		t.Errorf("wait %v", wait)
	}
	if err := h.IODone(time.Second + 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	h.SetPower(2*time.Second, false)
	h.Render3V3(2*time.Second, 10000, v33[:10], i33[:10])
	if i33[0] != 0 {
		t.Errorf("powered off: %v A", i33[0])
	}
	h.SetPower(3*time.Second, true) // back in PS0, idle timers from 3 s
	h.Render3V3(3*time.Second+50*time.Millisecond, 10000, v33[:1], i33[:1])
	if w := float64(i33[0]) * 3.3; math.Abs(w-0.35) > 1e-9 {
		t.Errorf("after power-up: %v W", w)
	}
}

// An emulator renders behind the host: samples drawn after a probe read
// and its completion, for times before the probe, must show the idle
// state then, not the wake.
func TestHubDriveRendersLate(t *testing.T) {
	h := NewHubDrive(profile(t, "980pro-1tb"), 100000, 0, 1)
	wait := h.IO(time.Second) // from PS4
	if err := h.IODone(time.Second + wait + 100*time.Microsecond); err != nil {
		t.Fatal(err)
	}
	h.IO(time.Second + wait + 100*time.Microsecond) // a warm read right after
	v, i := make([]units.Volts, 30), make([]units.Amps, 30)
	h.Render3V3(time.Second-2*time.Millisecond, 10000, v, i) // 998–1000.9 ms
	for k := range 20 {
		if w := float64(i[k]) * 3.3; math.Abs(w-0.005) > 1e-9 {
			t.Fatalf("sample %d (%v before the probe): %v W, want PS4's 5 mW", k, 2*time.Millisecond-time.Duration(k)*100*time.Microsecond, w)
		}
	}
	if w := float64(i[25]) * 3.3; math.Abs(w-0.45) > 1e-9 {
		t.Errorf("0.5 ms into the wake: %v W, want PS0 + L0 0.45 W", w)
	}
}

// Two workload threads race to report: an I/O stamped before the latest
// event arrives after it. The draw the meter sees and the truth file must
// still agree (both take the event with the latest), whatever order the
// reports come in.
func TestHubDriveOutOfOrderReports(t *testing.T) {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	h := NewHubDrive(profile(t, "980pro-1tb"), 100000, 0, 1)
	var buf bytes.Buffer
	h.RecordTruth(&buf, 0, 1)
	// Thread A: 120–125 ms; thread B stamped 122 ms (its I/O runs to
	// 131 ms) but reports after A's completion; then A idles past 100 ms
	// more so PS4 is entered, and B's completion is stamped before an I/O
	// C reported first.
	h.IO(ms(120.03))
	h.IODone(ms(125.07)) //nolint:errcheck
	h.IO(ms(122.04))
	h.IO(ms(300.01))
	if err := h.IODone(ms(299.06)); err != nil {
		t.Fatal(err)
	}
	if err := h.IODone(ms(305.05)); err != nil {
		t.Fatal(err)
	}
	n := 5000 // 500 ms at 10 kHz
	v, i := make([]units.Volts, n), make([]units.Amps, n)
	h.Render3V3(0, 10000, v, i)
	if err := h.Finish(ms(500)); err != nil {
		t.Fatal(err)
	}
	_, segs, err := ReadTruth(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, win := range [][2]float64{{0, 500}, {119, 135}, {295, 310}, {420, 500}} {
		from, to := ms(win[0]), ms(win[1])
		want, ok := MeanPower(segs, from, to)
		if !ok {
			t.Fatalf("truth does not cover %v–%v", from, to)
		}
		var sum float64
		k0, k1 := int(from/(100*time.Microsecond)), int(to/(100*time.Microsecond))
		for k := k0; k < k1; k++ {
			sum += float64(i[k]) * 3.3
		}
		got := sum / float64(k1-k0)
		if math.Abs(got-float64(want)) > 1e-9 {
			t.Errorf("%v–%v: rendered %.6f W, truth %.6f W", from, to, got, float64(want))
		}
	}
}
