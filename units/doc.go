// Package units holds the typed physical quantities idlewatt passes across
// package boundaries, so a milliwatt is never mistaken for a watt.
//
// # Conventions
//
// All quantities are float64 in SI base units (volts, amps, watts, joules).
// Durations use time.Duration. JSON reports state units in key names
// (`_w`, `_ma`, `_ms`); conversion helpers such as Watts.Milliwatts exist so
// that the conversion is written once.
//
// # Where it sits
//
// A leaf (rank 0), standard library only; every floor imports it.
package units
