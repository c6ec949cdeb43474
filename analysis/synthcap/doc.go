// Package synthcap writes synthetic captures with known truth — piecewise
// constant drive power, background (GC) bursts, I/O, phases, DEVSLP pin
// spans, gaps, sensor noise and level steps, ADC quantisation and jittery
// clock marks on a drifting meter clock — for analysis tests, benchmarks
// and scripts/report-scale.sh.
//
// # Truth
//
// Sample n of the meter is taken at host time
// StartHost + n·(1e9/RateHz)·(1 + DriftPPM·1e-6) ns. A drive's power at that
// instant is DevSlpW while one of its Pins spans covers it, else BusyW while
// one of its I/Os is in flight, else IdleW plus GCW during its background
// bursts (GCDur every GCEvery, from GCFirst); Split5V of it is drawn from the
// 5 V rail and the rest from 12 V. TruePower gives it. What the meter reads
// adds gaussian noise of NoiseA σ to each rail's current and, with StepA,
// level steps to the 5 V current (a random telegraph of ±StepA/2 redrawn
// with probability period/StepEvery a sample), then rounds currents to
// CurrentLSB and voltages to VoltLSB (when set; the header's channels then
// state the LSBs).
//
// # Where it sits
//
// Beside analysis (rank 3), above capture, which it writes through; it
// imports no simulator. Tests across the tree and cmd/gencap
// (scripts/report-scale.sh) use it.
package synthcap
