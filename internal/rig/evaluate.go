package rig

import (
	"errors"
	"io"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/states/detect"
	"github.com/idlewatt/idlewatt/states/devslp"
	"github.com/idlewatt/idlewatt/states/drivesim"
)

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
