package analysis

import (
	"errors"
	"fmt"
	"math"

	"github.com/idlewatt/idlewatt/analysis/decimate"
	"github.com/idlewatt/idlewatt/analysis/series"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/units"
)

// PlotOptions say what PlotTraces reads.
type PlotOptions struct {
	From, To units.Seconds // from meter index 0; To ≤ From = the whole capture
	Buckets  int           // envelope points (default 2000)
	// Open, if set, opens the capture instead of capture.Open(path) (the
	// command line passes one that stops on SIGINT).
	Open Opener
	// Ports, if set, are the drives drawn, in this order (a port the
	// capture lacks is ErrNoSuchPort); empty = every drive.
	Ports []int
}

// PlotData is what a power-over-time chart of a capture shows, as PlotTraces
// found it.
type PlotData struct {
	Traces  []series.Trace // one per drive
	Capture CaptureInfo    // what was measured, when, with what meter
	// Notes are the notes about the data a report of the capture gives —
	// damage, rejected indices, trailing bytes, an early end, the clock
	// fit's distrust — word for word.
	Notes []string
}

// PlotTraces reads power over time for every drive of the capture at path
// (report.Plot draws it). Zoomed out, it reads only the summaries stored in
// the capture (one point per SummaryPer samples per channel); zoomed in to
// where a chart point covers fewer samples than a summary, or when the
// capture has no summaries, it streams every sample through Analyze.
func PlotTraces(path string, o PlotOptions) (*PlotData, error) {
	if o.Buckets <= 0 {
		o.Buckets = 2000
	}
	open := func() (Source, error) { return capture.Open(path) }
	if o.Open != nil {
		open = o.Open
	}
	opts := DefaultOptions()
	opts.ChartBuckets = o.Buckets
	opts.Ports = o.Ports
	zoomed := o.To > o.From
	// A capture with an index (format 2.1) gives the overview without a
	// scan: the first pass's marks, I/O, states and events and the coarse
	// summary levels are read where the index says they are.
	p1, traces, idxNote := indexedOverview(open, opts, o)
	var err error
	var coarse []series.Trace // summaries too coarse for the chart: drawn only if the samples give nothing
	if p1 == nil {
		if p1, err = firstPass(open, opts, nil); err != nil {
			return nil, err
		}
		if !zoomed || p1.hdr.RateHz.Samples(o.To-o.From)/float64(o.Buckets) >= 1000 {
			traces, err = plotSummaries(open, p1, o, false)
			if errors.Is(err, errCoarse) {
				coarse, traces, err = traces, nil, nil
			}
			if err != nil {
				return nil, err
			}
		}
	}
	var notes []string
	if traces != nil && !summariesAgree(open) {
		// The summaries say other than their samples (capture/verify.go):
		// the samples win, and the samples pass's notes name the chunks.
		traces, coarse = nil, nil
	}
	if traces == nil {
		opts.ChartFrom, opts.ChartTo = o.From, o.To
		// The readings as recorded: no hum is removed from a plot, as
		// none is from the summaries it is otherwise drawn from.
		r, err := secondPass(open, opts, p1, nil, p1.fitter.Fit(p1.hdr.StartHost), nil, nil)
		if err != nil {
			return nil, err
		}
		traces = r.traces
		if coarse != nil && !hasPoints(traces) {
			traces = coarse // samples damaged or lost where their summaries survived
		}
		notes = r.dataNotes
	} else {
		// The first pass read (and checked) every chunk, so its account is
		// the one a report would give.
		clock := p1.fitter.Fit(p1.hdr.StartHost)
		r := &Report{Capture: p1.info, account: p1.acc}
		r.Capture.Complete, r.Capture.EndError, r.Capture.EndOffset = p1.complete, p1.endErr, p1.endOffset
		r.clockNotes(&clock)
		r.importedNotes(p1)
		r.endNotes()
		notes = r.dataNotes
	}
	if idxNote != "" {
		notes = append([]string{idxNote}, notes...)
	}
	return &PlotData{Traces: traces, Capture: p1.info, Notes: notes}, nil
}

// plotCheckBytes is how much of a capture summariesAgree reads: every
// summary there is compared with its samples, about 4 MiB of decoding.
const plotCheckBytes = 4 << 20

// summariesAgree reads the start of the capture with its samples decoded,
// so the reader compares the summaries there with their samples
// (capture/verify.go), and reports whether all agreed. A chart drawn from
// summaries alone would draw levels ×1000 or zeroed as they stand while the
// samples say 0.4 W; a check of the first plotCheckBytes catches a file
// whose summaries are wrong throughout, at a bounded cost.
func summariesAgree(open Opener) bool {
	src, err := open()
	if err != nil {
		return true // the passes report it
	}
	defer src.Close()
	// A source whose summaries are the data (another meter's file, drawn
	// from its own summary levels: capture/importer's overview) has no
	// samples beside them to check them against; nor one without an account.
	if d, ok := src.(interface{ SummariesAreTheData() bool }); ok && d.SummariesAreTheData() {
		return true
	}
	a, ok := src.(accounter)
	if !ok {
		return true
	}
	for {
		rec, err := src.Next()
		if err != nil || rec.Offset > plotCheckBytes {
			break
		}
	}
	return a.Account().Mismatches == 0
}

// errFiner: the summary levels an index lists are all too coarse for the
// chart asked for; the scan reads the finer ones.
var errFiner = errors.New("the indexed summary levels are too coarse for this chart")

// errCoarse comes with plotSummaries' traces when even the finest level
// gives a chart point fewer than two summary points: the samples are drawn
// instead, these only when the samples give no point.
var errCoarse = errors.New("the summary levels are too coarse for this chart")

// hasPoints reports whether any trace has a power point.
func hasPoints(traces []series.Trace) bool {
	for _, tr := range traces {
		if tr.Power.Len() > 0 {
			return true
		}
	}
	return false
}

// indexedOverview runs PlotTraces' first pass and summary pass through the
// capture's index. It returns a nil pass when the capture has no usable
// index or the chart needs finer levels than it lists (PlotTraces then
// scans), with a note when an index was there but damaged.
func indexedOverview(open Opener, opts Options, o PlotOptions) (*pass1, []series.Trace, string) {
	// Each pass seeks to the chunks it reads: the first pass to the
	// records, the summary pass to the summary levels.
	idx := func(k capture.IndexKinds) Opener {
		return func() (Source, error) {
			src, err := open()
			if err != nil {
				return nil, err
			}
			u, ok := src.(interface {
				UseIndexOf(capture.IndexKinds) error
			})
			if !ok {
				src.Close()
				return nil, capture.ErrNoIndex
			}
			if err := u.UseIndexOf(k); err != nil {
				src.Close()
				return nil, err
			}
			return src, nil
		}
	}
	note := func(err error) string {
		if errors.Is(err, capture.ErrIndex) {
			return fmt.Sprintf("%v; read the whole capture instead", err)
		}
		return ""
	}
	p1, err := firstPass(idx(capture.IndexRecords), opts, nil)
	if err != nil {
		return nil, nil, note(err)
	}
	traces, err := plotSummaries(idx(capture.IndexSummaries), p1, o, true)
	if err != nil || traces == nil {
		return nil, nil, note(err)
	}
	return p1, traces, ""
}

// plotSummaries builds traces from summary records; nil if there are none.
// indexed: the source reads through the capture's index, and a chart that
// needs a finer level than it lists is errFiner; without an index, traces
// of a level too coarse for the chart come with errCoarse.
func plotSummaries(open Opener, p *pass1, o PlotOptions, indexed bool) ([]series.Trace, error) {
	src, err := open()
	if err != nil {
		return nil, err
	}
	defer src.Close()
	if s, ok := src.(interface{ SkipSamples(bool) }); ok {
		s.SkipSamples(true)
	}
	h := p.hdr
	clock := p.fitter.Fit(h.StartHost)
	sl := &summaryLevels{o: o, clock: &clock, t0: clock.HostF(0), drive: map[int]int{}, rails: map[int]int{}, lvls: map[uint32]*summaryLevel{}}
	ports, _, err := drivePorts(h, o.Ports)
	if err != nil {
		return nil, err
	}
	for _, port := range ports {
		sl.drive[port] = len(sl.ports)
		sl.ports = append(sl.ports, port)
	}
	for _, c := range h.Channels {
		sl.rails[c.Port]++
	}
	found := false
	for {
		rec, err := src.Next()
		if err != nil {
			if errors.Is(err, capture.ErrIndex) {
				return nil, err
			}
			break
		}
		if rec.Kind != capture.KindSummary || rec.Summary == nil {
			continue
		}
		s := rec.Summary
		if s.Channel < 0 || s.Channel >= len(h.Channels) || s.Per == 0 {
			continue
		}
		if _, drawn := sl.drive[h.Channels[s.Channel].Port]; !drawn {
			continue
		}
		found = true
		if err := sl.add(s, h.Channels[s.Channel].Port); err != nil {
			return nil, err
		}
	}
	if !found {
		return nil, nil
	}
	lv := sl.pick(h.RateHz)
	// The pick fits (two summary points per chart point), or no level is
	// fine enough: then the samples are drawn (a format 1 capture's only
	// level is 1000 samples wide: a 6 s capture at 100 S/s was drawn as
	// one point at 5 s), and an index that lacks the finer levels a scan
	// would find says so.
	span := lv.hi - min(lv.lo, lv.hi)
	if o.To > o.From {
		span = uint64(h.RateHz.Samples(o.To - o.From))
	}
	for per, l := range sl.lvls {
		if l == lv && uint64(per)*2*uint64(o.Buckets) > span {
			if indexed {
				return nil, errFiner
			}
			return sl.traces(p, lv.decs), errCoarse
		}
	}
	return sl.traces(p, lv.decs), nil
}

// summaryLevels pairs the rails' summary windows into drive power, per
// summary level. A format 2 capture holds several levels
// (capture.Summary): each level gets its own decimators, and the chart
// uses one level — the coarsest that still gives every chart point two
// summary points.
type summaryLevels struct {
	o     PlotOptions
	clock *Clock
	t0    float64     // host ns of meter index 0
	ports []int       // drive ports, in channel order
	drive map[int]int // port → trace index
	rails map[int]int // port → rails
	lvls  map[uint32]*summaryLevel
}

type summaryLevel struct {
	decs   []*decimate.Decimator     // by trace
	pend   []map[uint64]*summaryPart // by trace: windows some rails are still missing from
	lo, hi uint64                    // sample indices covered
}

// summaryPart is a window of a drive's summed rails.
type summaryPart struct {
	n            int // rails summed
	lo, hi, mean float64
	per          uint32
}

func (sl *summaryLevels) get(per uint32) *summaryLevel {
	if l := sl.lvls[per]; l != nil {
		return l
	}
	l := &summaryLevel{decs: make([]*decimate.Decimator, len(sl.ports)), pend: make([]map[uint64]*summaryPart, len(sl.ports)), lo: math.MaxUint64}
	for i := range l.decs {
		do := decimate.Options{Buckets: sl.o.Buckets, InitialWidth: 1e-3}
		if sl.o.To > sl.o.From {
			do.Start, do.Span = float64(sl.o.From), float64(sl.o.To-sl.o.From)
		}
		l.decs[i], _ = decimate.New(do)
		l.pend[i] = map[uint64]*summaryPart{}
	}
	sl.lvls[per] = l
	return l
}

// add takes one rail's summary; a window all of a drive's rails have
// reached goes to the level's decimator.
func (sl *summaryLevels) add(s *capture.Summary, port int) error {
	di := sl.drive[port]
	n := min(len(s.MinW), len(s.MaxW), len(s.MeanW))
	lv := sl.get(s.Per)
	decs, pend := lv.decs, lv.pend
	if n > 0 {
		lv.lo = min(lv.lo, s.Start)
		lv.hi = max(lv.hi, s.Start+uint64(n)*uint64(s.Per))
	}
	for k := 0; k < n; k++ {
		idx := s.Start + uint64(k)*uint64(s.Per)
		pt := pend[di][idx]
		if pt == nil {
			pt = &summaryPart{per: s.Per}
			pend[di][idx] = pt
		}
		// Rails sum exactly in the mean; the sum of rail minima (maxima)
		// bounds the drive's minimum (maximum) from below (above).
		pt.n++
		pt.lo += float64(s.MinW[k])
		pt.hi += float64(s.MaxW[k])
		pt.mean += float64(s.MeanW[k])
		if pt.n == sl.rails[port] {
			t := (sl.clock.HostF(float64(idx)+float64(pt.per)/2) - sl.t0) / 1e9
			decs[di].AddSummary(t, pt.lo, pt.hi, pt.mean, int(pt.per))
			delete(pend[di], idx)
		}
	}
	for _, m := range pend {
		if len(m) > 1<<16 {
			return errors.New("capture summaries of one drive's rails are too far apart to pair")
		}
	}
	return nil
}

// pick chooses the level to draw: the coarsest that still gives every
// chart point two summary points over the span drawn, else the finest.
func (sl *summaryLevels) pick(rate units.Hertz) *summaryLevel {
	o := sl.o
	var pick uint32
	for per, l := range sl.lvls {
		span := l.hi - min(l.lo, l.hi)
		if o.To > o.From {
			span = uint64(rate.Samples(o.To - o.From))
		}
		fits := uint64(per)*2*uint64(o.Buckets) <= span
		switch {
		case pick == 0:
			pick = per
		case fits && (per > pick || uint64(pick)*2*uint64(o.Buckets) > span):
			pick = per
		case !fits && uint64(pick)*2*uint64(o.Buckets) > span && per < pick:
			pick = per
		}
	}
	return sl.lvls[pick]
}

// traces names each drive's envelope and adds its busy intervals, merged
// where closer than a bucket.
func (sl *summaryLevels) traces(p *pass1, decs []*decimate.Decimator) []series.Trace {
	names := map[int]string{}
	for _, d := range p.hdr.Drives {
		names[d.Port] = d.Name
	}
	traces := make([]series.Trace, len(sl.ports))
	for i, port := range sl.ports {
		name := names[port]
		if name == "" {
			name = fmt.Sprintf("port %d", port)
		}
		traces[i] = series.Trace{Name: name, Power: decs[i].Envelope()}
		if ss := p.busy[port]; ss != nil {
			w := math.Max(decs[i].Width(), 1e-3)
			for _, sp := range ss.spans {
				a, b := (float64(sp.s)-sl.t0)/1e9, (float64(sp.e)-sl.t0)/1e9
				if n := len(traces[i].IO); n > 0 && a-traces[i].IO[n-1].End < w {
					traces[i].IO[n-1].End = b
					continue
				}
				traces[i].IO = append(traces[i].IO, series.Interval{Start: a, End: b})
			}
		}
	}
	return traces
}
