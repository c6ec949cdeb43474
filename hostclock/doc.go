// Package hostclock reads the host's monotonic clock: a Time is CLOCK_MONOTONIC in
// nanoseconds.
//
// Every host-side timestamp idlewatt records (I/O issue and completion, mark
// send and receive, state changes) comes from Now, so that samples and events
// from different goroutines, and from different processes on the same host,
// share one timeline. CLOCK_MONOTONIC does not jump with wall-clock changes.
//
// It is a public package because public types name its times in their
// contracts: a capture's start_host, clock marks and meter events
// (meter.MarkEcho, meter.Event), state events (capture.StateEvent) and I/O
// events (workload.IOEvent) all hold its readings.
//
// Where it sits: a leaf (rank 0), standard library only; every floor that
// stamps or reads host time imports it: the meters, workload, capture,
// state detection, analysis and the application layer.
package hostclock
