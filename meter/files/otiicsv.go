package files

import (
	"context"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// Otii 3 Desktop's CSV export (Qoitech Otii Arc / Ace). The one public
// example of its layout we found (docs/meters.md, fixtures/otii/README.md)
// is the header
//
//	"Wall-clock time (UTC)","Arc Main Current (A)","Arc Main Voltage (V)","Arc Main Energy (J)"
//
// : every field quoted, a time column first, then one column per channel
// named "<device> <channel> (<unit>)". This reader takes that pattern: the
// time column is the wall clock (UTC) or seconds from the recording's start
// ("Timestamp (s)", "Time (s)"); a current column is required, a voltage
// column of the same device is used when there is one (else
// Options.Voltage), digital inputs ("GPI1", "Digital in 1", unit-less or
// with 0/1 values) are lines; power, energy and every other column are
// named in a note and not used (power is V × I, energy its integral).
var otiiCSVFormat = &Format{
	Name:   otiiName,
	Title:  "Qoitech Otii CSV export",
	Detect: detectOtiiCSV,
	Open:   openOtiiCSV,
}

var (
	otiiTimeCol = regexp.MustCompile(`(?i)^(wall-clock time \(utc\)|timestamp \((s|ms)\)|time \((s|ms)\))$`)
	// "<device> <channel> (<unit>)": device and channel are free words.
	otiiValueCol = regexp.MustCompile(`^(.*?)\s*\(([^()]*)\)$`)
	otiiGPI      = regexp.MustCompile(`(?i)\b(gpi\s*\d+|digital\s+in(put)?\s*\d+|gpio\s*\d+)\b`)
)

// otiiCol is one classified column.
type otiiCol struct {
	name  string
	kind  byte    // 'i' current, 'v' voltage, 'd' digital, 0 unused
	scale float64 // to A or V
}

func otiiUnitScale(u string) (kind byte, scale float64) {
	switch strings.TrimSpace(u) {
	case "A":
		return 'i', 1
	case "mA":
		return 'i', 1e-3
	case "uA", "µA", "μA":
		return 'i', 1e-6
	case "nA":
		return 'i', 1e-9
	case "V":
		return 'v', 1
	case "mV":
		return 'v', 1e-3
	}
	return 0, 0
}

func classifyOtii(name string) otiiCol {
	c := otiiCol{name: name}
	if m := otiiGPI.FindString(name); m != "" {
		c.kind = 'd'
		return c
	}
	m := otiiValueCol.FindStringSubmatch(name)
	if m == nil {
		return c
	}
	lower := strings.ToLower(m[1])
	kind, scale := otiiUnitScale(m[2])
	switch {
	case kind == 'i' && strings.Contains(lower, "current"):
		c.kind, c.scale = 'i', scale
	case kind == 'v' && strings.Contains(lower, "voltage"):
		c.kind, c.scale = 'v', scale
	}
	return c
}

func detectOtiiCSV(head []byte) bool {
	l := headLines(head, 1)
	if len(l) == 0 {
		return false
	}
	c := &csvLines{text: l[0]}
	if c.split() != nil || len(c.fields) < 2 || !otiiTimeCol.MatchString(c.fields[0]) {
		return false
	}
	for _, f := range c.fields[1:] {
		if classifyOtii(f).kind == 'i' {
			return true
		}
	}
	return false
}

type otiiCSV struct {
	r      io.ReaderAt
	size   int64
	o      Options
	n      int // columns
	wall   bool
	tScale float64 // the time column to seconds
	cur    otiiCol
	curAt  int
	volt   otiiCol
	voltAt int     // -1: Options.Voltage
	digAt  []int   // columns of the lines, in Info.Lines order
	period float64 // s
	t0     float64 // s, the first row's time
	info   Info
	notes  []string
}

func openOtiiCSV(r io.ReaderAt, size int64, o Options) (File, error) {
	f := &otiiCSV{r: r, size: size, o: o, curAt: -1, voltAt: -1, tScale: 1}
	c := newCSVLines(otiiName, r, size)
	head, err := c.read()
	if err != nil {
		if err == io.EOF {
			return nil, &ParseError{Format: otiiName, Line: 1, Reason: "empty file"}
		}
		return nil, err
	}
	device, unused, err := f.columns(c, head)
	if err != nil {
		return nil, err
	}
	var notes []string
	if f.voltAt < 0 {
		if o.Voltage <= 0 || o.Voltage > maxVolts {
			return nil, optErr("this Otii export has no voltage column for %q: give the voltage the drive ran at (--voltage, 0 < V ≤ %d)", f.cur.name, maxVolts)
		}
		notes = append(notes, fmt.Sprintf("the export has no voltage column for %q: every sample's voltage is the given %g V", f.cur.name, float64(o.Voltage)))
	} else if o.Voltage > 0 {
		notes = append(notes, fmt.Sprintf("--voltage %g V ignored: the export's %q column is used", float64(o.Voltage), f.volt.name))
	}
	if len(unused) > 0 {
		notes = append(notes, fmt.Sprintf("columns not used: %s (power is V × I, energy its integral, both computed from the samples)", strings.Join(unused, ", ")))
	}
	rate, err := f.rate(c)
	if err != nil {
		return nil, err
	}
	what := "seconds from the recording's start"
	if f.wall {
		what = "the wall clock (UTC)"
	}
	notes = append(notes, fmt.Sprintf("sample rate %g S/s from the export's time column (%s); rows it leaves out are gaps", rate, what))
	if len(f.info.Lines) > 0 {
		notes = append(notes, fmt.Sprintf("digital lines %s kept as logic events", strings.Join(f.info.Lines, ", ")))
	}
	f.describe(device, rate)
	f.info.Notes = notes
	return f, nil
}

// columns reads the header: the time column and its unit, the current
// column (the first, a Main one before any other), the digital lines and
// the voltage column of the current's device. It returns that device and
// the columns not used.
func (f *otiiCSV) columns(c *csvLines, head []string) (device string, unused []string, err error) {
	f.n = len(head)
	if !otiiTimeCol.MatchString(head[0]) {
		return "", nil, c.errf("header", "the first column %q is not a time column (Wall-clock time (UTC), Timestamp (s))", head[0])
	}
	f.wall = strings.HasPrefix(strings.ToLower(head[0]), "wall")
	if strings.Contains(strings.ToLower(head[0]), "(ms)") {
		f.tScale = 1e-3
	}
	var cols []otiiCol
	for k, name := range head[1:] {
		col := classifyOtii(name)
		cols = append(cols, col)
		switch col.kind {
		case 'i':
			// The first current column, a Main one before any other.
			if f.curAt < 0 || (strings.Contains(strings.ToLower(name), "main") && !strings.Contains(strings.ToLower(f.cur.name), "main")) {
				if f.curAt >= 0 {
					unused = append(unused, f.cur.name)
				}
				f.cur, f.curAt = col, k+1
			} else {
				unused = append(unused, name)
			}
		case 'd':
			f.digAt = append(f.digAt, k+1)
			f.info.Lines = append(f.info.Lines, strings.TrimSpace(otiiGPI.FindString(name)))
		case 0:
			unused = append(unused, name)
		}
	}
	if f.curAt < 0 {
		return "", nil, c.errf("header", "no current column (a \"… Current (A)\" column) in %q", c.text)
	}
	device = otiiDevice(f.cur.name)
	for k, col := range cols {
		if col.kind == 'v' {
			if f.voltAt < 0 && otiiDevice(col.name) == device {
				f.volt, f.voltAt = col, k+1
			} else {
				unused = append(unused, col.name)
			}
		}
	}
	return device, unused, nil
}

// rate is the sample rate the time column of the first rows says (or
// Options.Rate when it cannot); it sets the period, the first row's time
// and, on the wall clock, the start.
func (f *otiiCSV) rate(c *csvLines) (float64, error) {
	o := f.o
	var ts []float64
	for len(ts) < 4096 {
		row, err := c.read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, err
		}
		if len(row) != f.n {
			return 0, c.errf("", "%d columns, the header has %d", len(row), f.n)
		}
		t, err := f.time(c, row[0])
		if err != nil {
			return 0, err
		}
		if len(ts) == 0 && f.wall {
			f.info.Start = wallTime(t)
		}
		ts = append(ts, t)
	}
	p, ok := inferPeriod(ts)
	if !ok {
		if o.Rate <= 0 {
			return 0, optErr("the export has fewer than two rows a time apart: give its sample rate (--rate)")
		}
		p = 1 / float64(o.Rate)
	}
	rate := snapRate(1 / p)
	if o.Rate > 0 && math.Abs(float64(o.Rate)-rate) > 1e-6*rate {
		return 0, optErr("--rate %g: the export's rows are %g S/s apart", float64(o.Rate), rate)
	}
	if rate < 1e-3 || rate > 1e7 {
		return 0, optErr("sample rate %g S/s is outside 0.001 … 10 000 000", rate)
	}
	f.period = 1 / rate
	if len(ts) > 0 {
		f.t0 = ts[0]
	}
	return rate, nil
}

// describe fills f.info (notes aside): the channel and its rail, the
// meter, the rate.
func (f *otiiCSV) describe(device string, rate float64) {
	port := f.o.Port
	if port == 0 {
		port = 1
	}
	v := f.o.Voltage
	rail := railFor(v)
	if f.voltAt >= 0 {
		rail = meter.RailOther // measured: the rail is the user's to name
	}
	f.info.Format = otiiName
	f.info.Channels = []meter.Channel{{Port: port, Rail: rail}}
	f.info.Meter = meter.Info{Kind: "otii", Model: strings.TrimSpace(device + " (Otii CSV export)"), Ports: 1,
		Channels: f.info.Channels, Rates: []units.Hertz{units.Hertz(rate)}}
	f.info.Rate = units.Hertz(rate)
}

// otiiDevice is the device part of "<device> <channel> (<unit>)": the
// words before the channel's own two ("Main Current", "ADC Voltage"), or
// before the last one when there are only two ("Arc Current").
func otiiDevice(name string) string {
	m := otiiValueCol.FindStringSubmatch(name)
	if m == nil {
		return ""
	}
	w := strings.Fields(m[1])
	switch {
	case len(w) >= 3:
		return strings.Join(w[:len(w)-2], " ")
	case len(w) == 2:
		return w[0]
	}
	return ""
}

// wallTime turns seconds since the Unix epoch back into a time.
func wallTime(s float64) time.Time {
	sec := math.Floor(s)
	return time.Unix(int64(sec), int64(math.Round((s-sec)*1e9))).UTC()
}

var otiiTimeLayouts = []string{
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
}

// time parses a row's time as seconds (since the Unix epoch for the wall
// clock: microseconds survive in a float64 for centuries).
func (f *otiiCSV) time(c *csvLines, s string) (float64, error) {
	if !f.wall {
		v, err := c.number("time", s)
		return v * f.tScale, err
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil && v > 0 && !math.IsInf(v, 0) {
		return v, nil // epoch seconds
	}
	for _, l := range otiiTimeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return float64(t.Unix()) + float64(t.Nanosecond())/1e9, nil
		}
	}
	return 0, c.errf("Wall-clock time (UTC)", "%q is not a date and time (2024-05-01T12:00:00.000250Z)", s)
}

func (f *otiiCSV) Info() Info      { return f.info }
func (f *otiiCSV) Close() error    { return nil }
func (f *otiiCSV) Notes() []string { return append(append([]string(nil), f.info.Notes...), f.notes...) }

// Replay implements File.
func (f *otiiCSV) Replay(ctx context.Context, sink meter.Sink) error {
	f.notes = nil
	c := newCSVLines(otiiName, f.r, f.size)
	if _, err := c.read(); err != nil {
		return err
	}
	blk := newBlocker(sink, 0)
	grid := timeGrid{period: f.period}
	port := f.info.Channels[0].Port
	v := f.o.Voltage
	var level int64 = -1
	var missing, gaps, empty, heldV uint64
	haveV := f.voltAt < 0
	for n := 0; ; n++ {
		if n&4095 == 0 {
			if err := context.Cause(ctx); err != nil {
				return err
			}
		}
		row, err := c.read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if len(row) != f.n {
			return c.errf("", "%d columns, the header has %d", len(row), f.n)
		}
		t, err := f.time(c, row[0])
		if err != nil {
			return err
		}
		idx, miss, err := grid.place(c, "time", t)
		if err != nil {
			return err
		}
		if miss > 0 {
			if err := blk.gap(idx-miss, miss, "missing"); err != nil {
				return err
			}
			missing += miss
			gaps++
		}
		if f.voltAt >= 0 {
			if s := row[f.voltAt]; s == "" {
				heldV++
			} else {
				if v, err = f.voltage(c, s); err != nil {
					return err
				}
				haveV = true
			}
		}
		if len(f.digAt) > 0 {
			l, err := f.level(c, row)
			if err != nil {
				return err
			}
			if l != level {
				if err := sink.Event(meter.Event{Kind: meter.EventLogic, Port: port, Index: idx, Value: l}); err != nil {
					return err
				}
				level = l
			}
		}
		s := row[f.curAt]
		if s == "" || !haveV {
			// No current (or no voltage yet) for this row: a missing sample.
			empty++
			if err := blk.gap(idx, 1, "empty"); err != nil {
				return err
			}
			continue
		}
		a, err := f.current(c, s)
		if err != nil {
			return err
		}
		if err := blk.add(idx, v, a); err != nil {
			return err
		}
	}
	if err := blk.flush(); err != nil {
		return err
	}
	if gaps > 0 {
		f.notes = append(f.notes, fmt.Sprintf("%d samples missing from the export in %d gaps (reason \"missing\")", missing, gaps))
	}
	if empty > 0 {
		f.notes = append(f.notes, fmt.Sprintf("%d rows had no current (or no voltage yet): one-sample gaps (reason \"empty\")", empty))
	}
	if heldV > 0 {
		f.notes = append(f.notes, fmt.Sprintf("%d rows had no voltage: each takes the voltage of the row before", heldV))
	}
	return nil
}

// current reads a row's current cell s.
func (f *otiiCSV) current(c *csvLines, s string) (units.Amps, error) {
	x, err := c.number(f.cur.name, s)
	if err != nil {
		return 0, err
	}
	a := x * f.cur.scale
	if math.Abs(a) > maxAmps {
		return 0, c.errf(f.cur.name, "%g A is beyond ±%d A", a, maxAmps)
	}
	return units.Amps(a), nil
}

// voltage reads a row's voltage cell s.
func (f *otiiCSV) voltage(c *csvLines, s string) (units.Volts, error) {
	x, err := c.number(f.volt.name, s)
	if err != nil {
		return 0, err
	}
	v := units.Volts(x * f.volt.scale)
	if math.Abs(float64(v)) > maxVolts {
		return 0, c.errf(f.volt.name, "%g V is beyond ±%d V", float64(v), maxVolts)
	}
	return v, nil
}

// level reads a row's digital lines as a logic level (line k is bit k).
func (f *otiiCSV) level(c *csvLines, row []string) (int64, error) {
	var l int64
	for k, at := range f.digAt {
		x, err := c.number(f.info.Lines[k], row[at])
		if err != nil {
			return 0, err
		}
		if x != 0 && x != 1 {
			return 0, c.errf(f.info.Lines[k], "%g is not a digital level (0 or 1)", x)
		}
		if x == 1 {
			l |= 1 << k
		}
	}
	return l, nil
}
