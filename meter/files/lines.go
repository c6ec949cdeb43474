package files

import (
	"strings"

	"github.com/idlewatt/idlewatt/meter"
)

// LineBit returns the bit of Info.Lines that name refers to: the names are
// compared without case, spaces and brackets ("gpi[1]" = "GPI1"), so each
// format's own spelling works. "" is -1, no line.
func LineBit(info Info, name string) (int, error) {
	if name == "" {
		return -1, nil
	}
	want := lineKey(name)
	for k, l := range info.Lines {
		if lineKey(l) == want {
			return k, nil
		}
	}
	if len(info.Lines) == 0 {
		return -1, optErr("line %q: this %s file has no digital lines", name, info.Format)
	}
	return -1, optErr("line %q: this %s file's lines are %s", name, info.Format, strings.Join(info.Lines, ", "))
}

func lineKey(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '[', ']', '_', '-':
			return -1
		}
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// LineSink turns the logic events of a file's Replay into what the capture
// means by them: edges of the DEVSLP line become meter.EventDevSlp (the
// first logic event gives the initial level, as a hub reports its pin), and
// the high spans of the marker line go to Marker. The logic events
// themselves are passed on, so every line is kept.
type LineSink struct {
	meter.Sink
	DevSlp int // bit of the DEVSLP line, -1 none
	Marker int // bit of the I/O marker line, -1 none
	Port   int // the drive port the pin and the I/O belong to
	// OnMarker receives each high span [start, end) of the marker line.
	OnMarker func(start, end uint64) error

	seen      bool
	level     int64
	markStart uint64
	marking   bool
}

// Event implements meter.Sink.
func (s *LineSink) Event(e meter.Event) error {
	if e.Kind == meter.EventLogic {
		if err := s.logic(e); err != nil {
			return err
		}
	}
	return s.Sink.Event(e)
}

func (s *LineSink) logic(e meter.Event) error {
	bit := func(v int64, b int) bool { return b >= 0 && v>>uint(b)&1 != 0 }
	if s.DevSlp >= 0 && (!s.seen || bit(e.Value, s.DevSlp) != bit(s.level, s.DevSlp)) {
		v := int64(0)
		if bit(e.Value, s.DevSlp) {
			v = 1
		}
		if err := s.Sink.Event(meter.Event{Kind: meter.EventDevSlp, Port: s.Port, Index: e.Index, Value: v}); err != nil {
			return err
		}
	}
	if s.Marker >= 0 {
		high := bit(e.Value, s.Marker)
		switch {
		case high && !s.marking:
			s.marking, s.markStart = true, e.Index
		case !high && s.marking:
			s.marking = false
			if s.OnMarker != nil {
				if err := s.OnMarker(s.markStart, e.Index); err != nil {
					return err
				}
			}
		}
	}
	s.seen, s.level = true, e.Value
	return nil
}

// Finish closes a marker span still high at the end of the file: it ends
// at end (the index after the last sample).
func (s *LineSink) Finish(end uint64) error {
	if s.marking && s.OnMarker != nil && end > s.markStart {
		s.marking = false
		return s.OnMarker(s.markStart, end)
	}
	return nil
}
