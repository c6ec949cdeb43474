package sim

import (
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
		// Each sample is the mean over its 100 µs (of 8 points in it): the
		// model's exact mean, within an eighth of a change inside it.
		exact := float64(h.Drive().MeanIdlePower(at, at+100*time.Microsecond))
		tol := 1e-12
		if len(h.Drive().IdleTransitions(at, at+100*time.Microsecond)) > 1 {
			tol = 0.45 / 8
		}
		if w := float64(i33[k]) * 3.3; math.Abs(w-exact) > tol {
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
