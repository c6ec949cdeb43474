package chart

import (
	"math"

	"github.com/idlewatt/idlewatt/analysis/decimate"
)

// The decimator lives in analysis/decimate (no plotting dependencies), so
// analysis can build envelopes without importing this package; these names
// keep chart.Envelope, chart.Decimator and chart.NewDecimator working.
type (
	// Envelope is decimate.Envelope: one min/max/mean row per time bucket,
	// NaN rows are gaps.
	Envelope = decimate.Envelope
	// Decimator is decimate.Decimator.
	Decimator = decimate.Decimator
	// DecimatorOpts is decimate.Options.
	DecimatorOpts = decimate.Options
)

// NewDecimator is decimate.New.
func NewDecimator(o DecimatorOpts) (*Decimator, error) { return decimate.New(o) }

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
