// Package units holds the typed physical quantities idlewatt passes across
// package boundaries, so a milliwatt is never mistaken for a watt: the
// meter drivers produce Volts, Amps and Hertz, capture stores them,
// analysis returns Watts, Joules, Seconds and Milliseconds in its results,
// and report writes them.
//
// # Conventions
//
// Quantities are float64 in SI base units (volts, amps, watts, joules,
// hertz, seconds), with two exceptions, Milliseconds and Milliwatts,
// because report keys ending `_ms` hold milliseconds (and a declared
// `devslp_mw` milliwatts) and a field keeps the number its key states.
// Each type marshals to JSON as its plain number (no MarshalJSON), so
// typing a field changes no output; String is for people ("400 mW",
// "250 ms") and is what %v and %s print, while %g and %.3f print the
// number. time.Duration stays the type of what the program waits or
// schedules; Seconds is a figure measured from samples. JSON reports state
// units in key names (`_w`, `_ma`, `_ms`); conversion helpers such as
// Watts.Milliwatts and Hertz.Period exist so that the conversion is written
// once. Inside a hot loop a plain float64 is fine: the types are for what
// crosses a package boundary.
//
// # Where it sits
//
// A leaf (rank 0), standard library only; every floor imports it.
package units
