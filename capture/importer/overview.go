package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/files"
	"github.com/idlewatt/idlewatt/meter/files/jls"
)

// ErrNoOverview: the file has no summaries an overview can be drawn from
// (it is not a JLS file, or has no power signal at the current's rate).
var ErrNoOverview = errors.New("no summary overview in this file")

// Overview serves a JLS file to plot the way an indexed capture is served
// (capture.Reader.UseIndexOf): the overview pass reads the file's own
// summary levels of its power signal — mean, min, max per window — and not
// its samples, so a long recording is drawn without reading it whole. A pass
// that needs the samples (a zoom, a chart finer than the file's levels) gets
// them from a capture imported on first need into a temporary file, which
// Close removes.
type Overview struct {
	ctx    context.Context
	path   string
	o      Options
	rd     *jls.Reader
	closer io.Closer
	power  *jls.Signal
	base   int64 // the current's first sample id: capture index 0
	h      capture.Header
	notes  []string

	mu     sync.Mutex
	tmpDir string
	tmp    string
	err    error
}

// OpenOverview opens path for an overview; ErrNoOverview if it has none
// (the caller imports it instead). The file's options are checked as
// Import checks them.
func OpenOverview(ctx context.Context, path string, o Options) (*Overview, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	ov, err := openOverview(ctx, f, fi.Size(), path, o)
	if err != nil {
		f.Close()
		return nil, err
	}
	ov.closer = f
	return ov, nil
}

func openOverview(ctx context.Context, r io.ReaderAt, size int64, path string, o Options) (*Overview, error) {
	head := make([]byte, files.DetectBytes)
	n, _ := r.ReadAt(head, 0)
	format := files.Detect(head[:n])
	if format == nil || format.Name != "jls" {
		return nil, ErrNoOverview
	}
	mf, err := format.Open(r, size, o.Options)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	info := mf.Info()
	if _, err := files.LineBit(info, o.DevSlpLine); err != nil {
		return nil, fmt.Errorf("--devslp-line: %w", err)
	}
	if _, err := files.LineBit(info, o.MarkerLine); err != nil {
		return nil, fmt.Errorf("--marker-line: %w", err)
	}
	rd, err := jls.Open(r, size)
	if err != nil {
		return nil, ErrNoOverview // format.Open read it: cannot happen
	}
	ov := &Overview{ctx: ctx, path: path, o: o, rd: rd}
	var cur *jls.Signal
	for _, s := range rd.Sources {
		if c := rd.Signal(s.ID, "current"); s.ID != 0 && c != nil {
			cur, ov.power = c, rd.Signal(s.ID, "power")
			break
		}
	}
	if cur == nil || ov.power == nil || ov.power.SampleRate != cur.SampleRate || !ov.power.Float() || ov.power.Levels() == 0 {
		return nil, ErrNoOverview
	}
	first, ok, err := rd.FirstSampleID(cur)
	if err != nil || !ok {
		return nil, ErrNoOverview
	}
	ov.base = first
	ov.h = header(info, path, o)
	for _, n := range mf.Notes() {
		// The overview draws the file's power signal: the import's note that
		// it is not used does not apply.
		n = strings.NewReplacer(", "+powerUnused, "", powerUnused+", ", "").Replace(n)
		if n != "signals not used: "+powerUnused {
			ov.notes = append(ov.notes, n)
		}
	}
	ov.notes = append(ov.notes, fmt.Sprintf("overview drawn from the file's own summaries of its power signal (%d levels, %d to %d samples a window), without reading its samples: digital lines, DEVSLP and I/O-marker spans are not drawn and power is the instrument's, not V × I (plot --from/--to, or import the file, for those)",
		ov.power.Levels(), ov.power.Per(1), ov.power.Per(ov.power.Levels())))
	return ov, nil
}

// powerUnused is how meter/files names the power signal it leaves out.
const powerUnused = "power (the capture's power is V × I of the samples)"

// Source returns a new pass over the file (analysis.Source, with
// UseIndexOf and SkipSamples).
func (ov *Overview) Source() *OverviewSource { return &OverviewSource{ov: ov} }

// Close removes the capture imported for sample passes, if one was.
func (ov *Overview) Close() error {
	ov.mu.Lock()
	defer ov.mu.Unlock()
	if ov.tmpDir != "" {
		os.RemoveAll(ov.tmpDir)
		ov.tmpDir = ""
	}
	if ov.closer != nil {
		return ov.closer.Close()
	}
	return nil
}

// imported returns the path of a capture of the file, importing it the
// first time.
func (ov *Overview) imported() (string, error) {
	ov.mu.Lock()
	defer ov.mu.Unlock()
	if ov.tmp != "" || ov.err != nil {
		return ov.tmp, ov.err
	}
	dir, err := os.MkdirTemp("", "idlewatt-import-")
	if err != nil {
		ov.err = err
		return "", err
	}
	ov.tmpDir = dir
	tmp := filepath.Join(dir, filepath.Base(ov.path)+".iwcap")
	if _, err := Import(ov.ctx, ov.path, tmp, ov.o); err != nil {
		ov.err = err
		return "", err
	}
	ov.tmp = tmp
	return tmp, nil
}

// header is the capture header Import writes for info.
func header(info files.Info, in string, o Options) capture.Header {
	name := o.Name
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(in), filepath.Ext(in))
	}
	created := ""
	if !info.Start.IsZero() {
		created = info.Start.UTC().Format("2006-01-02T15:04:05.999999999Z07:00")
	}
	return capture.Header{Created: created, Meter: info.Meter, Channels: info.Channels, RateHz: info.Rate,
		Drives: []capture.DriveInfo{{Port: info.Channels[0].Port, Name: name}}, Tool: o.Tool}
}

// OverviewSource is one pass of an Overview.
type OverviewSource struct {
	ov      *Overview
	indexed bool
	kinds   capture.IndexKinds
	skip    bool
	scan    *capture.Reader
	done    bool
	noted   int // notes handed out
	level   int
	sums    *jls.Summaries
	queue   []capture.Summary
	sum     capture.Summary
}

// Header implements analysis.Source.
func (s *OverviewSource) Header() capture.Header {
	if s.scan != nil {
		return s.scan.Header()
	}
	return s.ov.h
}

// UseIndexOf makes this pass an overview: IndexRecords gives the file's
// notes (there are no marks, I/O or events to list), IndexSummaries its
// power summaries.
func (s *OverviewSource) UseIndexOf(k capture.IndexKinds) error {
	s.indexed, s.kinds = true, k
	return nil
}

// SkipSamples implements what analysis asks of a capture.Reader.
func (s *OverviewSource) SkipSamples(skip bool) {
	s.skip = skip
	if s.scan != nil {
		s.scan.SkipSamples(skip)
	}
}

// Complete implements analysis.Source.
func (s *OverviewSource) Complete() bool {
	if s.scan != nil {
		return s.scan.Complete()
	}
	return s.done
}

// Close implements analysis.Source.
func (s *OverviewSource) Close() error {
	if s.scan != nil {
		return s.scan.Close()
	}
	return nil
}

// SummariesAreTheData tells analysis that this source's summaries are the
// meter file's own, not a capture's summaries of samples it also holds:
// plot does not decode samples to check them.
func (s *OverviewSource) SummariesAreTheData() bool { return true }

// Account is the imported capture's, for a sample pass.
func (s *OverviewSource) Account() capture.Account {
	if s.scan != nil {
		return s.scan.Account()
	}
	return capture.Account{}
}

// Next implements analysis.Source.
func (s *OverviewSource) Next() (capture.Record, error) {
	if err := context.Cause(s.ov.ctx); err != nil {
		return capture.Record{}, err
	}
	if !s.indexed {
		if s.scan == nil {
			p, err := s.ov.imported()
			if err != nil {
				return capture.Record{}, err
			}
			if s.scan, err = capture.Open(p); err != nil {
				return capture.Record{}, err
			}
			s.scan.SkipSamples(s.skip)
		}
		return s.scan.Next()
	}
	if s.kinds&capture.IndexRecords != 0 && s.noted < len(s.ov.notes)+2 {
		k := s.noted
		s.noted++
		if k < 2 {
			// Two synthetic marks on the file's exact rate, as Import writes
			// them (host time = index at the rate, from 0).
			idx := uint64(k) * uint64(s.ov.power.Per(1))
			t := hostclockAt(idx, float64(s.ov.h.RateHz))
			return capture.Record{Kind: capture.KindMark, Mark: meter.MarkEcho{ID: uint32(k + 1), HostSent: t, HostRecv: t, MeterIndex: idx, Synthetic: true}}, nil
		}
		n := s.ov.notes[k-2]
		return capture.Record{Kind: capture.KindState, State: capture.StateEvent{Kind: capture.StateNote, Value: NotePrefix + n}}, nil
	}
	if s.kinds&capture.IndexSummaries == 0 {
		s.done = true
		return capture.Record{}, io.EOF
	}
	for len(s.queue) == 0 {
		if s.sums == nil {
			s.level++
			if s.level > s.ov.power.Levels() || s.ov.power.Per(s.level) > math.MaxUint32 || s.ov.power.Per(s.level) == 0 {
				s.done = true
				return capture.Record{}, io.EOF
			}
			s.sums = s.ov.rd.Summaries(s.ov.power, s.level)
		}
		js, err := s.sums.Next()
		if err == io.EOF {
			s.sums = nil
			continue
		}
		if err != nil {
			return capture.Record{}, fmt.Errorf("%s: %w", s.ov.path, err)
		}
		s.queue = runs(s.queue, js, s.ov.base, s.level-1)
	}
	s.sum = s.queue[0]
	s.queue = s.queue[1:]
	return capture.Record{Kind: capture.KindSummary, Summary: &s.sum}, nil
}

// runs cuts a JLS summary chunk into capture summaries of consecutive
// windows: a window whose mean is NaN (every sample NaN: dropped) or that
// starts before capture index 0 is left out.
func runs(q []capture.Summary, js *jls.Summary, base int64, level int) []capture.Summary {
	var cur *capture.Summary
	for k := range js.Mean {
		start := js.Start + int64(k)*js.Per - base
		m := js.Mean[k]
		if start < 0 || math.IsNaN(m) || math.IsNaN(js.Min[k]) || math.IsNaN(js.Max[k]) {
			cur = nil
			continue
		}
		if cur == nil {
			q = append(q, capture.Summary{Channel: 0, Level: level, Start: uint64(start), Per: uint32(js.Per)})
			cur = &q[len(q)-1]
		}
		cur.MinW = append(cur.MinW, float32(js.Min[k]))
		cur.MaxW = append(cur.MaxW, float32(js.Max[k]))
		cur.MeanW = append(cur.MeanW, float32(m))
		cur.StdW = append(cur.StdW, float32(js.Std[k]))
	}
	return q
}

func hostclockAt(idx uint64, rate float64) hostclock.Time {
	return hostclock.Time(math.Round(float64(idx) * 1e9 / rate))
}
