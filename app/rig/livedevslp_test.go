package rig

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/states/devslp"
	"github.com/idlewatt/idlewatt/states/drivesim"
	"github.com/idlewatt/idlewatt/units"
)

// TestLiveBufferCutBackRarely: a watched rail whose cycles are not judged
// (its drive's cycles ended while another drive's go on) keeps the last
// liveKeep samples, exactly, and is cut back once per liveSlack samples,
// not once per block: cut back by every block, the copy of a full buffer
// (4.8 MB) in the meter's reader goroutine made the host fall behind a
// 10 kS/s hub until the answer to SET_DEVSLP queued behind more than 10 s
// of samples and the hub was given up (issue 25: a hub in 150 lost).
func TestLiveBufferCutBackRarely(t *testing.T) {
	l := newLiveDevSlp()
	l.Start(capture.Header{RateHz: 10000, Channels: []meter.Channel{{Port: 1, Rail: meter.Rail5V}, {Port: 1, Rail: meter.Rail12V}}})
	l.watch(1)
	const block = 1000
	v, i := make([]units.Volts, block), make([]units.Amps, block)
	b := &meter.Block{Channel: 0, V: v, I: i}
	c := l.ports[1].chans[0]
	cuts, start := 0, uint64(0)
	const total = 3 * liveKeep
	for idx := uint64(0); idx < total; idx += block {
		for k := range v {
			v[k], i[k] = 1, units.Amps(idx+uint64(k)) // power = the sample's index
		}
		b.Start = idx
		l.Samples(b)
		if c.start != start {
			cuts++
			start = c.start
		}
		end := idx + block
		if c.start+uint64(len(c.w)) != end || len(c.w) < min(int(end), liveKeep) || len(c.w) > liveKeep+liveSlack {
			t.Fatalf("after sample %d the buffer holds [%d, %d): want the last %d at least, at most %d",
				end, c.start, c.start+uint64(len(c.w)), min(int(end), liveKeep), liveKeep+liveSlack)
		}
	}
	for k, w := range c.w {
		if w != float64(c.start+uint64(k)) {
			t.Fatalf("sample %d reads %v after the cuts", c.start+uint64(k), w)
		}
	}
	if most := total/liveSlack + 1; cuts > most {
		t.Errorf("%d samples cut back the buffer %d times, want at most %d (once per %d samples)", total, cuts, most, liveSlack)
	}
}

// quickPin is a devslp.Rig whose pin and probe answer at once.
type quickPin struct{}

func (quickPin) SetDevSlp(context.Context, bool) (hostclock.Time, error) { return hostclock.Now(), nil }
func (quickPin) Probe(context.Context) (hostclock.Time, hostclock.Time, error) {
	return hostclock.Now(), hostclock.Now(), nil
}
func (quickPin) Phase(string) {}

// TestFinishedDriveUnwatched: a drive whose DevSlp cycles end is no longer
// buffered, while another's cycles go on (what it buffered is never read
// again, and a full buffer costs the meter's reader).
func TestFinishedDriveUnwatched(t *testing.T) {
	r := &Rig{live: newLiveDevSlp()}
	r.live.Start(capture.Header{RateHz: 10000, Channels: []meter.Channel{{Port: 1}, {Port: 2}}})
	r.live.watch(1)
	r.live.watch(2)
	opt := devslp.Options{Cycles: 1, Settle: time.Millisecond, Hold: 10 * time.Millisecond, Return: time.Millisecond}
	if err := r.cycleDrive(context.Background(), 1, quickPin{}, opt, true); err != nil {
		t.Fatal(err)
	}
	if r.live.ports[1] != nil || r.live.ports[2] == nil {
		t.Errorf("after port 1's cycles: port 1 watched %v, port 2 watched %v; want false, true", r.live.ports[1] != nil, r.live.ports[2] != nil)
	}
	b := &meter.Block{Channel: 0, V: []units.Volts{5}, I: []units.Amps{0.1}}
	r.live.Samples(b) // port 1's: ignored
	if p, _ := r.live.power(1); p != nil {
		t.Errorf("port 1 buffered %d samples after its cycles", len(p))
	}
}

// TestDevSlpCyclesExtendUntilEntryResolved: with devslp.max_cycles, a drive
// whose entry the planned cycles do not resolve to devslp.entry_u95 gets
// more cycles, and one they resolve gets none. Port 1 is campaign seed 1's
// drive 3 (a 0.36 mW floor 3.2 mW below Slumber under 1.92 mA σ, GC every
// 2.3 s; read 2.5 ms late on 4 cycles with an interval that missed), port
// 2 a built-in profile at 0.5 mA. The report's entry (from the capture,
// over every cycle run) must then be within goal of the truth, its interval
// within the resolution asked unless the cycles ran out, and the capture
// and the notes must say why the cycles stopped. The cycles after the
// planned ones are entry cycles (devslp.entry_hold): each holds the pin
// for what the drive's noise needs, shorter than devslp.hold, and the
// floor is the full cycles' alone.
func TestDevSlpCyclesExtendUntilEntryResolved(t *testing.T) {
	t.Parallel() // the emulator runs in real time: most of the test is waiting
	if testing.Short() {
		t.Skip("end-to-end run on the emulator")
	}
	p, err := drivesim.Lookup("jmf667h-256-a19", nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Name, p.Description = "rand-1-3", "campaign seed 1 drive 3"
	p.ActiveIdleW, p.PartialW, p.SlumberW, p.DevSlpW = 0.024970, 0.017047, 0.003547, 0.000364
	p.NoiseMA, p.GCEveryS, p.GCMs, p.GCW = 1.92, 2.27, 46, 0.0703
	p.DevSlpExitMs, p.DetoMs, p.SlumberExitMs, p.WakeSpikeW, p.WakeSpikeMs = 29.4, 36, 4.4, 0.0659, 1.1
	const maxCycles = 14
	out := t.TempDir()
	cfg := Config{
		Meter:    MeterConfig{Kind: "emulator", Rate: 10000},
		Emulator: EmulatorConfig{Seed: 11},
		Drives: []DriveConfig{
			{Name: "low-snr", Port: 1, Profile: "rand-1-3", SizeBytes: 16 << 20},
			{Name: "clean", Port: 2, Profile: "jmf667h-256-a19", SizeBytes: 16 << 20},
		},
		Profiles: map[string]drivesim.Profile{"rand-1-3": p},
		Workload: WorkloadConfig{Trace: "none"},
		DevSlp: DevSlpConfig{Cycles: 2, MaxCycles: maxCycles, Policy: "med_power_with_dipm",
			Settle: 700 * time.Millisecond, Hold: 500 * time.Millisecond, Return: 400 * time.Millisecond, EntryHold: 100 * time.Millisecond},
	}
	res, err := Run(context.Background(), cfg, out, Plan{DevSlp: true})
	if err != nil {
		t.Fatal(err)
	}
	low, clean := res.DevSlp["1"], res.DevSlp["2"]
	t.Logf("low-snr: %d cycles, entry %v ± %v ms", len(low.Cycles), low.EntryMs, low.EntryU95Ms)
	t.Logf("clean: %d cycles, entry %v ± %v ms", len(clean.Cycles), clean.EntryMs, clean.EntryU95Ms)
	for _, n := range res.Notes {
		t.Log("note:", n)
	}
	if len(clean.Cycles) != 2 {
		t.Errorf("clean drive ran %d cycles; its entry (±%v ms) was resolved by the planned 2", len(clean.Cycles), clean.EntryU95Ms)
	}
	if len(low.Cycles) <= 2 || len(low.Cycles) > maxCycles {
		t.Fatalf("low-SNR drive ran %d cycles, want more than the planned 2, at most %d", len(low.Cycles), maxCycles)
	}
	var fullFloor float64
	var held []string
	var entryHeld []float64
	for i, c := range low.Cycles {
		held = append(held, fmt.Sprintf("%.0f", float64(c.HeldMs)))
		if c.EntryOnly != (i >= 2) {
			t.Errorf("cycle %d: entry_only %v, want %v", c.Cycle, c.EntryOnly, i >= 2)
		}
		switch {
		case i < 2:
			fullFloor += float64(c.FloorW) / 2
		case !c.HeldMs.Ok() || !c.EntryMs.Ok() || float64(c.EntryMs+c.HeldMs) < 90:
			// A sleep never ends early: the host held the pin at least
			// devslp.entry_hold (100 ms), so the entry and the floor's
			// hold add up to it. The floor alone may be much shorter: a
			// drive in a GC burst (46 ms here) when the pin is asserted
			// enters after it (CI: a 73 ms hold after a late entry).
			t.Errorf("entry cycle %d: entry %v ms + held %v ms, want at least about devslp.entry_hold (100 ms)", c.Cycle, c.EntryMs, c.HeldMs)
		default:
			entryHeld = append(entryHeld, float64(c.HeldMs))
		}
	}
	t.Logf("held the floor (ms): %v", held)
	// The host asked for 100 ms, not the full 500: most entry cycles are
	// well short of a full one. One held 868 ms on a machine at load 20
	// (the host woke late): that is the host's lateness, so the median is
	// judged, not each cycle.
	if sort.Float64s(entryHeld); len(entryHeld) > 0 && entryHeld[len(entryHeld)/2] > 0.8*500 {
		t.Errorf("entry cycles held the floor a median %.0f ms, want well below devslp.hold (500 ms)", entryHeld[len(entryHeld)/2])
	}
	if math.Abs(float64(low.FloorW)-fullFloor) > 1e-12 {
		t.Errorf("floor %v W, want the full cycles' mean %v W", low.FloorW, fullFloor)
	}
	// The live estimate stops the cycles 15 % inside the resolution for
	// the report's own to be within it (liveMargin); the report's
	// bootstrap has its own Monte Carlo error, so allow it 20 % over.
	if !low.EntryMs.Ok() || (float64(low.EntryU95Ms) > 1.2 && len(low.Cycles) < maxCycles) {
		t.Errorf("low-SNR entry %v ± %v ms after %d cycles: stopped unresolved before max_cycles", low.EntryMs, low.EntryU95Ms, len(low.Cycles))
	}
	// The truth: each matched cycle's true entry latency is its fitted
	// entry less that fit's error against the model's DevSlp segment.
	errs := truthErrors(t, res, 1, filepath.Join(out, "truth-p1.jsonl"))
	var truth float64
	for _, e := range errs {
		truth += float64(low.Cycles[e.cycle-1].EntryMs) - e.entryMs
	}
	if len(errs) < len(low.Cycles)/2 {
		t.Fatalf("%d of %d cycles matched with the truth", len(errs), len(low.Cycles))
	}
	truth /= float64(len(errs))
	if e := float64(low.EntryMs) - truth; math.Abs(e) > 1+res.ClockUncertaintyMs {
		t.Errorf("low-SNR entry %v ms, truth %.3f ms: error %+.2f ms beyond 1 ms + clock %.2f ms", low.EntryMs, truth, e, res.ClockUncertaintyMs)
	}
	noted := 0
	for _, n := range res.Notes {
		if strings.HasPrefix(n, "port 1: DevSlp cycles ") {
			noted++
		}
		if strings.HasPrefix(n, "port 2: DevSlp cycles ") {
			t.Errorf("a note for the clean drive: %s", n)
		}
	}
	if noted != 1 {
		t.Errorf("%d notes say why port 1's cycles stopped, want 1", noted)
	}
}
