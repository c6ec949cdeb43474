// Package noisegen draws meter noise for the estimators' tests: what a
// real current meter adds to a drive's power (shared/reference
// meter-noise.md), written independently of the simulator's own noise
// models (states/drivesim) so that the tests do not check the analysis
// against the code it was tuned on. Only _test.go files import it.
//
// A Meter reads a drive's true power, sample by sample, as a current
// sensor on one rail would: the true current through a first-order sensor
// bandwidth (when drawn), plus the family's noise, plus a calibration
// error within the stated limits (when drawn), quantised to the LSB (when
// drawn). Parameters are drawn from documented ranges by Draw with a
// caller's generator, so a seed fixes every draw.
package noisegen
