package analysis

import (
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
)

// State is a drive's power state as residency reports it: the one State
// enum of idlewatt, states/powerstate's (the classifiers label with it;
// the simulator's truth is in it too).
type State = powerstate.State

// States. StateUnknown lets a classifier abstain for a sample; such samples
// are counted as active or idle by I/O segmentation.
const (
	StateUnknown    = powerstate.Unknown
	StateActive     = powerstate.Active
	StateBackground = powerstate.Background
	StateIdle       = powerstate.Idle
	StatePartial    = powerstate.Partial
	StateSlumber    = powerstate.Slumber
	StateDevSlp     = powerstate.DevSlp
	StateOff        = powerstate.Off
	numStates       = powerstate.NumDetected
)

// Sample is one drive-level sample as a classifier sees it: the sum over
// the drive's rails at one meter sample index.
type Sample struct {
	Index     uint64         // meter sample index
	Host      hostclock.Time // aligned host monotonic time
	Power     units.Watts    // sum of V×I over the drive's rails
	Activity  Activity       // from I/O segmentation
	DevSlpPin bool           // the DEVSLP pin was asserted (meter event, else host request)
}

// StateClassifier labels a drive's samples with power states. Analyze calls
// Classify once per sample of one drive, in index order, from one goroutine.
// A classifier that needs to see ahead before it can decide (hysteresis) can
// return its label for the current sample based on what it has seen so far;
// states/detect's offline detector is the place for retrospective labelling.
type StateClassifier interface {
	Classify(s Sample) State
}

// IdleBander is implemented by classifiers that know the drive's state
// levels. IdleBand is the band of 10 ms means of quiet power that can be
// active idle: lo between the idle level and the next lower one (the
// classifier's own threshold), hi as far above the idle level as lo is
// below it; ok is false without an idle level and a lower one. Active idle
// is then estimated level-based over quiet time in every link state
// (estimateLevelAbove), not over the samples labelled idle one by one,
// whose noise decides their label.
type IdleBander interface {
	IdleBand() (lo, hi units.Watts, ok bool)
}

// learnedSpread is implemented by classifiers whose levels were learned
// from the capture (LevelLearning): how far the meter's level steps move a
// level (LevelStepW) and how wide active idle's blocks read (IdleSpreadW);
// 0 when not found.
type learnedSpread interface {
	LevelStep() float64
	IdleSpread() float64
}

// GapObserver is implemented by classifiers that want to know where samples
// are missing: Gap is called with the first missing index and the count,
// between the Classify calls around it.
type GapObserver interface {
	Gap(start, count uint64)
}

// ClassifierFactory makes one classifier per drive. rate is the nominal
// sample rate.
type ClassifierFactory func(d capture.DriveInfo, rate units.Hertz) StateClassifier
