package analysis

import (
	"errors"
	"fmt"
	"github.com/idlewatt/idlewatt/internal/stat"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/analysis/decimate"
	"github.com/idlewatt/idlewatt/analysis/judge"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// Options control Analyze. Start from DefaultOptions: Settle and MergeGap
// are taken literally, so a zero means zero.
type Options struct {
	// Settle is how long after a busy interval samples count as the settle
	// tail rather than idle (default 500 ms).
	Settle time.Duration
	// MergeGap merges busy intervals separated by less than this (default
	// 1 ms): a drive does not come to rest between back-to-back I/Os, and
	// merging keeps the interval list small.
	MergeGap time.Duration
	// Ports restricts the report to these drive ports; a port the capture
	// lacks is an error (ErrNoSuchPort). Empty = every port.
	Ports []int
	// MarkWindow is the window per which the lowest-round-trip mark is kept
	// (default 5 s).
	MarkWindow time.Duration
	// DevSlpAllowance is how long after a DEVSLP assert pin-asserted power is
	// left out of devslp.power_w when no classifier says when the floor was
	// reached (default 100 ms).
	DevSlpAllowance time.Duration
	// ChartBuckets is the number of envelope points per drive kept for
	// charts (default 2000).
	ChartBuckets int
	// ChartFrom and ChartTo (s from meter index 0) fix the chart envelope's
	// time range when ChartTo > ChartFrom; by default it covers everything.
	ChartFrom, ChartTo units.Seconds
	// MaxSkew is how far (in time) one rail of a drive may run ahead of
	// another before the lagging rail's samples are given up as missing
	// (default 10 s).
	MaxSkew time.Duration
	// MaxDriftPPM is the clock drift beyond which the fitted rate is refused
	// and the nominal rate used (default DefaultMaxDriftPPM, 1000 ppm).
	MaxDriftPPM float64
	// NewClassifier makes the per-drive state classifier; nil = residency
	// from I/O segmentation only. States, when set, supplies it.
	NewClassifier ClassifierFactory
	// States turns on interface-state detection (Report.States,
	// states.json): each SATA drive's levels are learned from the capture
	// (its quiet power, I/O, policy and DEVSLP pin events) in a pass of
	// their own, and the drive classified against them in the sample pass.
	States *StateOptions
	// Samples, if set, sees every sample of the second pass (see
	// SampleSink); report/html builds its viewer data from it.
	Samples SampleSink
	// Window, if set, restricts the report to an interval of the capture
	// (interval.go); Report.Interval says so.
	Window *Window

	// recordsSeen: the sink's RecordSink has had the whole capture's
	// first pass already (windowed's inner analysis, whose first pass is
	// the window's).
	recordsSeen bool

	// serial keeps every drive's work of the reads of the samples on the
	// goroutine that hands it over (learnRuns, drivePool): the tests'
	// reference for what the drives' workers compute.
	serial bool
}

// DefaultOptions returns the documented defaults.
func DefaultOptions() Options {
	return Options{
		Settle:          500 * time.Millisecond,
		MergeGap:        time.Millisecond,
		MarkWindow:      5 * time.Second,
		DevSlpAllowance: 100 * time.Millisecond,
		ChartBuckets:    2000,
		MaxSkew:         10 * time.Second,
		MaxDriftPPM:     DefaultMaxDriftPPM,
	}
}

// maxPending is how many samples one rail may run ahead of another before
// the lagging rail is given up on: MaxSkew at the rate, but never less than
// two whole chunks as the capture Writer writes them. Without that floor a
// capture recorded from a byte stream (one 65,536-sample chunk per channel,
// channel after channel) lost all but MaxSkew of every chunk at rates under
// 6.5 kS/s as "late" samples: 50 of 60 s at 1 kS/s.
func maxPending(skew time.Duration, rate units.Hertz) int {
	n := rate.Samples(units.SecondsOf(skew))
	if floor := float64(2 * capture.MaxChunkSamples); !(n >= floor) {
		n = floor
	}
	if n > 1<<30 {
		n = 1 << 30
	}
	return int(n)
}

// Source is a capture being read; *capture.Reader implements it.
type Source interface {
	Header() capture.Header
	Next() (capture.Record, error)
	Complete() bool
	Close() error
}

// Opener opens a Source from its start; Analyze calls it once per pass.
type Opener func() (Source, error)

// Errors callers branch on.
var (
	// ErrNoSuchPort: Options.Ports names a port the capture has no channel for.
	ErrNoSuchPort = errors.New("no such drive port in the capture")
	// ErrNoChannels: the capture header lists no channels.
	ErrNoChannels = errors.New("capture has no channels")
	// ErrOptions: an option is out of range.
	ErrOptions = errors.New("invalid analysis option")
)

// Analyze reads the capture at path and computes the report.
func Analyze(path string, opts Options) (*Report, error) {
	r, err := AnalyzeSource(func() (Source, error) { return capture.Open(path) }, opts)
	if r != nil {
		r.Capture.Path = path
	}
	return r, err
}

// pass1 holds what the first pass keeps.
type pass1 struct {
	hdr        capture.Header
	fitter     *ClockFitter
	busy       map[int]*spanSet
	phases     phaseSet
	hostPins   map[int][]pinEvent
	meterPins  map[int][]pinEvent  // t = meter index until converted
	policies   []policyEvent       // ALPM policies set (level learning's context)
	expect     map[int]Expectation // declared figures by port (NoteExpect)
	runNotes   []string            // the measuring run's notes (NoteRun)
	first      []uint64
	last       []uint64
	seen       []bool
	info       CaptureInfo
	stopAt     int // records read before the stream ended
	singlePort int
	devslp     devslpInfo
	// imported: host notes of an imported meter file (NoteImported), said
	// again in the report.
	imported []string
	stats    meter.Stats // the last link counters recorded
	// How the first pass's reading ended (the second pass's is the
	// report's; plot uses these).
	endErr    string
	endOffset int64
	complete  bool
	acc       *capture.Account
}

type pinEvent struct {
	t        int64
	asserted bool
}

// AnalyzeSource is Analyze over any Source.
func AnalyzeSource(open Opener, opts Options) (*Report, error) {
	if opts.Window != nil {
		return windowed(open, opts)
	}
	if opts.Settle < 0 || opts.MergeGap < 0 {
		return nil, fmt.Errorf("%w: settle %v and merge gap %v must not be negative", ErrOptions, opts.Settle, opts.MergeGap)
	}
	def := DefaultOptions()
	if opts.MarkWindow <= 0 {
		opts.MarkWindow = def.MarkWindow
	}
	if opts.ChartBuckets <= 0 {
		opts.ChartBuckets = def.ChartBuckets
	}
	if opts.MaxSkew <= 0 {
		opts.MaxSkew = def.MaxSkew
	}
	if opts.DevSlpAllowance < 0 {
		opts.DevSlpAllowance = 0
	}
	if math.IsNaN(opts.MaxDriftPPM) || opts.MaxDriftPPM < 0 {
		return nil, fmt.Errorf("%w: max drift %v ppm must not be negative", ErrOptions, opts.MaxDriftPPM)
	}
	if opts.MaxDriftPPM == 0 {
		opts.MaxDriftPPM = def.MaxDriftPPM
	}
	var sd *stateDetector
	if opts.States != nil {
		sd = newStateDetector()
		opts.NewClassifier = func(d capture.DriveInfo, rate units.Hertz) StateClassifier {
			if rate <= 0 {
				return nil
			}
			return sd.classifier(d, rate)
		}
	}
	p1, err := firstPass(open, opts, recordSink(opts))
	if err != nil {
		return nil, err
	}
	clock := p1.fitter.Fit(p1.hdr.StartHost)
	var hum map[int]*humModel
	var poles map[int]*sensorPole
	if sd != nil {
		hum, poles, err = sd.learnHumLevels(open, p1, &clock, opts)
	} else {
		hum, poles, err = learnHum(open, p1, &clock, opts.Ports, opts.serial)
	}
	if err != nil {
		return nil, err
	}
	return secondPass(open, opts, p1, sd, clock, hum, poles)
}

// firstPass reads the capture's records but its samples; rs, if not nil,
// is handed each of them and the header at the end.
func firstPass(open Opener, opts Options, rs RecordSink) (*pass1, error) {
	src, err := open()
	if err != nil {
		return nil, err
	}
	defer src.Close()
	h := src.Header()
	if len(h.Channels) == 0 {
		return nil, ErrNoChannels
	}
	if !(h.RateHz > 0) || math.IsInf(float64(h.RateHz), 0) {
		return nil, fmt.Errorf("capture header: sample rate %g Hz is not positive", float64(h.RateHz))
	}
	p := &pass1{
		hdr:       h,
		fitter:    NewClockFitter(h.RateHz, opts.MarkWindow, 4096),
		busy:      map[int]*spanSet{},
		hostPins:  map[int][]pinEvent{},
		meterPins: map[int][]pinEvent{},
		expect:    map[int]Expectation{},
	}
	p.devslp.init()
	if opts.MaxDriftPPM > 0 {
		p.fitter.MaxDriftPPM = opts.MaxDriftPPM
	}
	p.info = CaptureInfo{Created: h.Created, Tool: h.Tool, MeterKind: h.Meter.Kind, MeterModel: h.Meter.Model,
		RateHz: h.RateHz, Channels: len(h.Channels), GapReasons: map[string]uint64{}}
	ports := map[int]bool{}
	for _, c := range h.Channels {
		ports[c.Port] = true
	}
	if len(ports) == 1 {
		p.singlePort = h.Channels[0].Port
	}
	// The first pass needs no samples; a capture.Reader can skip them
	// without decoding.
	if s, ok := src.(interface{ SkipSamples(bool) }); ok {
		s.SkipSamples(true)
	}
	for {
		rec, err := src.Next()
		if err != nil {
			if errors.Is(err, capture.ErrIndex) {
				return nil, err // an indexed overview falls back to a scan
			}
			if !errors.Is(err, io.EOF) {
				p.endErr = err.Error()
			}
			p.complete = src.Complete()
			if a, ok := src.(accounter); ok {
				acc := a.Account()
				p.acc = &acc
			}
			break
		}
		p.endOffset = rec.Offset
		if rs != nil {
			rs.FirstPassRecord(&rec)
		}
		p.take(&rec, opts)
	}
	for _, ss := range p.busy {
		ss.merge()
	}
	if rs != nil {
		rs.FirstPassDone(h)
	}
	return p, nil
}

// take is one record of the first pass (samples are skipped).
func (p *pass1) take(rec *capture.Record, opts Options) {
	switch rec.Kind {
	case capture.KindGap:
		p.info.GapReasons[rec.Gap.Reason] += rec.Gap.Count
	case capture.KindMark:
		p.fitter.Add(rec.Mark)
		p.info.Marks++
	case capture.KindEvent:
		p.info.MeterEvents++
		ev := rec.Event
		switch ev.Kind {
		case meter.EventDevSlp:
			p.meterPins[ev.Port] = append(p.meterPins[ev.Port], pinEvent{int64(ev.Index), ev.Value != 0})
		case meter.EventOverrun:
			if ev.Value > 0 {
				p.info.Overruns += uint64(ev.Value)
			}
		case meter.EventDisconnect:
			p.info.Disconnects++
		}
	case capture.KindIO:
		p.takeIO(rec.IO, opts)
	case capture.KindState:
		p.takeState(rec.State)
	case capture.KindStats:
		p.info.CRCErrors = rec.Stats.CRCErrors
		p.info.Resyncs = rec.Stats.Resyncs
		p.info.Recovered, p.info.Refused = nil, nil
		if rec.StatsCounters >= capture.StatsCountersRetx {
			rv, rf := rec.Stats.Recovered, rec.Stats.Refused
			p.info.Recovered, p.info.Refused = &rv, &rf
		}
		p.stats = rec.Stats
	}
}

// takeIO adds completed I/Os to their drives' busy spans.
func (p *pass1) takeIO(evs []capture.IOEvent, opts Options) {
	for _, e := range evs {
		p.info.IOEvents++
		port := p.ioPort(e.Port)
		if port < 0 {
			p.info.Unattributed++
			continue
		}
		ss := p.busy[port]
		if ss == nil {
			ss = &spanSet{gap: int64(opts.MergeGap)}
			p.busy[port] = ss
		}
		issue, complete := int64(e.Issue), int64(e.Complete)
		ss.add(issue, complete)
		p.devslp.ioEvent(port, e.Issue, e.Complete, e.Err)
	}
}

// takeState takes a host state event: a phase, a note, a DEVSLP request, a
// policy.
func (p *pass1) takeState(st capture.StateEvent) {
	p.info.StateEvents++
	host := int64(st.Host)
	switch st.Kind {
	case capture.StatePhase:
		p.phases.add(host, st.Port, st.Value)
		p.devslp.phase(st.Port, st.Value, host)
	case capture.StateNote:
		p.devslp.note(st.Port, st.Host, st.Value)
		if strings.HasPrefix(st.Value, NoteImported) {
			p.imported = append(p.imported, st.Value)
		}
		if e, ok := parseExpectation(st.Value); ok {
			p.expect[st.Port] = e
		}
		if n, ok := strings.CutPrefix(st.Value, NoteRun); ok {
			p.runNotes = append(p.runNotes, n)
		}
	case capture.StateDevSlpPin:
		p.hostPins[st.Port] = append(p.hostPins[st.Port], pinEvent{host, st.Value == "1"})
	case capture.StatePolicy:
		p.policies = append(p.policies, policyEvent{t: host, port: st.Port, policy: st.Value})
	}
}

// ioPort maps an I/O event's port to a drive port, or -1.
func (p *pass1) ioPort(port int) int {
	if port != 0 {
		return port
	}
	if p.singlePort != 0 {
		return p.singlePort
	}
	return -1
}

// pinSpans turns assert/deassert events into asserted spans on the host
// clock; a span still open at the end never closes.
func pinSpans(ev []pinEvent) []span {
	sort.SliceStable(ev, func(i, j int) bool { return ev[i].t < ev[j].t })
	var out []span
	open, at := false, int64(0)
	for _, e := range ev {
		switch {
		case e.asserted && !open:
			open, at = true, e.t
		case !e.asserted && open:
			open = false
			out = append(out, span{at, e.t})
		}
	}
	if open {
		out = append(out, span{at, math.MaxInt64 - 1})
	}
	return out
}

func secondPass(open Opener, opts Options, p *pass1, sd *stateDetector, clock Clock, hum map[int]*humModel, poles map[int]*sensorPole) (*Report, error) {
	h := p.hdr
	rep := newReport(p, &clock, opts)
	ports, rails, err := drivePorts(h, opts.Ports)
	if err != nil {
		return nil, err
	}
	names := map[int]capture.DriveInfo{}
	for _, d := range h.Drives {
		names[d.Port] = d
	}
	asm := &assembler{byChannel: make([]chanRef, len(h.Channels)), maxPending: maxPending(opts.MaxSkew, h.RateHz)}
	for i := range asm.byChannel {
		asm.byChannel[i] = chanRef{drive: -1}
	}
	// Time zero is meter index 0, the start of the stream.
	t0f := clock.HostF(0)
	for _, port := range ports {
		info, ok := names[port]
		if !ok {
			info = capture.DriveInfo{Port: port, Name: fmt.Sprintf("port %d", port)}
		}
		info.Port = port
		proc := p.newDrive(info, rails[port], &clock, t0f, opts)
		proc.unlearned = sd.unclassified(port)
		asm.add(proc)
		rep.Drives = append(rep.Drives, DriveReport{Name: info.Name, Port: port, Profile: info.Profile, Interface: info.Interface})
		if opts.States != nil && info.Interface == capture.InterfaceNVMe {
			rep.note(fmt.Sprintf("%s (port %d) is an NVMe drive: state detection (SATA link states) is not run on it, its residency is busy vs idle from I/O only; `idlewatt apst verify` checks NVMe power states", info.Name, port))
		}
		if proc.hum = hum[port]; proc.hum != nil {
			f := proc.hum.fit
			rep.Drives[len(rep.Drives)-1].Hum = &f
			rep.note(humNote(info.Name, f))
		}
		if proc.usePole(poles[port]); proc.pole != nil {
			rep.note(poleNote(info.Name, proc.pole, 1/float64(h.RateHz)))
		}
		rep.drivesProc = append(rep.drivesProc, proc)
	}

	if !opts.serial {
		asm.pool = startDrivePool(rep.drivesProc, opts.Samples)
	}
	neg, err := rep.readSamples(open, opts, p, asm, &clock, t0f)
	if err == nil {
		rep.drain(asm, h)
	}
	if asm.pool != nil {
		asm.pool.close()
	}
	if err != nil {
		return nil, err
	}
	driveOf := make([]string, len(h.Channels))
	for ch, ref := range asm.byChannel {
		if ref.drive >= 0 {
			driveOf[ch] = rep.Drives[ref.drive].Name
		}
	}
	for _, n := range append(meterStatsNotes(p.stats, p.info.GapReasons, h.RateHz), neg.notes(h, driveOf)...) {
		rep.note(n)
	}
	rep.finish(p, &clock, t0f, opts)
	if sd != nil {
		rep.States = sd.finishStates(p, &clock, rep.Drives)
		rep.applyStates()
	}
	rep.declare(p.expect)
	for _, n := range p.runNotes {
		rep.note(n)
	}
	return rep, nil
}

// newReport starts the report with what the first pass and the clock fit
// already know: the capture, the alignment and the settings.
func newReport(p *pass1, clock *Clock, opts Options) *Report {
	rep := &Report{Schema: Schema, Capture: p.info}
	rep.Alignment = AlignmentReport{Method: "marks", Marks: clock.Marks, MarksUsed: clock.Used, Synthetic: clock.Synthetic,
		DriftPPM: clock.DriftPPM, ResidualRMSMS: clock.ResidualMS.RMS, ResidualMaxMS: clock.ResidualMS.Max,
		MinRTTMS: clock.MinRTTMS, MedianRTTMS: clock.MedianRTTMS, ClockU95MS: clock.U95MS,
		Outliers: clock.Outliers, NegativeRTT: clock.NegativeRTT, DriftRefusedPPM: clock.DriftRefusedPPM, MaxDriftPPM: clock.MaxDriftPPM}
	rep.clockNotes(clock)
	rep.importedNotes(p)
	rep.Settings = Settings{SettleMS: units.Milliseconds(ms(opts.Settle)), MergeGapMS: units.Milliseconds(ms(opts.MergeGap)), IdleFloor: activeIdleMethod,
		Classifier: opts.NewClassifier != nil, HistogramRelErr: 1.0 / (1 << histSub)}
	return rep
}

// drivePorts lists the drives to analyse, in channel order of their first
// rail (or as only lists them), and each port's channels.
func drivePorts(h capture.Header, only []int) (ports []int, rails map[int][]int, err error) {
	rails = map[int][]int{}
	for i, c := range h.Channels {
		if _, ok := rails[c.Port]; !ok {
			ports = append(ports, c.Port)
		}
		rails[c.Port] = append(rails[c.Port], i)
	}
	if len(only) > 0 {
		for _, want := range only {
			if _, ok := rails[want]; !ok {
				return nil, nil, fmt.Errorf("%w: port %d (the capture has ports %v)", ErrNoSuchPort, want, ports)
			}
		}
		ports = nil
		for _, want := range only {
			if !slices.Contains(ports, want) { // a port named twice is one drive
				ports = append(ports, want)
			}
		}
	}
	return ports, rails, nil
}

// newDrive sets up the processor of one drive: its busy spans, DEVSLP pin
// spans, classifier, DevSlp cycles, rail calibrations and chart envelope.
func (p *pass1) newDrive(info capture.DriveInfo, chans []int, clock *Clock, t0f float64, opts Options) *driveProc {
	port := info.Port
	h := p.hdr
	var busy []span
	if ss := p.busy[port]; ss != nil {
		busy = ss.spans
	}
	pins, pinSrc := p.pinSpans(port, clock)
	var cls StateClassifier
	if opts.NewClassifier != nil {
		cls = opts.NewClassifier(info, h.RateHz)
		if sp, ok := cls.(pinSplitter); ok {
			sp.SplitAt(append(pinTimes(drivePins(p, clock, port)), hbaReleases(p, port)...))
		}
	}
	proc := newDriveProc(info, chans, clock, busy, int64(opts.Settle), pins, int64(opts.DevSlpAllowance), &p.phases, cls)
	proc.pinSource = pinSrc
	proc.setPolicies(p.policies)
	proc.ds = p.devslpProc(port, pins, clock)
	for _, ch := range chans {
		proc.lsb = append(proc.lsb, railOf(h.Channels[ch]))
	}
	// Every interval holds the readings' own step where it is coarser than
	// the LSB the capture states (withReadingStep): not the DevSlp block's
	// alone — the independent generator's seed 14, capture route: active
	// idle and average of quantised drives 6–90 µW off with intervals of
	// ±0.8–10 µW, against ±5–110 µW from the same readings as a CSV file.
	if rs, ok := cls.(interface{ ReadingStep() float64 }); ok && rs.ReadingStep() > stat.QuantStep(proc.lsb) {
		proc.lsb = withReadingStep(proc.lsb, rs.ReadingStep())
	}
	if proc.ds != nil {
		proc.ds.jo.Rails = proc.lsb // the floor's and pre-cycle level's intervals hold the meter's terms too
		if ls, ok := cls.(learnedSpread); ok {
			proc.ds.jo.LevelStepW = units.Watts(ls.LevelStep())
		}
	}
	proc.t0 = t0f
	proc.sink = opts.Samples
	do := decimate.Options{Buckets: opts.ChartBuckets, InitialWidth: 1e-3}
	if opts.ChartTo > opts.ChartFrom {
		do.Start, do.Span = float64(opts.ChartFrom), float64(opts.ChartTo-opts.ChartFrom)
	}
	proc.dec, _ = decimate.New(do)
	proc.decStart = do.Start
	return proc
}

// pinSpans gives a port's DEVSLP-asserted spans on the host clock, and
// where they came from: the meter's pin events if it saw any, else the
// host's (those for port 0 apply to every port).
func (p *pass1) pinSpans(port int, clock *Clock) ([]span, string) {
	if ev := p.meterPins[port]; len(ev) > 0 {
		conv := make([]pinEvent, len(ev))
		for i, e := range ev {
			conv[i] = pinEvent{int64(clock.Host(uint64(e.t))), e.asserted}
		}
		return pinSpans(conv), "meter"
	}
	if ev := p.hostPinEvents(port); len(ev) > 0 {
		return pinSpans(ev), "host"
	}
	return nil, ""
}

// hostPinEvents is a fresh copy of the host's pin events for port, with
// those for every port (port 0).
func (p *pass1) hostPinEvents(port int) []pinEvent {
	return append(append([]pinEvent(nil), p.hostPins[port]...), p.hostPins[0]...)
}

// devslpProc is the DevSlp cycle judge for a port, or nil if the port
// went through no DevSlp cycle.
func (p *pass1) devslpProc(port int, pins []span, clock *Clock) *devslpProc {
	hostSpans := pinSpans(p.hostPinEvents(port))
	cyc, unjudged := devslpCycles(&p.phases, port, pins, hostSpans, p.devslp.io[port], p.devslp.loose[port], p.devslp.stalls[port])
	if unjudged > 0 {
		p.runNotes = append(p.runNotes, fmt.Sprintf("port %d: %d DEVSLP pin assertions after the first %d are not judged (cycles found from the pin alone, without the rig's devslp-cycle phases, are judged up to %d)", port, unjudged, maxPinCycles, maxPinCycles))
	}
	if len(cyc) == 0 {
		return nil
	}
	cr, ok := p.devslp.criteria[port]
	if !ok {
		cr = judge.DefaultCriteria()
	}
	// A read's completion (host clock) against the pin the meter saw:
	// the clock fit's U95MS.
	// The worst host stall the canary recorded anywhere in the run, on any
	// port: what this host has shown it can add to a read's time.
	var worst float64
	for _, ss := range p.devslp.stalls {
		for _, s := range ss {
			worst = max(worst, s.ms)
		}
	}
	return &devslpProc{cycles: cyc, chartCycle: -1,
		jo: judge.JudgeOptions{Criteria: cr, ClockU95Ms: clock.U95MS, RunStallMs: units.Milliseconds(worst)}}
}

// readSamples is the second pass proper: it streams every record of the
// capture through the assembler into the drive processors, and returns
// the count of negative readings per channel.
func (rep *Report) readSamples(open Opener, opts Options, p *pass1, asm *assembler, clock *Clock, t0f float64) (negativeCounter, error) {
	h := p.hdr
	src, err := open()
	if err != nil {
		return nil, err
	}
	defer src.Close()
	procByPort := map[int]*driveProc{}
	for _, d := range rep.drivesProc {
		procByPort[d.info.Port] = d
	}
	want := make([]bool, len(h.Channels))
	for ch, ref := range asm.byChannel {
		want[ch] = ref.drive >= 0
	}
	var rail func(*meter.Block)
	if opts.Samples != nil {
		opts.Samples.Begin(*clock, t0f)
		rail = func(b *meter.Block) {
			opts.Samples.RailBlock((clock.HostF(float64(b.Start))-t0f)/1e9, clock.NsPerSample/1e9, b)
		}
	}
	f := startFeed(src, want, rail)
	asm.recycle = f.recycle
	neg := newNegativeCounter(len(h.Channels))
	rep.Capture.EndError = ""
	for b := range f.out {
		for _, it := range b.items {
			rep.take(asm, neg, procByPort, p, it)
		}
		if b.end {
			// The second pass reads sample chunks the first skipped, so its
			// stopping point is the authoritative one.
			if !errors.Is(b.err, io.EOF) {
				rep.Capture.EndError = b.err.Error()
			}
			rep.Capture.EndOffset = b.endOffset
			rep.Capture.Complete = b.complete
			rep.account = b.acc
			break
		}
		f.done(b)
	}
	return neg, nil
}

// take hands one record of the second pass to whoever needs it.
func (rep *Report) take(asm *assembler, neg negativeCounter, procByPort map[int]*driveProc, p *pass1, it feedItem) {
	switch it.kind {
	case capture.KindSamples:
		neg.add(it.ch, it.p)
		asm.block(it.ch, it.start, it.p)
	case capture.KindGap:
		if it.gap.Reason == GapInvalid {
			rep.Capture.invalid += it.gap.Count
			if ref := asm.byChannel[it.gap.Channel]; ref.drive >= 0 {
				asm.drives[ref.drive].proc.invalid += it.gap.Count
			}
		}
		asm.gap(it.gap)
	case capture.KindRejected:
		if ref := asm.byChannel[it.ch]; ref.drive >= 0 {
			d := asm.drives[ref.drive].proc
			d.rejected += uint64(it.n)
			d.rejectedW += it.sumW
			if it.why == capture.RejectRestart {
				d.restartW += it.sumW
			}
		}
	case capture.KindIO:
		for _, e := range it.io {
			if d := procByPort[p.ioPort(e.Port)]; d != nil {
				d.total.io.add(e)
				if pi := d.ph.phaseAt(int64(e.Issue)); pi >= 0 {
					d.phases[pi].io.add(e)
				}
			}
		}
	}
}

// drain flushes every drive's assembler queues at the end of the stream;
// a drive one of whose rails never had a sample gets a note instead.
func (rep *Report) drain(asm *assembler, h capture.Header) {
	for _, d := range asm.drives {
		if !d.started {
			for r, q := range d.rails {
				if !q.seen {
					rep.note(fmt.Sprintf("drive %q: channel %s has no samples, so the drive's power cannot be summed", d.proc.info.Name, h.Channels[d.proc.rails[r]].Name()))
				}
			}
			continue
		}
		asm.drain(d)
	}
}

// clockNotes says what the clock fit distrusted.
func (r *Report) clockNotes(c *Clock) {
	if c.NegativeRTT > 0 {
		r.dataNote(fmt.Sprintf("%d clock marks were received before they were sent (negative round trip): ignored", c.NegativeRTT))
	}
	if c.Outliers > 0 && c.Fitted {
		r.dataNote(fmt.Sprintf("%d of %d selected clock marks rejected as outliers: their midpoint lies further from the robust fit than their own round trip allows (a wrong meter index or host time); the clock is fitted through the other %d", c.Outliers, c.Outliers+c.Used, c.Used))
	}
	switch {
	case c.StartRejected:
		r.Alignment.Method = "header"
		r.dataNote(fmt.Sprintf("the only usable clock mark puts the first sample %.3f s from the header's start time (when streaming was requested; plausible: %.2f s before to %.0f s after): a wrong meter index or host time, with no other mark to outvote it — not used; meter time placed on the host clock from the header's start time and the nominal rate (offset is the stream start latency; drift uncorrected)", c.StartOffsetS, StartSlack/1e9, MaxStartLatency/1e9))
	case c.Disagree:
		r.Alignment.Method = "header"
		r.dataNote("the two clock marks disagree beyond their round trips and which one is wrong cannot be told: neither is used; meter time placed on the host clock from the header's start time and the nominal rate (offset is the stream start latency; drift uncorrected)")
	case !c.Fitted:
		r.Alignment.Method = "header"
		r.dataNote("no usable clock marks: meter time placed on the host clock from the header's start time and the nominal rate (offset is the stream start latency; drift uncorrected)")
	case c.StartOffsetS != 0 && c.DriftRefusedPPM != 0:
		// Not "marks that agree": they agreed on a drift that is refused
		// below; what is used is their median offset at the nominal rate.
		r.dataNote(fmt.Sprintf("the clock marks' median offset at the header's rate (the median of %d marks; their own fit's drift is refused, below) puts the first sample %.3f s from the header's start time (when streaming was requested): the header's start time or the meter's sample index is wrong; that offset is used", c.Used, c.StartOffsetS))
	case c.StartOffsetS != 0:
		r.dataNote(fmt.Sprintf("the clock fit (%d marks that agree) puts the first sample %.3f s from the header's start time (when streaming was requested): the header's start time or the meter's sample index is wrong; the marks are used", c.Used, c.StartOffsetS))
	}
	switch {
	case c.Fitted && c.DriftRefusedPPM != 0:
		r.Alignment.Method = "marks, nominal rate"
		r.dataNote(fmt.Sprintf("clock drift %.6g ppm refused: beyond the ±%g ppm two crystals can drift (docs/analysis.md); the marks or the header's rate %g Hz are wrong — the nominal rate is used and the offset is the marks' median (at that rate the %d marks lie up to %.6g ms from it), so durations and energy assume the header's rate", c.DriftRefusedPPM, c.MaxDriftPPM, c.RateHz, c.Used, c.ResidualMS.Max))
	}
}

// NoteImported starts the host notes `idlewatt import` writes into a
// capture made from another meter's file (capture/importer.NotePrefix):
// what that format cannot carry. The report repeats them.
const NoteImported = "import: "

// importedNotes repeats an imported capture's notes about its source file.
func (r *Report) importedNotes(p *pass1) {
	for _, n := range p.imported {
		r.dataNote(n)
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func (r *Report) note(s string) { r.Notes = append(r.Notes, s) }

// dataNote is a note about the data itself (damage, clock, early end),
// which plot prints too.
func (r *Report) dataNote(s string) {
	r.note(s)
	r.dataNotes = append(r.dataNotes, s)
}

// withReadingStep gives the first rail of known voltage the readings' own
// step (W) as its current LSB, the others none, when the readings move by
// more than the LSBs the capture states, so every interval holds the
// quantiser's bias: a meter whose
// file states a 1 nA LSB but whose readings are whole steps of 42 µA read
// floors 1–7 µW off with intervals of 0.1–0.4 µW (the independent
// generator's seed 13, capture route, five drives). The rails are copied;
// calibration kept.
func withReadingStep(rails []stat.Rail, step float64) []stat.Rail {
	if !(step > 0) {
		return rails
	}
	out := append([]stat.Rail(nil), rails...)
	set := false
	for i := range out {
		switch {
		case out[i].NominalV > 0 && !set:
			out[i].CurrentLSB, set = step/out[i].NominalV, true
		case out[i].NominalV > 0:
			out[i].CurrentLSB = 0
		}
	}
	return out
}
