package serialport

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"go.bug.st/serial"
)

// PollSlice bounds one wait inside Read, so a deadline set from another
// goroutine takes effect within it.
const PollSlice = 50 * time.Millisecond

// Port is a serial port with *os.File's read-deadline semantics. Read,
// Write and Close may be called concurrently with SetReadDeadline.
type Port struct {
	p        serial.Port
	mu       sync.Mutex
	deadline time.Time
}

// Open opens path raw 8N1 at baud without modem-status ioctls, locked
// against other openers as OpenSerial says (an *InUseError if it is held).
func Open(path string, baud int) (*Port, error) {
	p, err := OpenSerial(path, baud)
	if err != nil {
		return nil, err
	}
	return &Port{p: p}, nil
}

// SetReadDeadline sets the time after which Read returns
// os.ErrDeadlineExceeded; the zero time means none.
func (t *Port) SetReadDeadline(d time.Time) error {
	t.mu.Lock()
	t.deadline = d
	t.mu.Unlock()
	return nil
}

// Read reads at least one byte, or returns os.ErrDeadlineExceeded once the
// deadline has passed; it never returns (0, nil). SetReadTimeout is called
// only from here, so it never races with the library's own read of the
// timeout.
func (t *Port) Read(b []byte) (int, error) {
	for {
		t.mu.Lock()
		d := t.deadline
		t.mu.Unlock()
		wait := PollSlice
		if !d.IsZero() {
			left := time.Until(d)
			if left <= 0 {
				return 0, os.ErrDeadlineExceeded
			}
			wait = min(wait, left)
		}
		if err := t.p.SetReadTimeout(wait); err != nil {
			return 0, err
		}
		n, err := t.p.Read(b)
		if n > 0 || err != nil {
			return n, err
		}
	}
}

// Write writes b to the port.
func (t *Port) Write(b []byte) (int, error) { return t.p.Write(b) }

// Close closes the port; a Read in progress returns an error.
func (t *Port) Close() error { return t.p.Close() }

// OpenTimeout opens path as OpenSerial does and sets a per-Read timeout (a
// timed-out Read returns (0, nil): the hub's byte pump wants idle ticks on
// a quiet link, not deadlines). Bytes queued before the open belong to a
// previous session and are flushed. A port not usable as a serial port is
// an error naming path; a held one is an *InUseError as from OpenSerial.
func OpenTimeout(path string, baud int, readTimeout time.Duration) (serial.Port, error) {
	p, err := OpenSerial(path, baud)
	if errors.Is(err, ErrInUse) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%s is not a usable serial port: %w", path, err)
	}
	if err := p.SetReadTimeout(readTimeout); err != nil {
		p.Close()
		return nil, fmt.Errorf("%s: read timeout: %w", path, err)
	}
	p.ResetInputBuffer() //nolint:errcheck // a pty may refuse TCFLSH; stale bytes are resynchronised past anyway
	return p, nil
}

// IsClosed reports whether err is go.bug.st/serial's "port closed".
func IsClosed(err error) bool {
	var pe *serial.PortError
	return errors.As(err, &pe) && pe.Code() == serial.PortClosed
}
