// Package ppk2emu serves the PPK2 byte protocol on a pseudo-terminal, the
// way httptest.Server serves HTTP: New(opts) gives Path() for the driver and
// Close(). It answers GetMetadata with Options.Metadata, tracks the host's
// settings (State), and while streaming sends 100 kS/s of sample words
// paced on wall time, encoding the current a meter.SimDrive draws on its
// 5 V rail (the PPK2's one channel) with the calibration it advertised.
//
// # Faults
//
// Drops skip samples while the counter advances (a USB overrun); Junk
// inserts bytes that break the word alignment; Metadata without END tests
// the host's timeout. A host more than a second behind loses samples, as
// with the device.
//
// # Pseudo-terminal
//
// The pair comes from internal/ptyserve: the slave raw (binary words must
// pass unchanged) and held open (no hang-up between hosts), the master in
// Go's poller, so Close returns even while a Write is stuck on a pty that a
// stalled host no longer reads (TestCloseWithStalledHost).
//
// # Where it sits
//
// The meter floor (rank 1), beside its driver; cmd/idlewatt (`ppk2
// emulate`) imports it.
package ppk2emu
