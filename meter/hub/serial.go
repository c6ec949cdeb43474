package hub

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/idlewatt/idlewatt/internal/serialport"
)

// readTimeout is the decoder's idle tick on a quiet link (the byte pump's
// Read returns (0, nil) after it).
const readTimeout = 50 * time.Millisecond

// openSerial opens path at baud 8N1, no flow control, through
// internal/serialport's OpenPolled, so the port is locked against a second
// opener (an error matching serialport.ErrInUse names the holder's PID) and
// read through the runtime poller: the pump's Read parks in epoll instead
// of blocking a thread in select(2), which cost more CPU than decoding
// (docs/benchmarks.md, "record CPU"). Closing the port ends a Read at once.
// No modem-status ioctls (they fail on a pty, so an emulator's pty opens
// like a real port); stale input flushed.
func openSerial(path string, baud int) (io.ReadWriteCloser, error) {
	p, err := serialport.OpenPolled(path, baud)
	if errors.Is(err, serialport.ErrInUse) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%s is not a usable serial port: %w", path, err)
	}
	// Bytes queued before we opened belong to a previous session.
	p.ResetInputBuffer() //nolint:errcheck // a pty may refuse TCFLSH; stale bytes are resynchronised past anyway
	return p, nil
}

// isClosed reports whether err is go.bug.st/serial's "port closed" (a port
// handed to New may be one).
func isClosed(err error) bool { return serialport.IsClosed(err) }
