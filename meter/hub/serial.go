package hub

import (
	"errors"
	"fmt"
	"time"

	"go.bug.st/serial"

	"github.com/idlewatt/idlewatt/internal/serialport"
)

// readTimeout bounds each serial Read, so the byte pump notices a closed
// port promptly and the decoder gets idle ticks on a quiet link.
const readTimeout = 50 * time.Millisecond

// openSerial opens path with go.bug.st/serial at baud 8N1, no flow control,
// through internal/serialport, so the port is locked against a second
// opener (an error matching serialport.ErrInUse names the holder's PID).
// It never asks for modem-status bits (those ioctls fail on a pty), so an
// emulator's pty opens like a real port. A timed-out Read returns (0, nil).
func openSerial(path string, baud int) (serial.Port, error) {
	p, err := serialport.OpenSerial(path, baud)
	if errors.Is(err, serialport.ErrInUse) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%s is not a usable serial port: %w", path, err)
	}
	if err := p.SetReadTimeout(readTimeout); err != nil {
		p.Close()
		return nil, fmt.Errorf("%s: read timeout: %w", path, err)
	}
	// Bytes queued before we opened belong to a previous session.
	p.ResetInputBuffer() //nolint:errcheck // a pty may refuse TCFLSH; stale bytes are resynchronised past anyway
	return p, nil
}

// isClosed reports whether err is go.bug.st/serial's "port closed".
func isClosed(err error) bool {
	var pe *serial.PortError
	return errors.As(err, &pe) && pe.Code() == serial.PortClosed
}
