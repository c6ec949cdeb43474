// Command simchart draws one simulated PCMark-7-like minute for the two
// JMF667H A19 profiles: power over time as the hub would sample it (10 kS/s,
// shown as 1 ms means), under max_performance (top) and
// med_power_with_dipm (bottom). It regenerates
// docs/img/drivesim-pcmark-minute.png:
//
//	go run ./states/drivesim/internal/simchart -out docs/img/drivesim-pcmark-minute.png -overwrite
//
// The I/O script is synthetic: bursts of 0.1–1.5 s separated by idle gaps
// of 1–6 s; in a burst requests arrive every 2 ms on average (exponential),
// 70 % reads of 4–64 KiB and 30 % writes of 16–256 KiB, at queue depth 1. What matters for power is the
// burst/gap structure, not the exact mix (Futuremark's PCMark 7 Technical
// Guide publishes the mix of only two of its seven storage traces; see
// docs/workload.md).
//
// Where it sits: a `go run` tool beside states/drivesim (rank 1.5) that
// draws one docs image; nothing imports it.
package main
