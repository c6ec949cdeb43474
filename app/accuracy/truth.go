package accuracy

import (
	"errors"
	"fmt"
	"github.com/idlewatt/idlewatt/states/devslp"
	"io"
	"math"
	"os"
	"sort"
	"time"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/stat"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/states/drivesim"
	"github.com/idlewatt/idlewatt/states/powerstate"
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
	// RiseMs is the mean over those cycles of pin release (meter) → the
	// end of the DevSlp state (the power leaves the floor: MDAT may hold
	// it past the release); CycleRiseMs each cycle's (nil: none).
	RiseMs      *float64   `json:"rise_ms"`
	CycleRiseMs []*float64 `json:"cycle_rise_ms"`
	// PreCycleW is the mean over the pin cycles of the drive's resting
	// power in the 300 ms before the assertion (GC bursts, wakes, transfers
	// and host requests left out: the level it rests at); CyclePreW each
	// cycle's (nil: no resting time there).
	PreCycleW *float64   `json:"pre_cycle_w"`
	CyclePreW []*float64 `json:"cycle_pre_cycle_w"`
	Cycles    int        `json:"cycles"` // pin assertions seen by the meter
	// CycleExitMs is each pin cycle's exit (nil: none), in assertion order,
	// so that the exit is compared over the cycles the report pooled.
	CycleExitMs []*float64 `json:"cycle_exit_ms"`
	Entered     int        `json:"entered"` // cycles with a DevSlp entry
	// LateEntries counts the cycles whose DevSlp entry came after the
	// verification's entry bound (devslp.DefaultEntryBound): a working
	// drive busy with its own background work when the pin was asserted
	// enters only when that work ends.
	LateEntries int    `json:"late_entries"`
	Verdict     string `json:"verdict"` // what verification should say: PASS, FAIL, NOT SUPPORTED
	// PeakW is the highest true power a whole sample could read: the
	// highest segment lasting ≥ 2 sample periods (one sample then lies
	// wholly inside it). Nil when a shorter segment is higher (a sample
	// averages it with its neighbours, by how much depends on where the
	// sample grid falls: the truth is not known to better than that).
	PeakW   *float64 `json:"peak_w"`
	ClockMs float64  `json:"clock_ms"` // uncertainty of the emulator-time reference: 0 when the emulator gave sample 0's time, else half the best mark round trip + one sample
	Dropped uint64   `json:"dropped"`  // sample indices missing inside the window
}

// runClock is what the capture says about a hub run: where each drive's
// samples lie on the emulator clock and when its DEVSLP pin changed.
type runClock struct {
	rate  float64
	lsb5  map[int]float64 // the capture header's current LSB of each port's 5 V channel, A
	e0    time.Duration   // emulator time of sample index 0
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
// emu_epoch_host_ns). sample0, when not 0, is the emulator time of the
// stream's sample index 0 (measure.json emu_sample0_ns, which the rig
// asks the emulator for): the samples are then on the truth's clock
// exactly (clock_ms 0). Otherwise (older runs) the mark with the shortest
// round trip places index 0 to within half that round trip plus a sample.
func readRunClock(path string, emuEpoch int64, sample0 time.Duration) (*runClock, error) {
	r, err := capture.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	h := r.Header()
	if h.RateHz <= 0 {
		return nil, fmt.Errorf("%s: no sample rate", path)
	}
	rc := &runClock{rate: float64(h.RateHz), ports: map[int]*portSpan{}, lsb5: map[int]float64{}}
	chanPort := map[int]int{}
	for i, c := range h.Channels {
		if c.Rail == meter.Rail5V {
			chanPort[i] = c.Port
			rc.lsb5[c.Port] = float64(c.CurrentLSB)
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
	if bestRTT == math.MaxInt64 && sample0 <= 0 {
		return nil, fmt.Errorf("%s: no mark echo to place the samples on the emulator clock", path)
	}
	if bestRTT < math.MaxInt64 {
		// The hub echoes a mark with the index of the sample nearest its
		// arrival, which lies within the round trip.
		rc.e0 = time.Duration(bestMid-emuEpoch) - rc.at(bestIdx)
		rc.uncMs = float64(bestRTT)/2e6 + 1e3/rc.rate
	}
	if sample0 > 0 {
		// The exact clock, and a check of the mark's: the estimate must lie
		// within its own bound of it, or marks are stamped wrong.
		if bestRTT < math.MaxInt64 && math.Abs(float64(rc.e0-sample0))/1e6 > rc.uncMs {
			return nil, fmt.Errorf("%s: the best mark echo places sample 0 at %v, the emulator at %v: %v apart, beyond the mark's ±%.3f ms",
				path, rc.e0, sample0, rc.e0-sample0, rc.uncMs)
		}
		rc.e0, rc.uncMs = sample0, 0
	}
	return rc, nil
}

// at is the emulator time of sample index n relative to index 0.
func (rc *runClock) at(n uint64) time.Duration {
	return time.Duration(float64(n) / rc.rate * 1e9)
}

// emu is the emulator time of sample index n.
func (rc *runClock) emu(n uint64) time.Duration { return rc.e0 + rc.at(n) }

// driveTruth computes the truth of the drive on port from its truth file.
// mergeGap is the report's (settings.merge_gap_ms): busy intervals closer
// than it are one, so the time between two requests closer than it is
// active in the truth too.
func driveTruth(rc *runClock, port int, truthPath string, p drivesim.Profile, mergeGap time.Duration) (*Truth, error) {
	ps := rc.ports[port]
	if ps == nil || !ps.seen {
		return nil, fmt.Errorf("port %d: no samples in the capture", port)
	}
	segs, ioSpans, err := readTruth(truthPath, rc.emu(ps.first), rc.emu(ps.last+1))
	if err != nil {
		return nil, err
	}
	t := &Truth{ActiveIdleW: float64(p.ActiveIdleW), Residency: map[string]float64{}, GC: map[string]float64{}, ClockMs: rc.uncMs}
	t.Dropped = ps.last - ps.first + 1 - ps.count
	if !t.integrate(rc, ps, segs, ioSpans, p, mergeGap) {
		return nil, fmt.Errorf("port %d: no sample time", port)
	}
	if t.Residency["devslp"] > 0 {
		v := float64(p.DevSlpW)
		t.DevSlpFloorW = &v
	}
	t.pinCycles(rc, ps, segs, ioSpans)
	t.Verdict = truthVerdict(p.DevSlpMode(), t.LateEntries)
	return t, nil
}

// truthVerdict is what verification should say of a drive in DevSlp mode
// mode whose pin cycles entered late lateEntries times: the criteria
// applied to what the drive truly did, not only to what it is. A working
// drive that in one cycle reached its floor after the entry bound (it was
// busy when the pin was asserted) fails that cycle's entry check.
func truthVerdict(mode string, lateEntries int) string {
	v := map[string]string{
		drivesim.DevSlpModeWorking: "PASS", drivesim.DevSlpModeUnsupported: "NOT SUPPORTED", drivesim.DevSlpModeBroken: "FAIL",
	}[mode]
	if v == "PASS" && lateEntries > 0 {
		return "FAIL"
	}
	return v
}

// readTruth reads a truth file's segments and the host's requests, and
// checks that they cover the measured window [w0, w1).
func readTruth(truthPath string, w0, w1 time.Duration) ([]drivesim.Segment, []drivesim.IOSpan, error) {
	f, err := os.Open(truthPath)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	_, segs, ioSpans, err := drivesim.ReadTruthIO(f)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", truthPath, err)
	}
	if len(segs) == 0 || segs[0].Start > w0 || segs[len(segs)-1].End < w1-time.Millisecond {
		return nil, nil, fmt.Errorf("%s: the truth does not cover the measured window %v–%v", truthPath, w0, w1)
	}
	return segs, ioSpans, nil
}

// integrate sums the truth over the samples the capture holds: residency
// by state (and under GC), idle time, energy, average and peak power.
// false when there is no sample time.
func (t *Truth) integrate(rc *runClock, ps *portSpan, segs []drivesim.Segment, ioSpans []drivesim.IOSpan, p drivesim.Profile, mergeGap time.Duration) bool {
	// The report counts only the samples it has (missing ones are excluded
	// from time and energy alike), so the truth is integrated over the
	// same samples: the runs of present indices.
	var T, e float64
	times := map[string]float64{}
	gc := map[string]float64{}
	// The host's outstanding requests (its own stamps, as it told the
	// model), merged across the report's merge gap: active by the report's
	// definition. Older truth files have none; their segments' io flags
	// (the model's view) stand in.
	busy := unionIO(ioSpans, mergeGap)
	period := time.Duration(1e9 / rc.rate)
	peakLong, peakAny := math.Inf(-1), math.Inf(-1)
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
			pw := float64(s.P5 + s.P12)
			if b-a >= 2*period {
				peakLong = max(peakLong, pw)
			}
			peakAny = max(peakAny, pw)
			if s.State == powerstate.Idle && !s.GC {
				t.IdleS += d
			}
			if ioSpans == nil {
				name := truthState(s, p)
				times[name] += d
				if s.GC && !s.IO {
					gc[name] += d
				}
				continue
			}
			dio := overlap(busy, a, b).Seconds()
			times["active"] += dio
			s.IO = false
			name := truthState(s, p)
			times[name] += d - dio
			if s.GC {
				gc[name] += d - dio
			}
		}
	}
	if T <= 0 {
		return false
	}
	if ioSpans == nil {
		mergeGaps(segs, ps, rc, p, mergeGap, times, gc)
	}
	for k, d := range times {
		t.Residency[k] = d / T
	}
	for k, d := range gc {
		t.GC[k] = d / T
	}
	t.WindowS = T
	if !math.IsInf(peakLong, -1) && peakAny <= peakLong*(1+1e-9) {
		t.PeakW = &peakLong
	}
	t.EnergyJ, t.AverageW = e, e/T
	return true
}

// pinCycles times the pin cycles: assert → the DevSlp segment it led to;
// deassert → the end of the first transfer served after the wake (the
// probe read).
func (t *Truth) pinCycles(rc *runClock, ps *portSpan, segs []drivesim.Segment, ioSpans []drivesim.IOSpan) {
	var entries, exits, rises, pres []float64
	raw := unionIO(ioSpans, 0)
	for i := 0; i < len(ps.pins); i++ {
		if ps.pins[i].Value != 1 {
			continue
		}
		t.Cycles++
		t.CycleExitMs = append(t.CycleExitMs, nil)
		t.CycleRiseMs = append(t.CycleRiseMs, nil)
		ta := rc.emu(ps.pins[i].Index)
		if w, ok := restingPower(segs, raw, ta-300*time.Millisecond, ta); ok {
			pres = append(pres, w)
			t.CyclePreW = append(t.CyclePreW, &w)
		} else {
			t.CyclePreW = append(t.CyclePreW, nil)
		}
		td := time.Duration(math.MaxInt64)
		if i+1 < len(ps.pins) && ps.pins[i+1].Value == 0 {
			td = rc.emu(ps.pins[i+1].Index)
		}
		k := sort.Search(len(segs), func(k int) bool { return segs[k].End > ta })
		var dev *drivesim.Segment
		for ; k < len(segs) && segs[k].Start < td; k++ {
			if segs[k].State == powerstate.DevSlp {
				dev = &segs[k]
				break
			}
		}
		if dev == nil {
			continue
		}
		t.Entered++
		entries = append(entries, max(0, float64(dev.Start-ta))/1e6)
		if dev.Start-ta > devslp.DefaultEntryBound {
			t.LateEntries++
		}
		if td == time.Duration(math.MaxInt64) {
			continue
		}
		// The DevSlp span may run past the deassertion (MDAT). The exit ends
		// when the wake that follows it does, or with the transfer the drive
		// serves straight after it (the probe read, as verification times it).
		for k++; k < len(segs) && segs[k].State == powerstate.DevSlp; k++ {
		}
		if k < len(segs) {
			r := float64(segs[k].Start-td) / 1e6
			rises = append(rises, r)
			t.CycleRiseMs[len(t.CycleRiseMs)-1] = &r
		}
		if k == len(segs) || segs[k].State != powerstate.Wake {
			continue
		}
		x := float64(exitEnd(segs, raw, k)-td) / 1e6
		exits = append(exits, x)
		t.CycleExitMs[len(t.CycleExitMs)-1] = &x
	}
	t.EntryMs, t.ExitMs, t.RiseMs, t.PreCycleW = mean(entries), mean(exits), mean(rises), mean(pres)
}

// exitEnd is when the exit that starts with the wake segment segs[k] ends:
// the end of the wake, or of the transfer the drive serves straight after
// it, or of the first read reported complete after it (raw, the host's
// requests; nil: the segments' own io flags).
func exitEnd(segs []drivesim.Segment, raw []drivesim.IOSpan, k int) time.Duration {
	for ; k+1 < len(segs) && segs[k+1].State == powerstate.Wake; k++ {
	}
	end := segs[k].End
	if k+1 < len(segs) && segs[k+1].State == powerstate.Active && segs[k+1].Start <= end+time.Microsecond {
		end = segs[k+1].End
	}
	// The exit ends when the first read after the release is reported
	// complete (the report's definition: it includes the host's read
	// path): the end of the run of outstanding-request segments that
	// holds the wake's end, or the first one after it.
	if raw != nil {
		q := sort.Search(len(raw), func(q int) bool { return raw[q].End > segs[k].End-time.Microsecond })
		if q < len(raw) && raw[q].Start < end+time.Second {
			end = max(end, raw[q].End)
		}
	} else {
		j := k
		for j < len(segs) && !segs[j].IO {
			j++
		}
		if j < len(segs) && segs[j].Start < end+time.Second {
			for j+1 < len(segs) && segs[j+1].IO && segs[j+1].Start <= segs[j].End+time.Microsecond {
				j++
			}
			end = max(end, segs[j].End)
		}
	}
	return end
}

// restingPower is the mean true power over [a, b) of the time the drive
// rests: in idle, Partial, Slumber, DevSlp or standby, without a GC burst
// and without a host request outstanding (spans, merged; nil: the
// segments' own io flags).
func restingPower(segs []drivesim.Segment, spans []drivesim.IOSpan, a, b time.Duration) (float64, bool) {
	var e, d float64
	k := sort.Search(len(segs), func(k int) bool { return segs[k].End > a })
	for ; k < len(segs) && segs[k].Start < b; k++ {
		s := segs[k]
		switch s.State {
		case powerstate.Idle, powerstate.Partial, powerstate.Slumber, powerstate.DevSlp, powerstate.Standby:
		default:
			continue
		}
		if s.GC || spans == nil && s.IO {
			continue
		}
		x, y := max(a, s.Start), min(b, s.End)
		if y <= x {
			continue
		}
		busy := time.Duration(0)
		if spans != nil {
			busy = overlap(spans, x, y)
		}
		dd := (y - x - busy).Seconds()
		e += float64(s.P5+s.P12) * dd
		d += dd
	}
	if d <= 0 {
		return 0, false
	}
	return e / d, true
}

// unionIO merges outstanding spans that overlap or lie less than gap
// apart, in time order.
func unionIO(spans []drivesim.IOSpan, gap time.Duration) []drivesim.IOSpan {
	if len(spans) == 0 {
		return nil
	}
	s := append([]drivesim.IOSpan(nil), spans...)
	sort.Slice(s, func(a, b int) bool { return s[a].Start < s[b].Start })
	out := []drivesim.IOSpan{s[0]}
	for _, x := range s[1:] {
		last := &out[len(out)-1]
		if x.Start-last.End < gap || x.Start <= last.End {
			last.End = max(last.End, x.End)
			continue
		}
		out = append(out, x)
	}
	return out
}

// overlap is the time of [a, b) inside the spans (sorted, disjoint).
func overlap(spans []drivesim.IOSpan, a, b time.Duration) time.Duration {
	k := sort.Search(len(spans), func(k int) bool { return spans[k].End > a })
	var d time.Duration
	for ; k < len(spans) && spans[k].Start < b; k++ {
		if x, y := max(a, spans[k].Start), min(b, spans[k].End); y > x {
			d += y - x
		}
	}
	return d
}

// mergeGaps moves the time between two outstanding-request runs less than
// gap apart (inside the sample runs) to active, as the report's merging
// of busy intervals does.
func mergeGaps(segs []drivesim.Segment, ps *portSpan, rc *runClock, p drivesim.Profile, gap time.Duration, times, gc map[string]float64) {
	if gap <= 0 {
		return
	}
	inRuns := func(a, b time.Duration) float64 {
		var d float64
		for _, run := range ps.runs {
			w0, w1 := rc.emu(run[0]), rc.emu(run[1])
			if x, y := max(a, w0), min(b, w1); y > x {
				d += (y - x).Seconds()
			}
		}
		return d
	}
	lastIO := -1 // index of the last IO segment seen
	for k, s := range segs {
		if !s.IO {
			continue
		}
		if lastIO >= 0 && lastIO < k-1 && s.Start-segs[lastIO].End < gap {
			for g := lastIO + 1; g < k; g++ {
				d := inRuns(segs[g].Start, segs[g].End)
				if d <= 0 {
					continue
				}
				name := truthState(segs[g], p)
				times[name] -= d
				if segs[g].GC {
					gc[name] -= d
				}
				times["active"] += d
			}
		}
		lastIO = k
	}
}

// truthState names a segment by the report's definitions (docs/analysis.md,
// "States") applied to the model's own request count and noise-free power:
// a host request outstanding is active, whatever the drive does meanwhile
// (a wake with the read waiting, the transfer, the host's completion
// path); without one, the drive's own work above idle (a transfer running
// on, a wake spike) is background, a wake at the idle level (after a pin
// release) idle, a GC burst its link state (compare moves it to
// background), anything else its state.
func truthState(s drivesim.Segment, p drivesim.Profile) string {
	if s.IO {
		return "active"
	}
	switch s.State {
	case powerstate.Active, powerstate.SpinUp:
		return "background"
	case powerstate.Wake:
		if !s.GC && s.Power() > p.ActiveIdleW*(1+1e-9) {
			return "background"
		}
		return "idle"
	}
	return s.State.String()
}

// mean is the mean of xs, nil when there are none (a JSON null).
func mean(xs []float64) *float64 {
	if len(xs) == 0 {
		return nil
	}
	s := stat.Mean(xs)
	return &s
}
