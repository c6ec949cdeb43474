package accuracy

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"time"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/states/drivesim"
)

// Truth is what the drive model did during the measured window, in the
// units the report uses. A nil pointer is "the model has no such value"
// (a DevSlp floor of a drive that never entered DevSlp).
type Truth struct {
	WindowS      float64            `json:"window_s"` // measured time: the drive's samples present, first to last
	ActiveIdleW  float64            `json:"active_idle_w"`
	IdleS        float64            `json:"idle_s"` // time in the idle state without a GC burst
	AverageW     float64            `json:"average_w"`
	EnergyJ      float64            `json:"energy_j"`
	Residency    map[string]float64 `json:"residency"`    // by truth state (GC bursts under their link state), fractions of the window
	GC           map[string]float64 `json:"gc_residency"` // the GC bursts' share of Residency, by link state
	DevSlpFloorW *float64           `json:"devslp_floor_w"`
	EntryMs      *float64           `json:"entry_ms"` // mean over pin cycles the drive entered in
	ExitMs       *float64           `json:"exit_ms"`  // mean over those cycles
	Cycles       int                `json:"cycles"`   // pin assertions seen by the meter
	Entered      int                `json:"entered"`  // cycles with a DevSlp entry
	Verdict      string             `json:"verdict"`  // what verification should say: PASS, FAIL, NOT SUPPORTED
	ClockMs      float64            `json:"clock_ms"` // uncertainty of the emulator-time reference (half the best mark round trip + one sample)
	Dropped      uint64             `json:"dropped"`  // sample indices missing inside the window
}

// runClock is what the capture says about a hub run: where each drive's
// samples lie on the emulator clock and when its DEVSLP pin changed.
type runClock struct {
	rate  float64
	e0    time.Duration // emulator time of sample index 0
	uncMs float64
	ports map[int]*portSpan
}

type portSpan struct {
	first, last uint64 // sample indices of the 5 V rail
	count       uint64
	seen        bool
	runs        [][2]uint64   // present samples [from, to) of the 5 V rail, merged, in order
	pins        []meter.Event // DEVSLP events, in order
}

// add records the block of samples [a, b).
func (ps *portSpan) add(a, b uint64) {
	if n := len(ps.runs); n > 0 && ps.runs[n-1][1] == a {
		ps.runs[n-1][1] = b
		return
	}
	ps.runs = append(ps.runs, [2]uint64{a, b})
}

// readRunClock reads the capture of a hub run. emuEpoch is the host time
// (ns) at which the emulator's clock read 0 (measure.json
// emu_epoch_host_ns). The stream's sample index 0 is at an emulator time
// the hub does not report; the mark with the shortest round trip places
// it to within half that round trip.
func readRunClock(path string, emuEpoch int64) (*runClock, error) {
	r, err := capture.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	h := r.Header()
	if h.RateHz <= 0 {
		return nil, fmt.Errorf("%s: no sample rate", path)
	}
	rc := &runClock{rate: float64(h.RateHz), ports: map[int]*portSpan{}}
	chanPort := map[int]int{}
	for i, c := range h.Channels {
		if c.Rail == meter.Rail5V {
			chanPort[i] = c.Port
		}
		if rc.ports[c.Port] == nil {
			rc.ports[c.Port] = &portSpan{}
		}
	}
	bestRTT := int64(math.MaxInt64)
	var bestMid int64
	var bestIdx uint64
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		switch rec.Kind {
		case capture.KindSamples:
			port, ok := chanPort[rec.Block.Channel]
			if !ok || rec.Block.Len() == 0 {
				continue
			}
			ps := rc.ports[port]
			first, last := rec.Block.Start, rec.Block.Start+uint64(rec.Block.Len())-1
			if !ps.seen || first < ps.first {
				ps.first = first
			}
			if !ps.seen || last > ps.last {
				ps.last = last
			}
			ps.seen = true
			ps.count += uint64(rec.Block.Len())
			ps.add(first, last+1)
		case capture.KindMark:
			m := rec.Mark
			if m.Synthetic || m.HostRecv < m.HostSent {
				continue
			}
			if rtt := int64(m.HostRecv - m.HostSent); rtt < bestRTT {
				bestRTT, bestMid, bestIdx = rtt, int64(m.HostSent)+rtt/2, m.MeterIndex
			}
		case capture.KindEvent:
			if rec.Event.Kind == meter.EventDevSlp {
				if ps := rc.ports[rec.Event.Port]; ps != nil {
					ps.pins = append(ps.pins, rec.Event)
				}
			}
		}
	}
	if bestRTT == math.MaxInt64 {
		return nil, fmt.Errorf("%s: no mark echo to place the samples on the emulator clock", path)
	}
	// The hub stamps a mark with the index of the next sample due.
	rc.e0 = time.Duration(bestMid-emuEpoch) - rc.at(bestIdx)
	rc.uncMs = float64(bestRTT)/2e6 + 1e3/rc.rate
	return rc, nil
}

// at is the emulator time of sample index n relative to index 0.
func (rc *runClock) at(n uint64) time.Duration {
	return time.Duration(float64(n) / rc.rate * 1e9)
}

// emu is the emulator time of sample index n.
func (rc *runClock) emu(n uint64) time.Duration { return rc.e0 + rc.at(n) }

// driveTruth computes the truth of the drive on port from its truth file.
func driveTruth(rc *runClock, port int, truthPath string, p drivesim.Profile) (*Truth, error) {
	ps := rc.ports[port]
	if ps == nil || !ps.seen {
		return nil, fmt.Errorf("port %d: no samples in the capture", port)
	}
	f, err := os.Open(truthPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	_, segs, err := drivesim.ReadTruth(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", truthPath, err)
	}
	w0, w1 := rc.emu(ps.first), rc.emu(ps.last+1)
	if len(segs) == 0 || segs[0].Start > w0 || segs[len(segs)-1].End < w1-time.Millisecond {
		return nil, fmt.Errorf("%s: the truth does not cover the measured window %v–%v", truthPath, w0, w1)
	}
	t := &Truth{ActiveIdleW: float64(p.ActiveIdleW), Residency: map[string]float64{}, GC: map[string]float64{}, ClockMs: rc.uncMs}
	t.Dropped = ps.last - ps.first + 1 - ps.count
	// The report counts only the samples it has (missing ones are excluded
	// from time and energy alike), so the truth is integrated over the
	// same samples: the runs of present indices.
	var T, e float64
	times := map[string]float64{}
	gc := map[string]float64{}
	for _, run := range ps.runs {
		w0, w1 := rc.emu(run[0]), rc.emu(run[1])
		T += (w1 - w0).Seconds()
		k := sort.Search(len(segs), func(k int) bool { return segs[k].End > w0 })
		for ; k < len(segs) && segs[k].Start < w1; k++ {
			s := segs[k]
			a, b := max(s.Start, w0), min(s.End, w1)
			if b <= a {
				continue
			}
			d := (b - a).Seconds()
			e += float64(s.P5+s.P12) * d
			times[s.State.String()] += d
			if s.GC {
				gc[s.State.String()] += d
			}
			if s.State == drivesim.StateIdle && !s.GC {
				t.IdleS += d
			}
		}
	}
	if T <= 0 {
		return nil, fmt.Errorf("port %d: no sample time", port)
	}
	for k, d := range times {
		t.Residency[k] = d / T
	}
	for k, d := range gc {
		t.GC[k] = d / T
	}
	t.WindowS = T
	t.EnergyJ, t.AverageW = e, e/T
	if t.Residency["devslp"] > 0 {
		v := float64(p.DevSlpW)
		t.DevSlpFloorW = &v
	}
	t.Verdict = map[string]string{
		drivesim.DevSlpModeWorking: "PASS", drivesim.DevSlpModeUnsupported: "NOT SUPPORTED", drivesim.DevSlpModeBroken: "FAIL",
	}[p.DevSlpMode()]

	// Pin cycles: assert → the DevSlp segment it led to; deassert → the end
	// of the first transfer served after the wake (the probe read).
	var entries, exits []float64
	for i := 0; i < len(ps.pins); i++ {
		if ps.pins[i].Value != 1 {
			continue
		}
		t.Cycles++
		ta := rc.emu(ps.pins[i].Index)
		td := time.Duration(math.MaxInt64)
		if i+1 < len(ps.pins) && ps.pins[i+1].Value == 0 {
			td = rc.emu(ps.pins[i+1].Index)
		}
		k := sort.Search(len(segs), func(k int) bool { return segs[k].End > ta })
		var dev *drivesim.Segment
		for ; k < len(segs) && segs[k].Start < td; k++ {
			if segs[k].State == drivesim.StateDevSlp {
				dev = &segs[k]
				break
			}
		}
		if dev == nil {
			continue
		}
		t.Entered++
		entries = append(entries, max(0, float64(dev.Start-ta))/1e6)
		if td == time.Duration(math.MaxInt64) {
			continue
		}
		// The DevSlp span may run past the deassertion (MDAT). The exit ends
		// when the wake that follows it does, or with the transfer the drive
		// serves straight after it (the probe read, as verification times it).
		for k++; k < len(segs) && segs[k].State == drivesim.StateDevSlp; k++ {
		}
		if k == len(segs) || segs[k].State != drivesim.StateWake {
			continue
		}
		for ; k+1 < len(segs) && segs[k+1].State == drivesim.StateWake; k++ {
		}
		end := segs[k].End
		if k+1 < len(segs) && segs[k+1].State == drivesim.StateActive && segs[k+1].Start <= end+time.Microsecond {
			end = segs[k+1].End
		}
		exits = append(exits, float64(end-td)/1e6)
	}
	t.EntryMs, t.ExitMs = mean(entries), mean(exits)
	return t, nil
}

func mean(xs []float64) *float64 {
	if len(xs) == 0 {
		return nil
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	s /= float64(len(xs))
	return &s
}
