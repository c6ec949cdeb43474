package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/files/jls"
	"github.com/idlewatt/idlewatt/units"
)

// Joulescope JLS v2 files (github.com/jetperch/jls; the Joulescope UI and
// pyjoulescope_driver's Record write them): per source (instrument), fixed-
// rate signals named "current" (A), "voltage" (V), "power" (W),
// "current_range", "gpi[0]"…"gpi[3]" and "trigger_in". The capture takes
// current and voltage of the first source that has a current signal, the
// general-purpose inputs and trigger_in as lines, and the wall-clock time
// of the first sample from the current signal's UTC track.
var jlsFormat = &Format{
	Name:   jlsName,
	Title:  "Joulescope JLS v2",
	Detect: func(head []byte) bool { return bytes.HasPrefix(head, jls.Identification[:]) },
	Open:   openJLS,
}

type jlsFile struct {
	rd      *jls.Reader
	cur     *jls.Signal
	volt    *jls.Signal // nil: Options.Voltage
	lines   []*jls.Signal
	iScale  float64
	vScale  float64
	o       Options
	info    Info
	notes   []string
	summary *jls.Signal // power, for overviews (Summaries)
}

func jlsErr(err error) error {
	var je *jls.Error
	if errors.As(err, &je) {
		return &ParseError{Format: jlsName, Offset: je.Offset, Reason: je.Reason}
	}
	return err
}

func unitScale(u, base string) (float64, bool) {
	switch strings.TrimSpace(u) {
	case base:
		return 1, true
	case "m" + base:
		return 1e-3, true
	case "u" + base, "µ" + base:
		return 1e-6, true
	}
	return 0, false
}

func openJLS(r io.ReaderAt, size int64, o Options) (File, error) {
	rd, err := jls.Open(r, size)
	if err != nil {
		return nil, jlsErr(err)
	}
	f := &jlsFile{rd: rd, o: o}
	src, others, err := f.pickCurrent()
	if err != nil {
		return nil, err
	}
	rate := float64(f.cur.SampleRate)
	notes, err := f.pickVoltage(src, rate)
	if err != nil {
		return nil, err
	}
	if o.Rate > 0 && float64(o.Rate) != rate {
		return nil, optErr("--rate %g: the file's current signal is %g S/s", float64(o.Rate), rate)
	}
	lineNames, unused, err := f.pickLines(src, rate)
	if err != nil {
		return nil, err
	}
	if len(unused) > 0 {
		notes = append(notes, "signals not used: "+strings.Join(unused, ", "))
	}
	if len(others) > 0 {
		notes = append(notes, fmt.Sprintf("sources not used (the capture takes the first with a current signal, %s): %s", src.Name, strings.Join(others, ", ")))
	}
	if len(lineNames) > 0 {
		notes = append(notes, fmt.Sprintf("digital signals %s kept as logic events", strings.Join(lineNames, ", ")))
	}
	notes = append(notes, fmt.Sprintf("JLS format %d.%d.%d, source %s (%s %s, serial %s): current %s at %g S/s; NaN samples (the instrument's dropped samples) are gaps; annotations and user data are not carried",
		rd.Version[0], rd.Version[1], rd.Version[2], src.Name, src.Vendor, src.Model, src.Serial, f.cur.Type(), rate))
	if rd.Length == 0 {
		notes = append(notes, "the file was not closed by its writer (header length 0): read up to its last intact chunk")
	}
	if err := f.describe(src, rate, lineNames); err != nil {
		return nil, err
	}
	f.info.Notes = notes
	return f, nil
}

// pickCurrent takes the current signal of the first source that has one
// (a float in A, mA or µA): that source, and the names of the others.
func (f *jlsFile) pickCurrent() (src jls.Source, others []string, err error) {
	rd := f.rd
	for _, s := range rd.Sources {
		if s.ID == 0 {
			continue // the writer's own, for global annotations
		}
		if c := rd.Signal(s.ID, "current"); c != nil && f.cur == nil {
			f.cur, src = c, s
		} else {
			others = append(others, s.Name)
		}
	}
	if f.cur == nil {
		var names []string
		for _, s := range rd.Signals {
			if s.ID != 0 {
				names = append(names, s.Name)
			}
		}
		return src, nil, &ParseError{Format: jlsName, Offset: 0, Reason: fmt.Sprintf("no source has a \"current\" signal (signals: %s)", strings.Join(names, ", "))}
	}
	if !f.cur.Float() {
		return src, nil, &ParseError{Format: jlsName, Offset: f.cur.Offset, Reason: fmt.Sprintf("current is %s, want f32 or f64", f.cur.Type())}
	}
	var ok bool
	if f.iScale, ok = unitScale(f.cur.Units, "A"); !ok {
		return src, nil, &ParseError{Format: jlsName, Offset: f.cur.Offset, Field: "current", Reason: fmt.Sprintf("units %q, want A", f.cur.Units)}
	}
	return src, others, nil
}

// pickVoltage takes src's voltage signal (a float at the current's rate,
// in V, mV or µV), or, without one, Options.Voltage; it notes which.
func (f *jlsFile) pickVoltage(src jls.Source, rate float64) (notes []string, err error) {
	o := f.o
	v := f.rd.Signal(src.ID, "voltage")
	if v == nil {
		if o.Voltage <= 0 || o.Voltage > maxVolts {
			return nil, optErr("this JLS file has no voltage signal: give the voltage the drive ran at (--voltage, 0 < V ≤ %d)", maxVolts)
		}
		return []string{fmt.Sprintf("the file has no voltage signal: every sample's voltage is the given %g V", float64(o.Voltage))}, nil
	}
	switch {
	case !v.Float():
		return nil, &ParseError{Format: jlsName, Offset: v.Offset, Field: "voltage", Reason: fmt.Sprintf("%s, want f32 or f64", v.Type())}
	case float64(v.SampleRate) != rate:
		return nil, &ParseError{Format: jlsName, Offset: v.Offset, Field: "voltage", Reason: fmt.Sprintf("%d S/s, current %g S/s: the capture needs both at one rate", v.SampleRate, rate)}
	}
	var ok bool
	if f.vScale, ok = unitScale(v.Units, "V"); !ok {
		return nil, &ParseError{Format: jlsName, Offset: v.Offset, Field: "voltage", Reason: fmt.Sprintf("units %q, want V", v.Units)}
	}
	f.volt = v
	if o.Voltage > 0 {
		notes = append(notes, fmt.Sprintf("--voltage %g V ignored: the file's voltage signal is used", float64(o.Voltage)))
	}
	return notes, nil
}

// pickLines takes src's digital signals at the current's rate as lines
// (sorted by name, at most 63) and the power signal for overviews: the
// lines' names, and what is not used.
func (f *jlsFile) pickLines(src jls.Source, rate float64) (lineNames, unused []string, err error) {
	for _, s := range f.rd.Signals {
		if s.SourceID != src.ID || s == f.cur || s == f.volt {
			continue
		}
		name := strings.ToLower(s.Name)
		switch {
		case (strings.HasPrefix(name, "gpi") || name == "trigger_in") && s.FSR && s.Readable() && !s.Float():
			if float64(s.SampleRate) != rate {
				unused = append(unused, fmt.Sprintf("%s (%d S/s, not the current's rate)", s.Name, s.SampleRate))
				continue
			}
			f.lines = append(f.lines, s)
		case name == "power":
			f.summary = s
			unused = append(unused, "power (the capture's power is V × I of the samples)")
		default:
			unused = append(unused, s.Name)
		}
	}
	sort.Slice(f.lines, func(a, b int) bool { return f.lines[a].Name < f.lines[b].Name })
	for _, l := range f.lines {
		lineNames = append(lineNames, l.Name)
	}
	if len(lineNames) > 63 {
		return nil, nil, &ParseError{Format: jlsName, Reason: fmt.Sprintf("%d digital signals, at most 63", len(lineNames))}
	}
	return lineNames, unused, nil
}

// describe fills f.info (notes aside): the channel and its rail, the
// meter, and the wall-clock time of the first sample from the current's
// UTC track.
func (f *jlsFile) describe(src jls.Source, rate float64, lineNames []string) error {
	port := f.o.Port
	if port == 0 {
		port = 1
	}
	rail := railFor(f.o.Voltage)
	if f.volt != nil {
		rail = f.measuredRail()
	}
	f.info = Info{
		Format:   jlsName,
		Channels: []meter.Channel{{Port: port, Rail: rail}},
		Rate:     units.Hertz(rate),
		Lines:    lineNames,
	}
	f.info.Meter = meter.Info{Kind: "joulescope", Model: strings.TrimSpace(src.Model + " (JLS file)"), Serial: src.Serial,
		Firmware: src.Version, Ports: 1, Channels: f.info.Channels, Rates: []units.Hertz{units.Hertz(rate)},
		MaxVoltage: 15, MaxCurrent: 3}
	if sid, t, ok, err := f.rd.UTC(f.cur); err != nil {
		return jlsErr(err)
	} else if ok {
		if first, err := f.firstSample(); err == nil {
			f.info.Start = t.Add(-secondsDur(float64(sid-first) / rate))
		}
	}
	return nil
}

// measuredRail names the rail from the voltage signal's first summary
// entries: within 5 % of 3.3, 5 or 12 V.
func (f *jlsFile) measuredRail() meter.Rail {
	s, err := f.rd.Summaries(f.volt, 1).Next()
	if err != nil || len(s.Mean) == 0 {
		return meter.RailOther
	}
	v := s.Mean[0] * f.vScale
	for _, r := range []struct {
		v    float64
		rail meter.Rail
	}{{3.3, meter.Rail3V3}, {5, meter.Rail5V}, {12, meter.Rail12V}} {
		if math.Abs(v-r.v) <= 0.05*r.v {
			return r.rail
		}
	}
	return meter.RailOther
}

func (f *jlsFile) firstSample() (int64, error) {
	start, ok, err := f.rd.FirstSampleID(f.cur)
	if err == nil && !ok {
		err = io.EOF
	}
	return start, err
}

func secondsDur(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

func (f *jlsFile) Info() Info      { return f.info }
func (f *jlsFile) Close() error    { return nil }
func (f *jlsFile) Notes() []string { return append(append([]string(nil), f.info.Notes...), f.notes...) }

// follower reads a signal alongside the current, by sample id.
type follower struct {
	it    *jls.FSR
	start int64
	vals  []float64
	eof   bool
}

// at returns the value at sample id sid, if the signal has one there.
func (fl *follower) at(sid int64) (float64, bool, error) {
	for !fl.eof && sid >= fl.start+int64(len(fl.vals)) {
		start, vals, err := fl.it.Next()
		if err == io.EOF {
			fl.eof = true
			break
		}
		if err != nil {
			return 0, false, err
		}
		fl.start, fl.vals = start, vals
	}
	if sid < fl.start || sid >= fl.start+int64(len(fl.vals)) {
		return 0, false, nil
	}
	return fl.vals[sid-fl.start], true, nil
}

// Replay implements File.
func (f *jlsFile) Replay(ctx context.Context, sink meter.Sink) error {
	f.notes = nil
	cur := f.rd.FSR(f.cur)
	rp := f.newReplay(sink)
	var base int64
	started := false
	var next uint64
	for runs := 0; ; runs++ {
		if err := context.Cause(ctx); err != nil {
			return err
		}
		start, vals, err := cur.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return jlsErr(err)
		}
		if !started {
			started, base = true, start
		}
		if idx := uint64(start - base); idx > next {
			if err := rp.addGap(next, idx-next, "missing"); err != nil {
				return err
			}
		}
		for j, i := range vals {
			sid := start + int64(j)
			idx := uint64(sid - base)
			if len(rp.lines) > 0 {
				if err := rp.logic(sid, idx); err != nil {
					return err
				}
			}
			if err := rp.sample(sid, idx, i); err != nil {
				return err
			}
		}
		next = uint64(start-base) + uint64(len(vals))
	}
	if err := rp.flushGap(); err != nil {
		return err
	}
	if err := rp.blk.flush(); err != nil {
		return err
	}
	f.replayNotes(cur.Cut, next, rp.gaps)
	return nil
}

// jlsReplay is one Replay's state: the voltage and the lines read beside
// the current, the lines' logic level, and the run of gap samples being
// gathered (one Gap for a run of one reason).
type jlsReplay struct {
	f         *jlsFile
	sink      meter.Sink
	blk       *blocker
	volt      *follower // nil: Options.Voltage
	lines     []*follower
	port      int
	level     int64 // -1 before the first event
	gapStart  uint64
	gapLen    uint64
	gapReason string
	gaps      map[string]uint64 // samples by gap reason, for the notes
}

func (f *jlsFile) newReplay(sink meter.Sink) *jlsReplay {
	rp := &jlsReplay{f: f, sink: sink, blk: newBlocker(sink, 0), port: f.info.Channels[0].Port, level: -1, gaps: map[string]uint64{}}
	if f.volt != nil {
		rp.volt = &follower{it: f.rd.FSR(f.volt)}
	}
	rp.lines = make([]*follower, len(f.lines))
	for k, l := range f.lines {
		rp.lines[k] = &follower{it: f.rd.FSR(l)}
	}
	return rp
}

// flushGap reports the gathered run of gap samples.
func (rp *jlsReplay) flushGap() error {
	if rp.gapLen == 0 {
		return nil
	}
	rp.gaps[rp.gapReason] += rp.gapLen
	err := rp.blk.gap(rp.gapStart, rp.gapLen, rp.gapReason)
	rp.gapLen = 0
	return err
}

// addGap adds n gap samples from idx for reason to the run, reporting the
// run before when they do not continue it.
func (rp *jlsReplay) addGap(idx uint64, n uint64, reason string) error {
	if rp.gapLen > 0 && (rp.gapReason != reason || rp.gapStart+rp.gapLen != idx) {
		if err := rp.flushGap(); err != nil {
			return err
		}
	}
	if rp.gapLen == 0 {
		rp.gapStart, rp.gapReason = idx, reason
	}
	rp.gapLen += n
	return nil
}

// logic reads the lines at sample id sid and sends a logic event when
// their level changed.
func (rp *jlsReplay) logic(sid int64, idx uint64) error {
	l := rp.level
	if l < 0 {
		l = 0
	}
	for k, fl := range rp.lines {
		x, ok, err := fl.at(sid)
		if err != nil {
			return jlsErr(err)
		}
		if ok {
			if x != 0 {
				l |= 1 << k
			} else {
				l &^= 1 << k
			}
		}
	}
	if l != rp.level {
		if err := rp.sink.Event(meter.Event{Kind: meter.EventLogic, Port: rp.port, Index: idx, Value: l}); err != nil {
			return err
		}
		rp.level = l
	}
	return nil
}

// sample takes the current i at sample id sid with its voltage: a sample,
// or a gap sample when the voltage is missing or either is not a number.
func (rp *jlsReplay) sample(sid int64, idx uint64, i float64) error {
	f := rp.f
	v := f.o.Voltage
	if rp.volt != nil {
		x, ok, err := rp.volt.at(sid)
		if err != nil {
			return jlsErr(err)
		}
		if !ok {
			return rp.addGap(idx, 1, "no-voltage")
		}
		v = units.Volts(x * f.vScale)
	}
	a := i * f.iScale
	if math.IsNaN(a) || math.IsNaN(float64(v)) || math.IsInf(a, 0) || math.IsInf(float64(v), 0) {
		return rp.addGap(idx, 1, "nan")
	}
	if math.Abs(a) > maxAmps || math.Abs(float64(v)) > maxVolts {
		return &ParseError{Format: jlsName, Reason: fmt.Sprintf("sample id %d: %g A, %g V is beyond ±%d A, ±%d V", sid, a, float64(v), maxAmps, maxVolts)}
	}
	if err := rp.flushGap(); err != nil {
		return err
	}
	return rp.blk.add(idx, v, units.Amps(a))
}

// replayNotes notes a file cut short (after next samples) and the gap
// samples by reason.
func (f *jlsFile) replayNotes(cut *jls.Error, next uint64, gaps map[string]uint64) {
	if cut != nil {
		f.notes = append(f.notes, fmt.Sprintf("the file ends before its writer finished (%s): the %d samples up to there are read, anything after is lost", cut.Reason, next))
	}
	var rs []string
	for r := range gaps {
		rs = append(rs, r)
	}
	sort.Strings(rs)
	for _, r := range rs {
		what := map[string]string{"nan": "NaN in the file (samples the instrument dropped)",
			"no-voltage": "current without a voltage sample", "missing": "sample ids the file has no data for"}[r]
		f.notes = append(f.notes, fmt.Sprintf("%d samples are gaps with reason %q: %s", gaps[r], r, what))
	}
}
