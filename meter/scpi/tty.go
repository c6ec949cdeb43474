package scpi

import (
	"os"
	"sync"
	"time"

	"go.bug.st/serial"
)

// openTTY opens a serial device (or pty) raw 8N1 at baud with
// go.bug.st/serial. Mode.InitialStatusBits stays nil so no modem-status
// ioctl is made: they fail on a pty.
func openTTY(path string, baud uint32) (*ttyPort, error) {
	p, err := serial.Open(path, &serial.Mode{BaudRate: int(baud), DataBits: 8, Parity: serial.NoParity, StopBits: serial.OneStopBit})
	if err != nil {
		return nil, err
	}
	return &ttyPort{p: p}, nil
}

// pollSlice bounds one wait inside Read, so a deadline set from another
// goroutine takes effect within it.
const pollSlice = 50 * time.Millisecond

// ttyPort gives a serial.Port the deadline semantics of *os.File, which the
// driver is written against: serial.Port has a per-port timeout instead, and
// a read that times out returns (0, nil) rather than an error (bufio would
// take a run of those for io.ErrNoProgress). Read waits in slices of
// pollSlice and returns os.ErrDeadlineExceeded once the deadline has
// passed. SetReadTimeout is called only from Read, so it never races with
// the library's own read of the timeout.
type ttyPort struct {
	p        serial.Port
	mu       sync.Mutex
	deadline time.Time
}

func (t *ttyPort) SetReadDeadline(d time.Time) error {
	t.mu.Lock()
	t.deadline = d
	t.mu.Unlock()
	return nil
}

func (t *ttyPort) Read(b []byte) (int, error) {
	for {
		t.mu.Lock()
		d := t.deadline
		t.mu.Unlock()
		wait := pollSlice
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

func (t *ttyPort) Write(b []byte) (int, error) { return t.p.Write(b) }
func (t *ttyPort) Close() error                { return t.p.Close() }
