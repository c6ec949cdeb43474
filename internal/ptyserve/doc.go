// Package ptyserve opens the pseudo-terminal an emulator serves a meter's
// byte protocol on (meter/ppk2/ppk2emu, meter/scpi/scpiemu): the emulator
// reads and writes the master, the host under test opens the slave's path
// exactly as it would open the device.
//
// # Set-up
//
// The pair comes from github.com/creack/pty, with three changes:
//
//   - The master is moved into Go's poller. pty.Open leaves it blocking,
//     and Close would then not interrupt a Read, or a Write stuck on a pty
//     that a stalled host no longer reads: an emulator's Close would wait
//     for its goroutines forever.
//   - The slave is set raw (cfmakeraw(3) plus 8N1, no flow control):
//     creack/pty leaves it cooked, and echo or CR/LF translation would
//     corrupt binary sample words and echo a host's commands back to it as
//     replies. A host that configures the port itself changes nothing.
//   - The slave stays open in the emulator, so hosts can come and go
//     without the master seeing a hang-up.
//
// # Where it sits
//
// A leaf (rank 0) that imports nothing of the project; the meter emulators
// (meter/hub/hubemu, meter/ppk2/ppk2emu, meter/scpi/scpiemu) import it.
package ptyserve
