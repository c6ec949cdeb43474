package series

import "github.com/idlewatt/idlewatt/analysis/decimate"

// Interval is a span of time in seconds, e.g. while the drive had I/O in
// flight.
type Interval struct{ Start, End float64 }

// StateSpan says the drive was in State from Start to End seconds. State is
// one of "active", "idle", "partial", "slumber", "devslp" (any case); other
// names are drawn too, in a tint derived from the name.
type StateSpan struct {
	Start, End float64
	State      string
}

// Annotation is a labelled event at T seconds, drawn as a dashed vertical
// line, e.g. {T: 12.5, Text: "DEVSLP asserted"}.
type Annotation struct {
	T    float64
	Text string
}

// Trace is one drive's data for a power-over-time chart
// (report/chart.PowerOverTime). Only Power is required; the
// rest is drawn when present. Times are seconds on one timeline for all
// traces of a chart.
type Trace struct {
	Name   string            // drive name; panel title (stacked) or legend entry (overlay)
	Power  decimate.Envelope // watts; build it with a decimate.Decimator
	IO     []Interval        // busy intervals, any order
	States []StateSpan
	Notes  []Annotation
}
