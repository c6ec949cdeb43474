// Package detect classifies a drive's power trace into interface power
// states — active, idle, partial, slumber, devslp, off — and measures
// residency, per-state power, transitions, and entry/exit latencies.
//
// # Method
//
// Power is smoothed with a centred running median over a short window
// (default 1 ms) to beat sensor noise without blurring edges or letting a
// single spike through, then compared with thresholds between the state levels. The levels are
// given (Levels): analysis learns them from the capture (analysis/levels.go);
// LevelHistogram finds the peaks of a log-power histogram that NVMe levels
// are named from (states/nvme/pslevel). Thresholds sit at the arithmetic
// midpoint of adjacent levels (additive noise: as many σ from either), so a
// 2.5 mW DevSlp floor and a 60 mW Slumber floor split at 31 mW. Any sample
// inside an I/O busy interval is active, whatever its power. A state must hold
// for MinDwell (default 2 ms) before a transition is committed, and the
// transition is dated at the first sample of the new state, so a wake spike
// or a single noisy sample does not split a span.
//
// # Files
//
// levels.go the levels and the thresholds compiled from them; detect.go the
// Classifier, its options and its adaptive window; window.go the running
// median a sample is classified by; dwell.go the hysteresis that commits a
// state after MinDwell and emits spans; span.go and summary.go what comes
// out (spans, residency); histogram.go LevelHistogram; carve.go, refine.go
// and monotone.go the passes over spans; latency.go entry and exit
// latencies; online.go the live classifier.
//
// # Latencies
//
// Entry latency is the time from the event that let the drive go down (the
// last I/O completion, or the DEVSLP pin assertion) to the first sample of the
// low state. Exit latency is the time from the event that woke it (the pin
// deassertion, or the first I/O issued) to that I/O's completion — what the
// host actually waited.
//
// # Units
//
// Times are host monotonic times (hostclock.Time: the clock the capture's
// marks, I/O and pin events are on, so spans line up with them) and powers
// units.Watts: Classifier.Push(t, w, busy) takes the aligned host time of
// each sample and its power summed over the drive's rails.
//
// # Where it sits
//
// The states floor (rank 1): a classifier over leaves only (units,
// hostclock, internal/stat); analysis, report and states/nvme/pslevel
// import it.
package detect
