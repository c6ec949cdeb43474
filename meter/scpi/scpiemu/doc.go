// Package scpiemu is a pty SCPI instrument for tests and `idlewatt scpi
// emulate`: New(opts) gives Path() and Close(). It answers as any family of
// scpi.Families (Options.Family, default n6705): *IDN?, *CLS, SYST:ERR?, the
// family's Init commands and its measurement queries on channel 1, after
// Options.Delay (an integration time). Unknown commands queue -113
// "Undefined header" with no reply; another channel queues -222.
//
// The pty comes from internal/ptyserve (slave raw and held open, master in
// Go's poller), so Close returns even while a host still holds the slave.
package scpiemu
