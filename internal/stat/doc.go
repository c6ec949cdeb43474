// Package stat holds the robust statistics every estimator shares
// (analysis, analysis/judge, states/detect): medians, the MAD with its
// named constant, quantiles, the autocorrelation of a series and what
// follows from it —
// the correlation length, the integrated autocorrelation time, the
// effective sample size — the standard error of a mean by batch means with a
// batch length the data chooses, a noise model robust to level steps (a
// variogram of differences at dyadic lags), Student's t, and the
// resolution and calibration terms of a meter's readings.
//
// It is a leaf helper (internal/, below every package that uses it): it
// imports nothing of the project, reads no files and keeps no state beyond
// what a caller holds — but for a few scratch buffers NoiseOf, acfDirect,
// batchVar and MAD reuse from call to call (noiseScratches,
// floatScratches), which hold no result. docs/analysis.md, "Uncertainty", says
// where each estimator is used and how its intervals were tested.
//
// # Why not the textbook σ/√N
//
// A real meter's noise is coloured: an integrating converter, a sensor's
// bandwidth, a regulator's ripple and mains hum make neighbouring readings
// alike. For a stationary series with autocorrelation ρ_k the variance of a
// mean of N readings is σ²/N · (1 + 2 Σ (1 − k/N) ρ_k); for AR(1) noise of
// lag-1 correlation ρ it is about σ²/N · (1 + ρ)/(1 − ρ), twenty times σ²/N
// for a 1 ms correlation time at 10 kS/s. And σ itself, taken from first
// differences (robust to steps), is σ·√(1 − ρ) under such noise: too small
// again. Every interval here is built from the data's own correlation.
package stat
