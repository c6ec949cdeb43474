package files

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// The nRF Connect Power Profiler's CSV export (src/actions/exportChartAction.ts
// in github.com/NordicSemiconductor/pc-nrfconnect-ppk): the header is any of
// these four column groups, in this order, that were ticked in the export
// dialog; each row is one sample the app held (samples it lost, NaN in its
// buffer, are left out). Timestamp is index·1000/rate ms as JavaScript
// prints a double; current is µA with three decimals (toFixed(3)); D0-D7 is
// one string of eight characters, D0 first ('-' the line was not sampled,
// '0', '1', 'X' both within the sample), and the eight D0…D7 columns are the
// same characters one per column. Power Profiler 3.0.0–3.1.0 wrote the
// string D7 first (Options.D7First).
const (
	ppkTime    = "Timestamp(ms)"
	ppkCurrent = "Current(uA)"
	ppkBits    = "D0-D7"
)

var ppk2CSVFormat = &Format{
	Name:   ppk2Name,
	Title:  "Nordic Power Profiler (PPK2) CSV export",
	Detect: detectPPK2CSV,
	Open:   openPPK2CSV,
}

// ppkCols are the column positions of a PPK2 export, -1 when absent.
type ppkCols struct {
	n         int // columns per row
	time, cur int
	bits      int // the D0-D7 string
	sep       int // D0 of the eight D0…D7 columns
}

func parsePPKHeader(fields []string) (ppkCols, bool) {
	c := ppkCols{n: len(fields), time: -1, cur: -1, bits: -1, sep: -1}
	i := 0
	take := func(name string) bool {
		if i < len(fields) && strings.EqualFold(strings.TrimSpace(fields[i]), name) {
			i++
			return true
		}
		return false
	}
	if take(ppkTime) {
		c.time = 0
	}
	if at := i; take(ppkCurrent) {
		c.cur = at
	}
	if at := i; take(ppkBits) {
		c.bits = at
	}
	if at := i; i+8 <= len(fields) {
		all := true
		for k := 0; k < 8; k++ {
			if !strings.EqualFold(strings.TrimSpace(fields[i+k]), fmt.Sprintf("D%d", k)) {
				all = false
				break
			}
		}
		if all {
			c.sep, i = at, i+8
		}
	}
	return c, c.cur >= 0 && i == len(fields)
}

func detectPPK2CSV(head []byte) bool {
	l := headLines(head, 1)
	if len(l) == 0 {
		return false
	}
	_, ok := parsePPKHeader(strings.Split(l[0], ","))
	return ok
}

type ppk2CSV struct {
	r      io.ReaderAt
	size   int64
	o      Options
	cols   ppkCols
	period float64 // ms
	info   Info
	notes  []string
}

func openPPK2CSV(r io.ReaderAt, size int64, o Options) (File, error) {
	f := &ppk2CSV{r: r, size: size, o: o}
	c := newCSVLines(ppk2Name, r, size)
	head, err := c.read()
	if err != nil {
		if err == io.EOF {
			return nil, &ParseError{Format: ppk2Name, Line: 1, Reason: "empty file"}
		}
		return nil, err
	}
	cols, ok := parsePPKHeader(head)
	if !ok {
		return nil, c.errf("header", "%q is not a Power Profiler export header (%s, %s, %s, D0…D7)", c.text, ppkTime, ppkCurrent, ppkBits)
	}
	f.cols = cols
	if o.Voltage <= 0 || o.Voltage > maxVolts {
		return nil, optErr("a Power Profiler export holds current only: give the voltage the drive ran at (--voltage, 0 < V ≤ %d)", maxVolts)
	}
	port := o.Port
	if port == 0 {
		port = 1
	}
	var rate float64
	var notes []string
	if cols.time >= 0 {
		// The rate is what the timestamps say: the first rows' spacing.
		var ts []float64
		for len(ts) < 4096 {
			row, err := c.read()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			if len(row) != cols.n {
				return nil, c.errf("", "%d columns, the header has %d", len(row), cols.n)
			}
			t, err := c.number(ppkTime, row[cols.time])
			if err != nil {
				return nil, err
			}
			ts = append(ts, t)
		}
		p, ok := inferPeriod(ts)
		switch {
		case len(ts) < 2 && o.Rate > 0:
			rate = float64(o.Rate)
		case !ok:
			return nil, optErr("the export has fewer than two timestamps: give its sample rate (--rate)")
		default:
			rate = snapRate(1000 / p)
		}
		if o.Rate > 0 && math.Abs(float64(o.Rate)-rate) > 1e-6*rate {
			return nil, optErr("--rate %g: the export's timestamps are %g S/s apart", float64(o.Rate), rate)
		}
		if len(ts) > 0 && ts[0] != 0 {
			notes = append(notes, fmt.Sprintf("the export starts %g ms into the Power Profiler recording; sample 0 of the capture is its first row", ts[0]))
		}
		notes = append(notes, fmt.Sprintf("sample rate %g S/s from the export's timestamps; rows it leaves out (samples the Power Profiler lost) are gaps", rate))
	} else {
		if o.Rate <= 0 {
			return nil, optErr("this export has no %s column: give its sample rate (--rate)", ppkTime)
		}
		rate = float64(o.Rate)
		notes = append(notes, fmt.Sprintf("the export has no timestamps: its rows are taken as consecutive samples at --rate %g S/s, so samples the Power Profiler lost cannot be seen", rate))
	}
	if rate < 1e-3 || rate > 1e7 {
		return nil, optErr("sample rate %g S/s is outside 0.001 … 10 000 000", rate)
	}
	notes = append(notes, fmt.Sprintf("current only (µA with 3 decimals); every sample's voltage is the given %g V", float64(o.Voltage)))
	var lines []string
	if cols.bits >= 0 || cols.sep >= 0 {
		for k := 0; k < 8; k++ {
			lines = append(lines, fmt.Sprintf("D%d", k))
		}
		order := "D0 first"
		if o.D7First {
			order = "D7 first, as Power Profiler 3.0.0–3.1.0 wrote it"
		}
		notes = append(notes, "digital lines D0–D7 kept as logic events (the string read "+order+")")
	} else {
		notes = append(notes, "the export has no digital columns (D0-D7 was not ticked when it was exported)")
	}
	lsb := 1e-9 // the export's own resolution: µA with three decimals
	if g, rows, err := ppkGrid(r, size, cols); err != nil {
		return nil, err
	} else if g > 0 {
		lsb = g
		notes = append(notes, fmt.Sprintf("the readings lie on a grid of %.4g µA (the first %d rows): the meter's resolution, taken as its LSB in every interval", g*1e6, rows))
	}
	f.info = Info{
		Format: ppk2Name,
		Meter: meter.Info{Kind: "ppk2", Model: "Power Profiler Kit II (CSV export)", Ports: 1,
			Channels: nil, Rates: []units.Hertz{units.Hertz(rate)}, MaxVoltage: 5, MaxCurrent: 1, Capabilities: []string{"logic"}},
		Channels: []meter.Channel{{Port: port, Rail: railFor(o.Voltage), VoltLSB: 0.001, CurrentLSB: units.Amps(lsb)}},
		Rate:     units.Hertz(rate),
		Lines:    lines,
		Notes:    notes,
	}
	f.info.Meter.Channels = f.info.Channels
	f.period = 1000 / rate
	return f, nil
}

func (f *ppk2CSV) Info() Info      { return f.info }
func (f *ppk2CSV) Close() error    { return nil }
func (f *ppk2CSV) Notes() []string { return append(append([]string(nil), f.info.Notes...), f.notes...) }

// Replay implements File.
func (f *ppk2CSV) Replay(ctx context.Context, sink meter.Sink) error {
	f.notes = nil
	c := newCSVLines(ppk2Name, f.r, f.size)
	if _, err := c.read(); err != nil { // the header, checked at Open
		return err
	}
	blk := newBlocker(sink, 0)
	grid := timeGrid{period: f.period}
	v := f.o.Voltage
	port := f.info.Channels[0].Port
	var next uint64 // index of the next row without timestamps
	var level int64 = -1
	var unknown, both, missing, gaps uint64
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
		if len(row) != f.cols.n {
			return c.errf("", "%d columns, the header has %d", len(row), f.cols.n)
		}
		idx := next
		if f.cols.time >= 0 {
			t, err := c.number(ppkTime, row[f.cols.time])
			if err != nil {
				return err
			}
			var miss uint64
			if idx, miss, err = grid.place(c, ppkTime, t); err != nil {
				return err
			}
			if miss > 0 {
				if err := blk.gap(idx-miss, miss, "missing"); err != nil {
					return err
				}
				missing += miss
				gaps++
			}
		}
		next = idx + 1
		ua, err := c.number(ppkCurrent, row[f.cols.cur])
		if err != nil {
			return err
		}
		a := ua * 1e-6
		if math.Abs(a) > maxAmps {
			return c.errf(ppkCurrent, "%g µA is beyond ±%d A: not a current this meter measures", ua, maxAmps)
		}
		if f.info.Lines != nil {
			l, u, x, err := f.digital(c, row, level)
			if err != nil {
				return err
			}
			unknown += u
			both += x
			if l != level {
				if err := sink.Event(meter.Event{Kind: meter.EventLogic, Port: port, Index: idx, Value: l}); err != nil {
					return err
				}
				level = l
			}
		}
		if err := blk.add(idx, v, units.Amps(a)); err != nil {
			return err
		}
	}
	if err := blk.flush(); err != nil {
		return err
	}
	if gaps > 0 {
		f.notes = append(f.notes, fmt.Sprintf("%d samples missing from the export in %d gaps (reason \"missing\")", missing, gaps))
	}
	if unknown > 0 {
		f.notes = append(f.notes, fmt.Sprintf("%d digital values were '-' (line not sampled): each keeps the line's previous level", unknown))
	}
	if both > 0 {
		f.notes = append(f.notes, fmt.Sprintf("%d digital values were 'X' (the line was both 0 and 1 within the sample): read as 1", both))
	}
	return nil
}

// digital reads a row's eight lines into a level (bit k = Dk): a '-' keeps
// the previous level's bit, 'X' is 1. Where both the string and the eight
// columns are present they must agree.
func (f *ppk2CSV) digital(c *csvLines, row []string, prev int64) (level int64, unknown, both uint64, err error) {
	var chars [8]byte
	switch {
	case f.cols.bits >= 0:
		s := row[f.cols.bits]
		if len(s) != 8 {
			return 0, 0, 0, c.errf(ppkBits, "%q is not eight characters of -, 0, 1 or X", s)
		}
		for k := 0; k < 8; k++ {
			chars[k] = s[k]
			if f.o.D7First {
				chars[k] = s[7-k]
			}
		}
		if f.cols.sep >= 0 {
			for k := 0; k < 8; k++ {
				d := row[f.cols.sep+k]
				if len(d) != 1 || d[0] != s[k] {
					return 0, 0, 0, c.errf(fmt.Sprintf("D%d", k), "%q does not match character %d of %s %q", d, k+1, ppkBits, s)
				}
			}
		}
	default:
		for k := 0; k < 8; k++ {
			d := row[f.cols.sep+k]
			if len(d) != 1 {
				return 0, 0, 0, c.errf(fmt.Sprintf("D%d", k), "%q is not one of -, 0, 1, X", d)
			}
			j := k
			if f.o.D7First {
				j = 7 - k
			}
			chars[j] = d[0]
		}
	}
	if prev < 0 {
		prev = 0
	}
	for k, ch := range chars {
		switch ch {
		case '0':
		case '1':
			level |= 1 << k
		case 'X', 'x':
			level |= 1 << k
			both++
		case '-':
			level |= prev & (1 << k)
			unknown++
		default:
			return 0, 0, 0, c.errf(fmt.Sprintf("D%d", k), "%q is not one of -, 0, 1, X", string(ch))
		}
	}
	return level, unknown, both, nil
}

// gridRows is how many rows ppkGrid reads; gridMinValues the fewest
// distinct readings it takes a grid from; gridTolNA how far (nA) a printed
// reading may lie off the grid (the export rounds to 1 nA).
const (
	gridRows      = 1 << 16
	gridMinValues = 3
	gridTolNA     = 1.5
)

// ppkGrid is the grid the export's currents lie on (A; 0: none finer
// than the export's 1 nA found), from its first gridRows rows. The Power
// Profiler prints µA with three decimals, but a meter's readings are
// counts of its ADC's step: when every distinct reading is a + k·g for
// whole k (within the printing's rounding), g is the meter's resolution,
// which the export does not state — a floor under one step reads as a few
// of them, and an interval without the step is far too narrow (a 0.84 mW
// DevSlp floor under a 2.6 µA step: ±0.1 µW, off by 1.2 µW). Readings in
// several ranges (a PPK2 switches its gain with the current) lie on no
// one grid, and the export's own 1 nA stays the LSB.
func ppkGrid(r io.ReaderAt, size int64, cols ppkCols) (float64, int, error) {
	c := newCSVLines(ppk2Name, r, size)
	if _, err := c.read(); err != nil {
		return 0, 0, err
	}
	seen := map[int64]bool{}
	rows := 0
	for ; rows < gridRows; rows++ {
		row, err := c.read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, 0, err
		}
		if len(row) != cols.n {
			return 0, 0, c.errf("", "%d columns, the header has %d", len(row), cols.n)
		}
		v, err := c.number(ppkCurrent, row[cols.cur])
		if err != nil {
			return 0, 0, err
		}
		if math.Abs(v) < 1e12 {
			seen[int64(math.Round(v*1e3))] = true // nA
		}
	}
	return gridOf(seen), rows, nil
}

// gridOf is the step g (A) of a grid a + k·g that every value of seen (nA)
// lies on within gridTolNA, 0 when there is none coarser than 3 nA or
// fewer than gridMinValues values.
//
// The differences between neighbouring values are whole multiples of g
// (the offset a cancels, each difference carries two roundings of the
// print): g is their least-squares step, fitted from the smallest
// difference up, each next multiple counted with the step the smaller
// ones gave. A difference too large for that step to count (two of a
// drive's levels far apart, their multiple uncertain by more than a
// quarter) is left out; one the step counts but that lies off its
// multiple means no grid (readings on 1 nA, or two ranges). Before, the
// grid was fitted outward from the lowest value and needed two values
// within 8 steps of it: a drive whose first rows held its levels alone,
// noise under one step, got no grid, its levels' modes 14 µW apart on an
// 88 µW grid were read as two states, and its idle residency (34.7 %) as
// Partial (the independent generator's seed 10 drive 24).
func gridOf(seen map[int64]bool) float64 {
	if len(seen) < gridMinValues {
		return 0
	}
	d := make([]int64, 0, len(seen))
	for x := range seen {
		d = append(d, x)
	}
	slices.Sort(d)
	diffs := make([]float64, 0, len(d)-1)
	for i := 1; i < len(d); i++ {
		diffs = append(diffs, float64(d[i]-d[i-1]))
	}
	slices.Sort(diffs)
	g := diffs[0]
	if g <= 3 {
		return 0
	}
	var smx, smm float64
	used := 0
	for _, x := range diffs {
		m := math.Round(x / g)
		// The step's error: each difference is off its multiple by up to
		// 2·gridTolNA; over Σm² of them the step is known to that ÷ √Σm²
		// (the first difference alone: to its own rounding).
		gerr := 2 * gridTolNA
		if smm > 0 {
			gerr /= math.Sqrt(smm)
		}
		if m*gerr > g/4 {
			continue // too far to count with the step so far
		}
		if math.Abs(x-m*g) > 2*gridTolNA+m*gerr {
			return 0
		}
		smx, smm = smx+m*x, smm+m*m
		g = smx / smm
		used++
	}
	if used < gridMinValues-1 || !(g > 3) {
		return 0
	}
	return g * 1e-9
}
