// Package scpiemu is a pty SCPI instrument for tests and `idlewatt scpi
// emulate`: New(opts) gives Path() and Close(). It answers as any family of
// scpi.Families (Options.Family, default n6705): *IDN?, *CLS, SYST:ERR?, the
// family's Init commands and its measurement queries on channel 1, after
// Options.Delay (an integration time). Unknown commands queue -113
// "Undefined header" with no reply; another channel queues -222.
//
// # Array mode
//
// It also answers the family's scpi.ArrayMode commands (N6705
// SENS:SWE:TINT/POIN, FORM REAL|ASC, MEAS:ARR:CURR?; 2280S trace buffer): it
// rounds the interval to a multiple of the family's MinTint, as instruments
// round to their timebase, and answers a fetch once its acquisition (points
// × interval from the first Arm command, else from the fetch) is over, plus
// Options.FetchDelay, with the current plus Gaussian Options.Noise, in
// ASCII or as a float32 big-endian definite-length block.
//
// The pty comes from internal/ptyserve (slave raw and held open, master in
// Go's poller), so Close returns even while a host still holds the slave.
//
// # Where it sits
//
// The meter floor (rank 1), beside its driver; cmd/idlewatt (`scpi
// emulate`) imports it.
package scpiemu
