package sim

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/idlewatt/idlewatt/units"
)

// TruthSchema is the schema line's value in a simulated NVMe drive's
// truth file (docs/states.md, "Ground truth of the simulated NVMe drive").
const TruthSchema = "idlewatt.nvmesim.truth/v1"

// TruthHeader is the first line of a truth file.
type TruthHeader struct {
	Schema  string `json:"schema"`
	Profile string `json:"profile"`
	Seed    uint64 `json:"seed"`
	Port    int    `json:"port,omitempty"`
	Rail    string `json:"rail"` // "3v3": the whole draw is on the 3.3 V rail
}

// Segment is a stretch of constant true (noise-free) draw on the emulator
// clock: the power state and link state, an APST entry in progress, an
// I/O outstanding (the drive waking or serving it), or the port powered
// off (Power 0).
type Segment struct {
	Start, End time.Duration
	PS         int
	Link       Link
	Entering   bool
	IO         bool
	Off        bool
	Power      units.Watts
}

type truthLine struct {
	PS       int     `json:"ps"`
	Link     Link    `json:"link"`
	Entering bool    `json:"entering,omitempty"`
	IO       bool    `json:"io,omitempty"`
	Off      bool    `json:"off,omitempty"`
	StartS   float64 `json:"start_s"`
	EndS     float64 `json:"end_s"`
	PowerW   float64 `json:"power_w"`
}

// truthWriter writes the header, then one line per segment; errors are
// sticky and returned by flush.
type truthWriter struct {
	w   *bufio.Writer
	buf []byte
	err error
}

func newTruthWriter(w io.Writer, h TruthHeader) *truthWriter {
	tw := &truthWriter{w: bufio.NewWriterSize(w, 64<<10)}
	h.Schema, h.Rail = TruthSchema, "3v3"
	b, err := json.Marshal(h)
	if err == nil {
		_, err = tw.w.Write(append(b, '\n'))
	}
	tw.err = err
	return tw
}

// write appends one segment, formatted by hand (it runs at I/O rate).
func (tw *truthWriter) write(s Segment) {
	if tw.err != nil || s.End <= s.Start {
		return
	}
	b := tw.buf[:0]
	b = append(b, `{"ps":`...)
	b = strconv.AppendInt(b, int64(s.PS), 10)
	b = append(b, `,"link":`...)
	b = strconv.AppendQuote(b, string(s.Link))
	if s.Entering {
		b = append(b, `,"entering":true`...)
	}
	if s.IO {
		b = append(b, `,"io":true`...)
	}
	if s.Off {
		b = append(b, `,"off":true`...)
	}
	b = append(b, `,"start_s":`...)
	b = strconv.AppendFloat(b, s.Start.Seconds(), 'f', 9, 64)
	b = append(b, `,"end_s":`...)
	b = strconv.AppendFloat(b, s.End.Seconds(), 'f', 9, 64)
	b = append(b, `,"power_w":`...)
	b = strconv.AppendFloat(b, float64(s.Power), 'g', -1, 64)
	b = append(b, "}\n"...)
	tw.buf = b
	_, tw.err = tw.w.Write(b)
}

func (tw *truthWriter) flush() error {
	if tw.err != nil {
		return tw.err
	}
	return tw.w.Flush()
}

// ErrTruthFormat is wrapped by ReadTruth's errors.
var ErrTruthFormat = errors.New("bad NVMe truth file")

// maxTruthLine bounds one line (a segment line is under 200 bytes).
const maxTruthLine = 1 << 16

// ReadTruth reads a truth file written by a HubDrive (RecordTruth).
// Errors name the line.
func ReadTruth(r io.Reader) (TruthHeader, []Segment, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxTruthLine)
	var h TruthHeader
	var segs []Segment
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if line == 1 {
			if err := json.Unmarshal(b, &h); err != nil {
				return h, nil, fmt.Errorf("%w: line 1: header: %v", ErrTruthFormat, err)
			}
			if h.Schema != TruthSchema {
				return h, nil, fmt.Errorf("%w: line 1: schema %q, want %q", ErrTruthFormat, h.Schema, TruthSchema)
			}
			continue
		}
		if len(b) == 0 {
			continue
		}
		var l truthLine
		if err := json.Unmarshal(b, &l); err != nil {
			return h, segs, fmt.Errorf("%w: line %d: %v", ErrTruthFormat, line, err)
		}
		switch l.Link {
		case L0, L1, L12:
		default:
			return h, segs, fmt.Errorf("%w: line %d: link %q (want L0, L1 or L1.2)", ErrTruthFormat, line, l.Link)
		}
		if l.PS < 0 || l.PS > 31 {
			return h, segs, fmt.Errorf("%w: line %d: ps %d outside 0–31", ErrTruthFormat, line, l.PS)
		}
		for _, x := range []float64{l.StartS, l.EndS, l.PowerW} {
			if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > 1e9 {
				return h, segs, fmt.Errorf("%w: line %d: value %v out of range", ErrTruthFormat, line, x)
			}
		}
		s := Segment{Start: secs(l.StartS), End: secs(l.EndS), PS: l.PS, Link: l.Link, Entering: l.Entering,
			IO: l.IO, Off: l.Off, Power: units.Watts(l.PowerW)}
		if s.End < s.Start {
			return h, segs, fmt.Errorf("%w: line %d: end_s %v before start_s %v", ErrTruthFormat, line, l.EndS, l.StartS)
		}
		if n := len(segs); n > 0 && s.Start < segs[n-1].End-time.Microsecond {
			return h, segs, fmt.Errorf("%w: line %d: start_s %v before the previous segment's end", ErrTruthFormat, line, l.StartS)
		}
		segs = append(segs, s)
	}
	if err := sc.Err(); err != nil {
		return h, segs, fmt.Errorf("%w: line %d: %v", ErrTruthFormat, line+1, err)
	}
	if line == 0 {
		return h, nil, fmt.Errorf("%w: empty", ErrTruthFormat)
	}
	return h, segs, nil
}

func secs(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// MeanPower is the true mean draw over [from, to) of segments read by
// ReadTruth, and false if they do not cover it.
func MeanPower(segs []Segment, from, to time.Duration) (units.Watts, bool) {
	if to <= from || len(segs) == 0 || segs[0].Start > from || segs[len(segs)-1].End < to {
		return 0, false
	}
	var e float64
	i := sort.Search(len(segs), func(i int) bool { return segs[i].End > from })
	for ; i < len(segs) && segs[i].Start < to; i++ {
		e += float64(segs[i].Power) * (min(to, segs[i].End) - max(from, segs[i].Start)).Seconds()
	}
	return units.Watts(e / (to - from).Seconds()), true
}

// segments is the drive's true draw over [from, to) as it now stands (no
// event in between): the wake and the service of an I/O outstanding, or
// the idle period's APST and link steps.
func (d *Drive) segments(from, to time.Duration) []Segment {
	if to <= from {
		return nil
	}
	var out []Segment
	if d.outstanding > 0 {
		if from < d.wakeUntil {
			e := min(to, d.wakeUntil)
			out = append(out, Segment{Start: from, End: e, Link: L0, IO: true, Power: d.statePower(0) + d.p.LinkL0})
			from = e
		}
		if from < to {
			out = append(out, Segment{Start: from, End: to, Link: L0, IO: true, Power: d.p.Active + d.p.LinkL0})
		}
		return out
	}
	tr := d.IdleTransitions(from, to)
	for i, x := range tr {
		end := to
		if i+1 < len(tr) {
			end = tr[i+1].At
		}
		out = append(out, Segment{Start: x.At, End: end, PS: x.PS, Link: x.Link, Entering: x.Entering, Power: x.Power})
	}
	return out
}
