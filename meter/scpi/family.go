package scpi

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Family holds one instrument family's command strings. %d is replaced by
// the channel number. Every string can be overridden (Options.Family).
type Family struct {
	Name     string
	Match    []string // substrings of *IDN? that pick this family (lowercase)
	Init     []string // sent once at open
	MeasCurr string
	MeasVolt string // "" if the instrument measures current only
	// Rate is the polling rate (polls/s) used unless the stream asks for
	// another; MaxRate is the most it may ask for: what one poll's
	// measurement and query round trips allow with the family's Init.
	Rate, MaxRate float64
	// Array is the family's buffered acquisition (Options.Array); a zero
	// Fetch means it has none.
	Array ArrayMode
}

// ArrayMode holds the commands of a family's buffered acquisition: Setup
// once at open, then per fetch Arm and Fetch, whose reply is Points
// readings taken Tint apart. Placeholders: {ch} the channel, {tint} the
// interval in seconds, {points} the count.
type ArrayMode struct {
	Setup []string // sent once at open, each checked against the error queue
	// Interval reads back the interval the instrument set (it rounds to
	// its timebase); "" trusts the request.
	Interval string
	Arm      []string // sent before each Fetch without checks; the first starts the acquisition
	Fetch    string   // query answering the readings
	Binary   string   // selects float32 big-endian definite-length blocks; "" = ASCII only
	ASCII    string   // selects ASCII replies
	// Points and Tint (s) are the defaults; MaxPoints and MinTint the
	// limits the driver asks for at most.
	Points, MaxPoints int
	Tint, MinTint     float64
}

// Families are the defaults, from the instruments' manuals. Array modes:
//
//   - n6705: MEAS:ARR:CURR? acquires SENS:SWE:POIN points SENS:SWE:TINT
//     apart and answers them; FORM REAL makes the reply a float32 block.
//     4096 points of 20.48 µs (84 ms) a fetch by default.
//   - k2280s: :INIT fills the 2500-point trace buffer, *WAI holds the
//     fetch until it is full, :TRAC:DATA? "READ" answers it. The interval
//     command (:SENS:CURR:APER) is our reading of the manual: override it
//     if your firmware differs.
//
// The polling rates:
//
//   - n6705: a default MEAS averages 1024 points of 20.48 µs (21 ms), so
//     50/s; 100/s with fewer points (SENS:SWE:POIN in an Init override).
//   - k2450: NPLC 0.1 (2 ms at 50 Hz mains) plus autozero and two
//     queries: 100/s; 250/s with NPLC 0.01.
//   - k2280s: 100/s at its default integration; 200/s at the fastest.
//   - dp800: the readback updates every few tens of ms: 20/s; at most 50/s.
//   - sdm: about 150 readings/s at its fast rate, no faster.
var Families = []Family{
	{Name: "n6705", Match: []string{"n6705"}, MeasCurr: "MEAS:CURR? (@%d)", MeasVolt: "MEAS:VOLT? (@%d)", Rate: 50, MaxRate: 100,
		Array: ArrayMode{Setup: []string{"SENS:SWE:TINT {tint},(@{ch})", "SENS:SWE:POIN {points},(@{ch})"},
			Interval: "SENS:SWE:TINT? (@{ch})", Fetch: "MEAS:ARR:CURR? (@{ch})", Binary: "FORM REAL", ASCII: "FORM ASC",
			Points: 4096, MaxPoints: 4096, Tint: 20.48e-6, MinTint: 5.12e-6}},
	{Name: "k2450", Match: []string{"model 2450", "2450"}, Init: []string{":SENS:FUNC \"CURR\"", ":SENS:CURR:NPLC 0.1"},
		MeasCurr: ":MEAS:CURR?", MeasVolt: ":MEAS:VOLT?", Rate: 100, MaxRate: 250},
	{Name: "k2280s", Match: []string{"2280s"}, MeasCurr: "measure:current?", MeasVolt: "measure:voltage?", Rate: 100, MaxRate: 200,
		Array: ArrayMode{Setup: []string{":TRAC:POIN {points}", ":TRAC:FEED:CONT NEXT", ":SENS:CURR:APER {tint}"},
			Interval: ":SENS:CURR:APER?", Arm: []string{":TRAC:CLE", ":INIT", "*WAI"}, Fetch: `:TRAC:DATA? "READ"`,
			Points: 2500, MaxPoints: 2500, Tint: 1e-3, MinTint: 1e-4}},
	{Name: "dp800", Match: []string{"dp8"}, MeasCurr: ":MEAS:CURR? CH%d", MeasVolt: ":MEAS:VOLT? CH%d", Rate: 20, MaxRate: 50},
	{Name: "sdm", Match: []string{"sdm"}, MeasCurr: "MEASure:CURRent:DC?", Rate: 150, MaxRate: 150},
}

// Detect picks the family from an *IDN? reply.
func Detect(idn string) (Family, error) {
	l := strings.ToLower(idn)
	for _, f := range Families {
		for _, m := range f.Match {
			if strings.Contains(l, m) {
				return f, nil
			}
		}
	}
	idn = strings.TrimSpace(idn)
	if len(idn) > 80 {
		// A reply that is not an identity (binary readings, noise) is
		// quoted only as far as a reader can use it.
		return Family{}, fmt.Errorf("scpi: unknown instrument %q… (%d bytes; not an *IDN? reply); set the family or its commands", idn[:80], len(idn))
	}
	return Family{}, fmt.Errorf("scpi: unknown instrument %q; set the family or its commands", idn)
}

// FamilyByName returns a default family.
func FamilyByName(name string) (Family, error) {
	for _, f := range Families {
		if strings.EqualFold(f.Name, name) {
			return f, nil
		}
	}
	return Family{}, fmt.Errorf("scpi: unknown family %q", name)
}

// overflow is what SCPI instruments send for an over-range or invalid
// reading (9.91E37 is NaN in SCPI-99).
const overflow = 9.9e37

// ParseReading parses a numeric reply: one number, or the first of a
// comma-separated list; units appended by some instruments ("1.2E-3A") are
// allowed. Over-range values are an error, never a number.
func ParseReading(reply string) (float64, error) {
	s := strings.TrimSpace(reply)
	if strings.ContainsRune(s, '"') {
		return 0, fmt.Errorf("scpi: reply %q is an error message, not a reading", trunc(reply))
	}
	if i := strings.IndexByte(s, ','); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	s = strings.TrimRight(s, "AaVvWw \t")
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("scpi: reply %q is not a number", trunc(reply))
	}
	if math.Abs(x) >= overflow {
		return 0, fmt.Errorf("scpi: reply %q is the over-range value", trunc(reply))
	}
	return x, nil
}

// ParseError parses a SYST:ERR? reply: `-113,"Undefined header"`. Code 0
// means the queue is empty.
func ParseError(reply string) (int, string, error) {
	c, msg, ok := strings.Cut(strings.TrimSpace(reply), ",")
	if !ok {
		return 0, "", fmt.Errorf("scpi: error-queue reply %q is not code,\"message\"", trunc(reply))
	}
	n, err := strconv.Atoi(strings.TrimSpace(c))
	if err != nil {
		return 0, "", fmt.Errorf("scpi: error-queue reply %q has no numeric code", trunc(reply))
	}
	return n, strings.Trim(strings.TrimSpace(msg), "\""), nil
}

func trunc(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}
