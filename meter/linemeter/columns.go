package linemeter

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Columns maps the fields of a line to time, voltage and current.
// Indices are 0-based; -1 means absent. Scales convert the printed unit to
// seconds, volts and amperes (mA → 1e-3).
type Columns struct {
	Sep                                string // "," (default), ";", "\t" or " " (any run of blanks)
	Time, Voltage, Current             int
	TimeScale, VoltScale, CurrentScale float64
	Fields                             int // fields a line must have (0 = at least what the map uses)
}

// CurrentRanger is LowPowerLab CurrentRanger's logging format: one float,
// amperes, per line.
var CurrentRanger = Columns{Sep: ",", Time: -1, Voltage: -1, Current: 0, CurrentScale: 1}

// ParseColumns builds a map from a header-like spec naming each column,
// e.g. "millis,loadV,current_mA" or "BusV,ShuntV_mV,LoadV,Current_mA".
// A name's unit comes from its suffix (_mA, _uA, _A, _mV, _V, V, _ms, _us,
// _s) or from the name itself (millis, micros, seconds). The time column is
// the one named millis/micros/time/t/ms/us/s; the voltage column is the one
// named load* if there are several; the current column is the one named
// current*/I* or with a current unit. Other columns are ignored. The spec
// "currentranger" gives CurrentRanger.
func ParseColumns(spec string) (Columns, error) {
	if strings.EqualFold(strings.TrimSpace(spec), "currentranger") {
		return CurrentRanger, nil
	}
	c := Columns{Sep: ",", Time: -1, Voltage: -1, Current: -1}
	for _, s := range []string{"\t", ";", ","} {
		if strings.Contains(spec, s) {
			c.Sep = s
		}
	}
	names := strings.Split(spec, c.Sep)
	if c.Sep == "," && len(names) == 1 && strings.Contains(spec, " ") {
		c.Sep, names = " ", strings.Fields(spec)
	}
	c.Fields = len(names)
	for i, raw := range names {
		n := strings.ToLower(strings.TrimSpace(raw))
		switch {
		case n == "millis" || n == "ms" || strings.HasSuffix(n, "_ms"):
			c.Time, c.TimeScale = i, 1e-3
		case n == "micros" || n == "us" || strings.HasSuffix(n, "_us"):
			c.Time, c.TimeScale = i, 1e-6
		case n == "time" || n == "t" || n == "s" || n == "seconds" || strings.HasSuffix(n, "_s"):
			c.Time, c.TimeScale = i, 1
		case strings.HasSuffix(n, "_ma") || strings.HasSuffix(n, "ma") && strings.HasPrefix(n, "current"):
			c.Current, c.CurrentScale = i, 1e-3
		case strings.HasSuffix(n, "_ua"):
			c.Current, c.CurrentScale = i, 1e-6
		case strings.HasSuffix(n, "_a") || n == "a" || n == "amps" || n == "current" || n == "i":
			c.Current, c.CurrentScale = i, 1
		case strings.HasSuffix(n, "_mv") || strings.HasSuffix(n, "mv"):
			if strings.Contains(n, "shunt") {
				continue // the shunt drop is not the DUT's voltage
			}
			if c.Voltage < 0 || strings.HasPrefix(n, "load") {
				c.Voltage, c.VoltScale = i, 1e-3
			}
		case strings.HasSuffix(n, "_v") || strings.HasSuffix(n, "v") || n == "volts":
			if strings.Contains(n, "shunt") {
				continue
			}
			if c.Voltage < 0 || strings.HasPrefix(n, "load") {
				c.Voltage, c.VoltScale = i, 1
			}
		}
	}
	if c.Current < 0 {
		return c, fmt.Errorf("linemeter: column map %q names no current column (use a unit suffix such as current_mA)", spec)
	}
	return c, nil
}

// ErrBadLine is wrapped by Parse for a line that does not fit the map.
var ErrBadLine = fmt.Errorf("line does not fit the column map")

// Sample is one parsed line in base units. HasTime/HasVolts say which
// columns the map has.
type Sample struct {
	T, V, I          float64
	HasTime, HasVolt bool
}

// Parse decodes one line (without its line end). It never panics; a line
// with too few fields or a non-numeric field the map uses is ErrBadLine.
func (c *Columns) Parse(line []byte) (Sample, error) {
	line = bytes.TrimSpace(line)
	var f [16][]byte
	n := 0
	if c.Sep == " " {
		for _, x := range bytes.Fields(line) {
			if n == len(f) {
				break
			}
			f[n] = x
			n++
		}
	} else {
		sep := c.Sep
		if sep == "" {
			sep = ","
		}
		rest := line
		for n < len(f) {
			i := bytes.Index(rest, []byte(sep))
			if i < 0 {
				f[n] = rest
				n++
				break
			}
			f[n] = rest[:i]
			n++
			rest = rest[i+len(sep):]
		}
	}
	if n < c.Fields {
		return Sample{}, fmt.Errorf("%w: %d fields, want %d", ErrBadLine, n, c.Fields)
	}
	get := func(i int, scale float64) (float64, error) {
		if i >= n {
			return 0, fmt.Errorf("%w: no field %d", ErrBadLine, i+1)
		}
		s := string(bytes.TrimSpace(f[i]))
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || x != x || x > 1e300 || x < -1e300 {
			return 0, fmt.Errorf("%w: field %d %q is not a number", ErrBadLine, i+1, s)
		}
		return x * scale, nil
	}
	var s Sample
	var err error
	if s.I, err = get(c.Current, c.CurrentScale); err != nil {
		return s, err
	}
	if c.Voltage >= 0 {
		if s.V, err = get(c.Voltage, c.VoltScale); err != nil {
			return s, err
		}
		s.HasVolt = true
	}
	if c.Time >= 0 {
		if s.T, err = get(c.Time, c.TimeScale); err != nil {
			return s, err
		}
		s.HasTime = true
	}
	return s, nil
}
