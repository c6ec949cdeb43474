package rig

import (
	"errors"
	"io"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/states/devslp"
	"github.com/idlewatt/idlewatt/units"
)

// Window is a stretch of one port's power to read back from a capture.
type Window struct {
	Port       int
	Start, End hostclock.Time
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
				out[i] = append(out[i], devslp.Sample{T: t, W: units.Watts(p)})
			}
		}
	}
	return out, clock, nil
}

// scanEvents fits the clock in one pass that skips the sample chunks.
// (Only the idle-per-policy windows use it; DevSlp and state detection are
// analysis's, on its own clock fit.)
func scanEvents(path string) (*capEvents, error) {
	r, err := capture.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	r.SkipSamples(true)
	h := r.Header()
	f := analysis.NewClockFitter(h.RateHz, time.Second, 4096)
	for {
		rec, err := r.Next()
		if err != nil {
			break // EOF or a damaged tail: use what was read
		}
		if rec.Kind == capture.KindMark {
			f.Add(rec.Mark)
		}
	}
	return &capEvents{clock: f.Fit(h.StartHost)}, nil
}

type capEvents struct{ clock analysis.Clock }
