// Package livemetrics exposes a recording's live figures to Prometheus
// (github.com/prometheus/client_golang, the chosen library): per-port power,
// energy, samples, gaps, link CRC errors, the current state and DevSlp
// cycles and verdicts — over HTTP (/metrics) or as a node_exporter textfile.
//
// # Metrics
//
//	idlewatt_power_watts{port,drive}              gauge: mean power of the port's rails over the last block
//	idlewatt_energy_joules_total{port,drive}      counter: Σ V·I / rate_hz over the samples recorded
//	idlewatt_samples_total{port,drive,rail}       counter: rail samples recorded
//	idlewatt_missing_samples_total{reason}        counter: samples in gaps (every channel's, per channel)
//	idlewatt_gaps_total{reason}                   counter: gap records
//	idlewatt_link_crc_errors_total                counter: the meter link's CRC errors (meter.Stats)
//	idlewatt_link_frames_total                    counter: good frames
//	idlewatt_state{port,drive,state}              gauge: 1 for the port's current phase/state, 0 for the others seen
//	idlewatt_devslp_cycles_total{port,drive}      counter: DevSlp cycles run
//	idlewatt_devslp_verdicts_total{port,drive,verdict} counter: pass / fail / inconclusive / not_supported verdicts
//
// Energy here is on the meter's nominal clock (1/rate_hz per sample): a
// live figure. The report's energy_j uses the clock fit and is the number
// of record (docs/lab.md).
//
// # Feeding them
//
// Observer is a capture/record Observer (record's and the rig's
// Config.Observer): it makes the Metrics from the capture's header at
// Start, serves them on its listener, rewrites the textfile at most once a
// second and at Flush (the final figures), turns phase events into the
// state gauge (one series per phase kind: "devslp-cycle:3" counts as
// "devslp-cycle"), and takes a run's verdicts (Verdict). The command line
// only reads --metrics-addr and --metrics-textfile into one.
//
// # Address rule
//
// Listen binds 127.0.0.1 when the address names no host (":9464"), so
// metrics stay on the machine unless the user names another address; an
// address in use is an error before anything is recorded.
//
// # Where it sits
//
// The report layer (rank 4): a capture/record observer; cmd/idlewatt
// (`record --metrics`) imports it.
package livemetrics
