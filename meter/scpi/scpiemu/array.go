package scpiemu

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/meter/scpi"
)

// arrayCmd is one of the family's array-mode templates as a matcher.
type arrayCmd struct {
	re   *regexp.Regexp
	vars []string // placeholder names in group order: "ch", "tint", "points"
	role string   // "setup", "interval", "arm0", "arm", "fetch", "binary", "ascii"
}

var placeholder = regexp.MustCompile(`\{(ch|tint|points)\}`)

// compileArray turns the family's array templates into matchers on
// upper-cased command lines.
func compileArray(a scpi.ArrayMode) []arrayCmd {
	var out []arrayCmd
	add := func(tmpl, role string) {
		if tmpl == "" {
			return
		}
		var vars []string
		var b strings.Builder
		b.WriteString("^")
		last := 0
		for _, m := range placeholder.FindAllStringSubmatchIndex(tmpl, -1) {
			b.WriteString(regexp.QuoteMeta(strings.ToUpper(tmpl[last:m[0]])))
			name := tmpl[m[2]:m[3]]
			vars = append(vars, name)
			if name == "tint" {
				b.WriteString(`([-+]?[0-9.]+(?:E[-+]?[0-9]+)?)`)
			} else {
				b.WriteString(`([-+]?[0-9]+)`)
			}
			last = m[1]
		}
		b.WriteString(regexp.QuoteMeta(strings.ToUpper(tmpl[last:])))
		b.WriteString("$")
		out = append(out, arrayCmd{re: regexp.MustCompile(b.String()), vars: vars, role: role})
	}
	for _, c := range a.Setup {
		add(c, "setup")
	}
	add(a.Interval, "interval")
	for i, c := range a.Arm {
		if i == 0 {
			add(c, "arm0")
		} else {
			add(c, "arm")
		}
	}
	add(a.Fetch, "fetch")
	add(a.Binary, "binary")
	add(a.ASCII, "ascii")
	return out
}

// answerArray handles an array-mode command (called with e.mu held):
// handled says it was one. A fetch's reply waits (e.wait) until the
// acquisition is over, plus Options.FetchDelay.
func (e *Emulator) answerArray(u string) (reply string, ok, meas, handled bool) {
	for _, c := range e.arrCmds {
		m := c.re.FindStringSubmatch(u)
		if m == nil {
			continue
		}
		tint, points := e.tint, e.points
		for i, name := range c.vars {
			switch name {
			case "ch":
				if ch, err := strconv.Atoi(m[i+1]); err != nil || ch != 1 {
					e.push(`-222,"Data out of range"`)
					return "", false, false, true
				}
			case "tint":
				x, err := strconv.ParseFloat(m[i+1], 64)
				a := e.fam.Array
				if err != nil || x < a.MinTint/2 || x > 1 {
					e.push(`-222,"Data out of range"`)
					return "", false, false, true
				}
				// Instruments round the interval to their timebase.
				tint = max(1, math.Round(x/a.MinTint)) * a.MinTint
			case "points":
				n, err := strconv.Atoi(m[i+1])
				if err != nil || n < 1 || n > e.fam.Array.MaxPoints {
					e.push(`-222,"Data out of range"`)
					return "", false, false, true
				}
				points = n
			}
		}
		switch c.role {
		case "setup":
			e.tint, e.points = tint, points
		case "interval":
			return strconv.FormatFloat(e.tint, 'E', 6, 64), true, false, true
		case "arm0":
			e.acqStart = time.Now()
		case "binary":
			e.binary = true
		case "ascii":
			e.binary = false
		case "fetch":
			start := e.acqStart
			if start.IsZero() {
				start = time.Now()
			}
			e.acqStart = time.Time{}
			acq := time.Duration(float64(e.points) * e.tint * float64(time.Second))
			e.wait = max(0, time.Until(start.Add(acq))) + e.opts.FetchDelay
			return e.array(), true, true, true
		}
		return "", false, false, true
	}
	return "", false, false, false
}

// array is one acquisition's reply: the current with Options.Noise.
func (e *Emulator) array() string {
	x := func() float64 { return e.opts.Current + e.opts.Noise*e.rng.NormFloat64() }
	if e.binary {
		n := 4 * e.points
		ln := strconv.Itoa(n)
		b := make([]byte, 0, 2+len(ln)+n)
		b = append(b, '#', byte('0'+len(ln)))
		b = append(b, ln...)
		for range e.points {
			b = binary.BigEndian.AppendUint32(b, math.Float32bits(float32(x())))
		}
		return string(b)
	}
	b := make([]byte, 0, 14*e.points)
	for i := range e.points {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, x(), 'E', 6, 64)
	}
	return string(b)
}

func newRand(seed int64) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), 0x5c91)) }
