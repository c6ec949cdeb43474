package rig

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/chart"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/states/detect"
	"github.com/idlewatt/idlewatt/states/devslp"
	"github.com/idlewatt/idlewatt/states/drivesim"
	"github.com/idlewatt/idlewatt/units"
)

// CycleSamples are the power samples of one DevSlp cycle on the host clock.
type CycleSamples struct {
	Port    int
	Timing  devslp.Timing
	Samples []devslp.Sample
}

// Window is a stretch of one port's power to read back from a capture.
type Window struct {
	Port       int
	Start, End int64 // host monotonic ns
}

// ReadWindows reads each window's drive power (all rails of its port, only
// at sample indices where every rail has a sample) on the aligned host
// clock. Memory is bounded by the windows' length, not the capture's.
func ReadWindows(path string, windows []Window) ([][]devslp.Sample, analysis.Clock, error) {
	ev, err := scanEvents(path)
	if err != nil {
		return nil, analysis.Clock{}, err
	}
	return readWindows(path, ev.clock, windows)
}

func readWindows(path string, clock analysis.Clock, windows []Window) ([][]devslp.Sample, analysis.Clock, error) {
	out := make([][]devslp.Sample, len(windows))
	if len(windows) == 0 {
		return out, clock, nil
	}
	r, err := capture.Open(path)
	if err != nil {
		return nil, clock, err
	}
	defer r.Close()
	chans := r.Header().Channels
	lo, hi := windows[0].Start, windows[0].End
	for _, w := range windows {
		lo, hi = min(lo, w.Start), max(hi, w.End)
	}
	rows := capture.NewRows(r)
	for {
		row, err := rows.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, capture.ErrTruncated) {
				break // the windows before the damage still count
			}
			return nil, clock, err
		}
		if row.Gap > 0 {
			continue
		}
		t := clock.Host(row.Index)
		if t < lo || t > hi {
			continue
		}
		for i, w := range windows {
			if t < w.Start || t > w.End {
				continue
			}
			var p float64
			complete := true
			for ch, meta := range chans {
				if meta.Port != w.Port {
					continue
				}
				if !row.Present[ch] {
					complete = false
					break
				}
				p += float64(row.V[ch]) * float64(row.I[ch])
			}
			if complete {
				out[i] = append(out[i], devslp.Sample{T: t, W: p})
			}
		}
	}
	return out, clock, nil
}

// ReadCycles reads each DevSlp cycle's power (see ReadWindows).
func ReadCycles(path string, timings map[int][]devslp.Timing) ([]CycleSamples, analysis.Clock, error) {
	var cycles []CycleSamples
	for port, ts := range timings {
		for _, t := range ts {
			cycles = append(cycles, CycleSamples{Port: port, Timing: t})
		}
	}
	sort.Slice(cycles, func(a, b int) bool { return cycles[a].Timing.Start < cycles[b].Timing.Start })
	ws := make([]Window, len(cycles))
	for i, c := range cycles {
		ws[i] = Window{Port: c.Port, Start: c.Timing.Start, End: c.Timing.End}
	}
	ev, err := scanEvents(path)
	if err != nil {
		return nil, analysis.Clock{}, err
	}
	samples, clock, err := readWindows(path, ev.clock, ws)
	if err != nil {
		return nil, clock, err
	}
	for i := range cycles {
		cycles[i].Samples = samples[i]
	}
	meterPinTimes(cycles, clock, ev.pins)
	return cycles, clock, nil
}

// pinEvent is a DEVSLP pin change the meter reported, at its sample index.
type pinEvent struct {
	port     int
	index    uint64
	asserted bool
}

// capEvents is everything but the samples, read in one pass that skips
// the sample chunks: the fitted clock, the meter's DEVSLP events, the I/O
// by port and the host's DEVSLP requests by port.
type capEvents struct {
	clock    analysis.Clock
	pins     []pinEvent
	ios      map[int][]detect.IO
	hostPins map[int][]detect.Pin
}

func scanEvents(path string) (*capEvents, error) {
	r, err := capture.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	r.SkipSamples(true)
	h := r.Header()
	// One mark per second of meter time (the rig marks twice a second):
	// DevSlp runs are short, and every low-round-trip mark tightens the fit.
	f := analysis.NewClockFitter(h.RateHz, 1, 4096)
	ev := &capEvents{ios: map[int][]detect.IO{}, hostPins: map[int][]detect.Pin{}}
	for {
		rec, err := r.Next()
		if err != nil {
			break // EOF or a damaged tail: use what was read
		}
		switch {
		case rec.Kind == capture.KindMark:
			f.Add(rec.Mark)
		case rec.Kind == capture.KindEvent && rec.Event.Kind == meter.EventDevSlp:
			ev.pins = append(ev.pins, pinEvent{port: rec.Event.Port, index: rec.Event.Index, asserted: rec.Event.Value != 0})
		case rec.Kind == capture.KindIO:
			for _, e := range rec.IO {
				ev.ios[e.Port] = append(ev.ios[e.Port], detect.IO{Issue: e.Issue, Complete: e.Complete})
			}
		case rec.Kind == capture.KindState && rec.State.Kind == capture.StateDevSlpPin:
			ev.hostPins[rec.State.Port] = append(ev.hostPins[rec.State.Port], detect.Pin{At: rec.State.Host, Asserted: rec.State.Value == "1"})
		}
	}
	ev.clock = f.Fit(h.StartHost)
	return ev, nil
}

// meterPinTimes replaces each cycle's host-side assert and deassert times
// (when the host sent the command) by when the meter saw the pin change,
// on the same aligned clock as the samples: the command's transit is not
// the drive's latency, and the window judged then lines up with the
// samples whatever the clock fit's residual.
func meterPinTimes(cycles []CycleSamples, clock analysis.Clock, pins []pinEvent) {
	const slack = int64(50 * time.Millisecond)
	for i := range cycles {
		c := &cycles[i]
		find := func(after int64, asserted bool) (int64, bool) {
			for _, p := range pins {
				if p.port != c.Port || p.asserted != asserted {
					continue
				}
				if t := clock.Host(p.index); t >= after-slack && t <= after+slack {
					return t, true
				}
			}
			return 0, false
		}
		if t, ok := find(c.Timing.Assert, true); ok {
			c.Timing.Assert = t
		}
		if t, ok := find(c.Timing.Deassert, false); ok && t > c.Timing.Assert {
			c.Timing.Deassert = t
		}
	}
}

// ProfileLevels are the state levels a profile predicts.
func ProfileLevels(p drivesim.Profile) detect.Levels {
	l := detect.Levels{Idle: p.ActiveIdleW, Partial: p.PartialW, Slumber: p.SlumberW}
	if p.DevSlpWorks() {
		l.DevSlp = p.DevSlpW
	}
	if p.HDD() && p.StandbyW > 0 && p.StandbyW < l.Slumber {
		// An HDD's standby sits below its slumber level; the classifier has no
		// standby state, so leave it unlabelled (off threshold) rather than wrong.
		l.Off = p.StandbyW / 2
	}
	return l
}

// CycleChart draws one cycle with its verdict's timings, in ms from assertion.
func CycleChart(name string, c CycleSamples, res devslp.Result, limit units.Watts, out string, o outfile.Options) error {
	if len(c.Samples) == 0 {
		return fmt.Errorf("cycle %d on port %d: no samples", c.Timing.Cycle, c.Port)
	}
	t0 := c.Timing.Assert
	ms := func(t int64) float64 {
		if t == 0 {
			return math.NaN()
		}
		return float64(t-t0) / 1e6
	}
	env := chart.Envelope{}
	// Half a millisecond per point keeps the wake spike and the floor
	// readable without drawing every sample.
	const bucket = 0.5
	var cur float64 = math.NaN()
	var mn, mx, sum float64
	var n int
	flush := func() {
		if n > 0 {
			env.T = append(env.T, cur)
			env.Min, env.Max, env.Mean = append(env.Min, mn), append(env.Max, mx), append(env.Mean, sum/float64(n))
		}
	}
	for _, s := range c.Samples {
		b := math.Floor(ms(s.T)/bucket) * bucket
		if b != cur {
			flush()
			cur, mn, mx, sum, n = b, s.W, s.W, 0, 0
		}
		mn, mx, sum, n = math.Min(mn, s.W), math.Max(mx, s.W), sum+s.W, n+1
	}
	flush()
	floorAt := math.NaN()
	if res.FloorAt != 0 {
		floorAt = ms(res.FloorAt)
	}
	fig, err := chart.DevSlpCycleChart(chart.DevSlpCycle{
		Name: name, Power: env, Assert: 0, Deassert: ms(c.Timing.Deassert),
		FloorReached: floorAt, FirstIO: ms(c.Timing.ProbeComplete),
		Floor: units.Watts(res.FloorW), Limit: limit,
		// devslp.Evaluate's floor is the mean over the hold's second half.
		FloorFrom: ms(c.Timing.Assert + (c.Timing.Deassert-c.Timing.Assert)/2), FloorTo: ms(c.Timing.Deassert),
		Verdict: cycleVerdict(res), Pass: res.Pass,
	}, chart.DevSlpOpts{
		Title:    fmt.Sprintf("DevSlp cycle %d — %s", c.Timing.Cycle, name),
		Subtitle: fmt.Sprintf("entry %.1f ms · floor %.2f mW · exit %.1f ms", res.EntryMs, res.FloorW*1e3, res.ExitMs),
		Unit:     chart.UnitMW, LogY: true,
	})
	if err != nil {
		return err
	}
	return fig.SaveWith(out, o)
}

// cycleVerdict is the chart's verdict line: devslp.Evaluate's judgement of
// the cycle, its failures word for word.
func cycleVerdict(r devslp.Result) string {
	if r.Pass {
		return fmt.Sprintf("cycle %d: PASS", r.Cycle)
	}
	if len(r.Failures) == 0 {
		return fmt.Sprintf("cycle %d: FAIL", r.Cycle)
	}
	return fmt.Sprintf("cycle %d: FAIL: %s", r.Cycle, strings.Join(r.Failures, "; "))
}

// devslpEvaluate judges one cycle with the options the run used.
func devslpEvaluate(res *Result, c CycleSamples) devslp.Result {
	return devslp.Evaluate(c.Timing, c.Samples, devslp.Options{})
}
