// Package serialport is the one place a serial device, or a
// pseudo-terminal, is opened for the meter drivers that talk over one
// (meter/hub through OpenPolled; meter/ppk2, meter/linemeter, meter/scpi
// through Open, which is built on OpenSerial; OpenTimeout, also on
// OpenSerial, is the hub's former opener).
//
// # Exclusive access
//
// OpenSerial (and Open, OpenTimeout, OpenPolled) first takes Acquire's lock: flock
// (LOCK_EX|LOCK_NB) on a descriptor of its own for the device node, held
// until the port is closed and dropped by the kernel if the process dies.
// A second opener gets an *InUseError (errors.Is ErrInUse): "port PATH in
// use by PID N (comm)", the PID from /proc/locks. Unlike TIOCEXCL (which
// go.bug.st/serial also sets) the flock binds root, as idlewatt usually
// runs; TIOCEXCL's EBUSY for other users is reported the same way.
//
// # Opening
//
// Open uses go.bug.st/serial, raw 8N1 at the given baud rate (a CDC-ACM
// device or a pty ignores it). Mode.InitialStatusBits stays nil, so no
// modem-status ioctl is made: they fail on a pty, and none of the meters
// needs DTR or RTS.
//
// OpenPolled (meter/hub) opens the same way without go.bug.st/serial: its
// own termios2 raw 8N1 at any baud rate, TIOCEXCL and the flock, as an
// *os.File on the runtime poller. Its Read parks in epoll and reads with a
// raw system call, where go.bug.st/serial blocks a thread in select(2):
// that blocked thread kept the runtime's monitor waking and was most of
// record's CPU (docs/benchmarks.md).
//
// # Timeouts and deadlines
//
// OpenTimeout gives go.bug.st/serial's own semantics: a per-Read timeout
// after which Read returns (0, nil), a byte pump's idle tick; it flushes
// bytes queued before the open.
//
// The drivers are written against *os.File's deadline semantics, which a
// serial.Port lacks: it has one per-port read timeout instead, and a read
// that times out returns (0, nil) rather than an error (bufio takes a run
// of those for io.ErrNoProgress). Port.Read waits in slices of PollSlice
// and returns os.ErrDeadlineExceeded once the deadline set by
// SetReadDeadline has passed, so a deadline set from another goroutine
// (to stop a stream) takes effect within one slice.
//
// # Where it sits
//
// A leaf (rank 0) that imports nothing of the project; the serial meter
// drivers (meter/hub, meter/ppk2, meter/scpi, meter/linemeter) and
// cmd/idlewatt import it.
package serialport
