package importer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/files"
	"github.com/idlewatt/idlewatt/units"
)

// NotePrefix starts every host note (capture.StateNote) an import writes:
// what the source format cannot carry and what was assumed to read it.
// Analysis reports these notes (report.json notes), so the report of an
// imported capture says them too.
const NotePrefix = "import: "

// Options say how to turn a meter file into a capture.
type Options struct {
	files.Options
	// Name is the drive's name in the capture (default: the file's name
	// without its extension).
	Name string
	// Overwrite lets Import replace an existing capture.
	Overwrite bool
	// Tool is the capture header's tool, e.g. "idlewatt v0.9".
	Tool string
}

// Result says what Import wrote.
type Result struct {
	Format  string
	Out     string
	Samples uint64 // samples written
	Missing uint64 // samples the file lacks inside its span (gaps)
	Events  uint64 // digital-line events
	IO      uint64 // I/O spans from the marker line
	Span    uint64 // indices from the first sample to the last, inclusive
	Rate    units.Hertz
	Notes   []string // the notes written into the capture, without NotePrefix
}

// markEvery is how often (in seconds of samples) a synthetic clock mark is
// written: a meter file has no host clock, so marks tie its sample index to
// a host time that starts at 0 and runs at the file's rate exactly.
const markEvery = 1

// Import reads the meter file in and writes it to out as a capture. The
// capture is written to a temporary file renamed into place at the end, so
// a failed import leaves no capture and an old one (with Overwrite) as it
// was. Errors from the file are files.ErrMalformed / files.ErrOptions /
// files.ErrUnknownFormat; refusals of out match outfile.ErrRefused.
func Import(ctx context.Context, in, out string, o Options) (*Result, error) {
	f, err := files.Open(in, o.Options)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ImportFile(ctx, f, in, out, o)
}

// ImportFile is Import of a meter file already open; in names it (for the
// drive's default name, the header and messages; outputs never replace it).
func ImportFile(ctx context.Context, f files.File, in, out string, o Options) (*Result, error) {
	info := f.Info()
	devslp, err := files.LineBit(info, o.DevSlpLine)
	if err != nil {
		return nil, fmt.Errorf("--devslp-line: %w", err)
	}
	marker, err := files.LineBit(info, o.MarkerLine)
	if err != nil {
		return nil, fmt.Errorf("--marker-line: %w", err)
	}
	if devslp >= 0 && devslp == marker {
		return nil, fmt.Errorf("%w: --devslp-line and --marker-line name the same line %s", files.ErrOptions, info.Lines[devslp])
	}
	name := o.Name
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(in), filepath.Ext(in))
	}
	port := info.Channels[0].Port
	cfg, _ := json.Marshal(map[string]any{"import": map[string]any{
		"file": filepath.Base(in), "format": info.Format, "devslp_line": o.DevSlpLine, "marker_line": o.MarkerLine,
		"voltage_v": o.Voltage, "rate_hz": o.Rate, "d7_first": o.D7First}})
	created := info.Start
	if created.IsZero() {
		created = time.Now()
	}
	h := capture.Header{
		Created:  created.UTC().Format(time.RFC3339Nano),
		Meter:    info.Meter,
		Channels: info.Channels,
		RateHz:   info.Rate,
		Drives:   []capture.DriveInfo{{Port: port, Name: name}},
		Config:   cfg,
		Tool:     o.Tool,
	}
	of, err := outfile.Create(out, outfile.Options{Overwrite: o.Overwrite, Inputs: []string{in}})
	if err != nil {
		return nil, err
	}
	// Chunked by size alone (1 MiB), not by the writer's 250 ms of wall
	// clock, which is for a live recording: the same file imports to the
	// same capture whatever the machine's load. With the clock, the chunks
	// fell where the decoding had reached every 250 ms, and the charts of a
	// meter file reported directly (which draw run by run) changed from one
	// report to the next.
	w, err := capture.NewWriter(of, h, capture.Options{FlushEvery: 24 * time.Hour})
	if err != nil {
		of.Abort()
		return nil, err
	}
	s := &sink{w: w, rate: float64(info.Rate)}
	ls := &files.LineSink{Sink: s, DevSlp: devslp, Marker: marker, Port: port,
		OnMarker: func(start, end uint64) error {
			s.io++
			return w.IO(capture.IOEvent{Port: port, Op: 0, Issue: s.host(start), Complete: s.host(end)})
		}}
	res := &Result{Format: info.Format, Out: out, Rate: info.Rate}
	if err = f.Replay(ctx, ls); err != nil && ctx.Err() == nil {
		err = fmt.Errorf("%s: %w", in, err)
	}
	if err == nil {
		err = ls.Finish(s.end)
	}
	if err == nil && s.samples == 0 {
		err = fmt.Errorf("%w: %s: the file holds no samples", files.ErrMalformed, in)
	}
	if err == nil {
		err = s.finalMark()
	}
	if err == nil {
		notes := f.Notes()
		if devslp >= 0 {
			notes = append(notes, fmt.Sprintf("line %s is the DEVSLP pin of port %d (its edges are the capture's pin events)", info.Lines[devslp], port))
		}
		if marker >= 0 {
			notes = append(notes, fmt.Sprintf("line %s marks I/O on port %d: %d high spans are I/O events of unknown operation", info.Lines[marker], port, s.io))
		}
		notes = append(notes, "no host clock in the file: host times are the sample index at the file's rate (synthetic marks), so I/O and phases from another recording cannot be aligned to it")
		for _, n := range notes {
			if err = w.State(capture.StateEvent{Host: 0, Port: 0, Kind: capture.StateNote, Value: NotePrefix + n}); err != nil {
				break
			}
		}
		res.Notes = notes
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		of.Abort()
		if errors.Is(err, context.Canceled) || ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	if err := of.Commit(); err != nil {
		return nil, err
	}
	res.Samples, res.Missing, res.Events, res.IO = s.samples, s.missing, s.events, s.io
	if s.end > 0 {
		res.Span = s.end
	}
	return res, nil
}

// sink writes a file's replay into the capture and adds the synthetic
// marks.
type sink struct {
	w        *capture.Writer
	rate     float64
	end      uint64 // index after the last sample or gap
	nextMark uint64
	lastMark uint64
	markID   uint32
	samples  uint64
	missing  uint64
	events   uint64
	io       uint64
}

func (s *sink) host(idx uint64) hostclock.Time {
	return hostclock.Time(math.Round(float64(idx) * 1e9 / s.rate))
}

// marks writes the marks due up to index end.
func (s *sink) marks(end uint64) error {
	step := uint64(math.Max(1, math.Round(markEvery*s.rate)))
	for s.nextMark < end {
		s.markID++
		t := s.host(s.nextMark)
		if err := s.w.Mark(meter.MarkEcho{ID: s.markID, HostSent: t, HostRecv: t, MeterIndex: s.nextMark, Synthetic: true}); err != nil {
			return err
		}
		s.lastMark = s.nextMark
		s.nextMark += step
	}
	return nil
}

func (s *sink) finalMark() error {
	if s.end == 0 {
		return nil
	}
	if err := s.marks(s.end); err != nil {
		return err
	}
	// One more at the last index, so the fit spans the whole file.
	if last := s.end - 1; s.markID == 0 || s.lastMark != last {
		s.markID++
		t := s.host(last)
		s.lastMark = last
		return s.w.Mark(meter.MarkEcho{ID: s.markID, HostSent: t, HostRecv: t, MeterIndex: last, Synthetic: true})
	}
	return nil
}

func (s *sink) Samples(b *meter.Block) error {
	if err := s.marks(b.Start + uint64(b.Len())); err != nil {
		return err
	}
	s.samples += uint64(b.Len())
	s.end = max(s.end, b.Start+uint64(b.Len()))
	return s.w.Samples(b)
}

func (s *sink) Gap(g meter.Gap) error {
	s.missing += g.Count
	s.end = max(s.end, g.Start+g.Count)
	return s.w.Gap(g)
}

func (s *sink) Mark(m meter.MarkEcho) error { return s.w.Mark(m) }

func (s *sink) Event(e meter.Event) error {
	if e.Kind == meter.EventLogic {
		s.events++
	}
	return s.w.Event(e)
}
