// Package scpiemu is a pty SCPI instrument (an N6705 look-alike) for tests:
// New(opts) gives Path() and Close(); unknown commands queue -113 errors.
//
// The pty comes from internal/ptyserve (slave raw and held open, master in
// Go's poller), so Close returns even while a host still holds the slave.
package scpiemu
