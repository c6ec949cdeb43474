package scpi

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// arrayState is the array mode as set up at open.
type arrayState struct {
	points int
	tint   float64 // s, as the instrument read it back
	v      float64 // the rail's voltage for every sample of the stream
	buf    []byte  // reply buffer, reused per fetch
	vals   []float64
	volts  []units.Volts
	amps   []units.Amps
}

// expand fills a template's {ch}, {tint} and {points}.
func expand(tmpl string, ch int, tint float64, points int) string {
	return strings.NewReplacer("{ch}", strconv.Itoa(ch), "{tint}", strconv.FormatFloat(tint, 'g', -1, 64),
		"{points}", strconv.Itoa(points)).Replace(tmpl)
}

// mergeArray lays o's non-empty fields over a.
func mergeArray(a, o ArrayMode) ArrayMode {
	if o.Setup != nil {
		a.Setup = o.Setup
	}
	if o.Arm != nil {
		a.Arm = o.Arm
	}
	for _, p := range []struct {
		dst *string
		src string
	}{{&a.Interval, o.Interval}, {&a.Fetch, o.Fetch}, {&a.Binary, o.Binary}, {&a.ASCII, o.ASCII}} {
		if p.src != "" {
			*p.dst = p.src
		}
	}
	if o.Points > 0 {
		a.Points = o.Points
	}
	if o.MaxPoints > 0 {
		a.MaxPoints = o.MaxPoints
	}
	if o.Tint > 0 {
		a.Tint = o.Tint
	}
	if o.MinTint > 0 {
		a.MinTint = o.MinTint
	}
	return a
}

// setupArray validates the array options against the family, sends the
// reply format and Setup (each checked against the error queue), reads the
// interval back, and settles the rail voltage.
func (in *Instrument) setupArray() error {
	a := in.fam.Array
	if a.Fetch == "" {
		return fmt.Errorf("scpi: family %s: array mode: %w (no buffered acquisition known; poll instead)", in.fam.Name, meter.ErrUnsupported)
	}
	points := in.opts.ArrayPoints
	if points == 0 {
		points = a.Points
	}
	tint := in.opts.ArrayInterval.Seconds()
	if tint == 0 {
		tint = a.Tint
	}
	switch {
	case points < 1 || points > a.MaxPoints:
		return fmt.Errorf("scpi: family %s: %d array points: %w (1–%d)", in.fam.Name, points, meter.ErrUnsupported, a.MaxPoints)
	case tint < a.MinTint || tint > 1:
		return fmt.Errorf("scpi: family %s: array interval %gs: %w (%gs–1s)", in.fam.Name, tint, meter.ErrUnsupported, a.MinTint)
	}
	format := a.ASCII
	if in.opts.ArrayBinary {
		if a.Binary == "" {
			return fmt.Errorf("scpi: family %s: binary arrays: %w (ASCII only)", in.fam.Name, meter.ErrUnsupported)
		}
		format = a.Binary
	}
	ch := in.opts.Channel
	cmds := append([]string{}, a.Setup...)
	if format != "" {
		cmds = append([]string{format}, cmds...)
	}
	for _, c := range cmds {
		if err := in.Command(expand(c, ch, tint, points)); err != nil {
			return err
		}
	}
	if a.Interval != "" {
		q := expand(a.Interval, ch, tint, points)
		r, err := in.Query(q)
		if err != nil {
			return fmt.Errorf("scpi: %q: %w", q, err)
		}
		got, err := ParseReading(r)
		if err != nil || got <= 0 || got > 2*tint+1e-3 {
			return fmt.Errorf("scpi: %q: interval %q read back for %gs asked: %w", q, trunc(r), tint, meter.ErrProtocol)
		}
		tint = got
	}
	st := &arrayState{points: points, tint: tint, v: float64(in.opts.Voltage)}
	if st.v <= 0 && in.fam.MeasVolt != "" {
		// The rail is regulated: one reading serves the stream, and a
		// voltage query per array would lengthen every dead time.
		v, _, _, err := in.measure(in.fam.MeasVolt)
		if err != nil {
			return err
		}
		if err := checkRail(v, fmt.Sprintf("%q read", in.fam.MeasVolt)); err != nil {
			return err
		}
		st.v = v
	}
	in.arr = st
	return nil
}

// fetch arms and fetches one array into in.arr.vals. t is the host time
// just before the first command (the acquisition's start, give or take a
// latency every array shares); recv when the reply was decoded.
func (in *Instrument) fetch() (t, recv hostclock.Time, err error) {
	st, a, ch := in.arr, in.fam.Array, in.opts.Channel
	t = hostclock.Now()
	for _, c := range a.Arm {
		if err := in.Send(expand(c, ch, st.tint, st.points)); err != nil {
			return t, t, err
		}
	}
	q := expand(a.Fetch, ch, st.tint, st.points)
	if err := in.Send(q); err != nil {
		return t, t, err
	}
	// The instrument answers after acquiring: allow for it and the
	// transfer (about 16 bytes a reading in ASCII) on top of the timeout.
	wait := in.opts.Timeout + time.Duration(float64(st.points)*st.tint*float64(time.Second))
	if d, ok := in.rw.(deadliner); ok {
		_ = d.SetReadDeadline(time.Now().Add(wait))
		defer d.SetReadDeadline(time.Time{})
	}
	in.skipNL()
	var reply []byte
	reply, in.owedNL, err = readArrayReply(in.br, st.buf, 32*st.points+64)
	st.buf = reply[:0]
	recv = hostclock.Now()
	if err != nil {
		if qerr := in.CheckErrors(); qerr != nil {
			return t, recv, fmt.Errorf("scpi: %q: %w", q, qerr)
		}
		return t, recv, fmt.Errorf("scpi: %q: %w", q, noReply(err, wait))
	}
	if st.vals, err = ParseArray(st.vals, reply); err != nil {
		return t, recv, fmt.Errorf("%q: %w", q, err)
	}
	if len(st.vals) != st.points {
		return t, recv, fmt.Errorf("scpi: %q: %d readings, want %d: %w", q, len(st.vals), st.points, meter.ErrProtocol)
	}
	return t, recv, nil
}

// streamArray fetches arrays back to back until ctx is done. Array j's
// first sample index is the host time since array 0's start over the
// interval, rounded: the instrument's dead time while the host fetches is
// one "fetch" gap of exactly the periods between the arrays, never
// filled. Over-range readings are one-sample gaps; a failed fetch is a gap
// of a whole array (three in a row end the stream).
func (in *Instrument) streamArray(ctx context.Context, sink meter.Sink) error {
	st := in.arr
	n := uint64(st.points)
	var (
		t0       hostclock.Time
		next     uint64 // first index after the previous array
		fails    int
		lastMark hostclock.Time
		markID   uint32
	)
	for j := 0; ctx.Err() == nil; j++ {
		t, recv, err := in.fetch()
		if j == 0 {
			t0 = t
		}
		start := max(next, uint64(math.Round(float64(t-t0)/1e9/st.tint)))
		if start > next {
			in.tally(0, start-next)
			if err := sink.Gap(meter.Gap{Start: next, Count: start - next, Reason: "fetch"}); err != nil {
				return err
			}
		}
		next = start + n
		if err != nil {
			in.tally(0, n)
			if fails++; fails >= 3 {
				return err
			}
			if err := sink.Gap(meter.Gap{Start: start, Count: n, Reason: trunc(err.Error())}); err != nil {
				return err
			}
			continue
		}
		fails = 0
		if err := in.emitArray(start, sink); err != nil {
			return err
		}
		if markID == 0 || recv.Sub(lastMark) >= markEvery {
			markID++
			lastMark = recv
			// Sample start was taken after t and before the rest of the
			// array and its transfer.
			first := max(t, recv-hostclock.Time(float64(n)*st.tint*1e9))
			if err := sink.Mark(meter.MarkEcho{ID: markID, HostSent: t, HostRecv: first, MeterIndex: start, Synthetic: true}); err != nil {
				return err
			}
		}
	}
	return nil
}

// emitArray sends in.arr.vals from index start as blocks of the valid
// runs, with a one-sample "over-range" gap for each NaN.
func (in *Instrument) emitArray(start uint64, sink meter.Sink) error {
	st := in.arr
	st.amps, st.volts = st.amps[:0], st.volts[:0]
	runStart := start
	flush := func() error {
		if len(st.amps) == 0 {
			return nil
		}
		in.tally(uint64(len(st.amps)), 0)
		err := sink.Samples(&meter.Block{Start: runStart, V: st.volts, I: st.amps})
		st.amps, st.volts = st.amps[:0], st.volts[:0]
		return err
	}
	for k, x := range st.vals {
		if math.IsNaN(x) || plausible(x, st.v) != nil {
			if err := flush(); err != nil {
				return err
			}
			in.tally(0, 1)
			if err := sink.Gap(meter.Gap{Start: start + uint64(k), Count: 1, Reason: "over-range"}); err != nil {
				return err
			}
			runStart = start + uint64(k) + 1
			continue
		}
		st.amps = append(st.amps, units.Amps(x))
		st.volts = append(st.volts, units.Volts(st.v))
	}
	return flush()
}
