// Package scpiemu is a pty SCPI instrument (an N6705 look-alike) for tests:
// New(opts) gives Path() and Close(); unknown commands queue -113 errors.
package scpiemu
