// Package scpiemu is a pty SCPI instrument (an N6705 look-alike) for tests:
// New(opts) gives Path() and Close(); unknown commands queue -113 errors.
//
// The pty comes from github.com/creack/pty, with the slave set raw and held
// open, and the master moved into Go's poller so Close returns even while a
// host still holds the slave (pty.Open leaves the master blocking).
package scpiemu
