package analysis

import (
	"io"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// headerOnly is a Source of a header and no records.
type headerOnly struct{ h capture.Header }

func (s headerOnly) Header() capture.Header        { return s.h }
func (s headerOnly) Next() (capture.Record, error) { return capture.Record{}, io.EOF }
func (s headerOnly) Complete() bool                { return true }
func (s headerOnly) Close() error                  { return nil }

// A header's rate that is not a positive number is bad input named once
// with its unit ("-5 Hz", not "-5 Hz Hz": units.Hertz prints its own unit).
func TestHeaderRateNotPositive(t *testing.T) {
	for _, rate := range []units.Hertz{-5, 0} {
		h := capture.Header{RateHz: rate, Channels: []meter.Channel{{Port: 1}}}
		_, err := AnalyzeSource(func() (Source, error) { return headerOnly{h}, nil }, Options{})
		if err == nil {
			t.Fatalf("rate %v: no error", rate)
		}
		if want := "sample rate " + strings.TrimSuffix(rate.String(), " Hz") + " Hz is not positive"; !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "Hz Hz") {
			t.Errorf("rate %v: %q, want it to say %q", rate, err, want)
		}
	}
}
