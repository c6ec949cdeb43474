package hub

import (
	"time"

	"go.bug.st/serial"

	"github.com/idlewatt/idlewatt/internal/serialport"
)

// readTimeout bounds each serial Read, so the byte pump notices a closed
// port promptly and the decoder gets idle ticks on a quiet link.
const readTimeout = 50 * time.Millisecond

// openSerial opens path at baud 8N1 through internal/serialport, the one
// serial opener of every driver: locked against a second opener (an error
// matching serialport.ErrInUse names the holder's PID), no modem-status
// ioctls (they fail on a pty, so an emulator's pty opens like a real
// port), stale input flushed. A timed-out Read returns (0, nil).
func openSerial(path string, baud int) (serial.Port, error) {
	return serialport.OpenTimeout(path, baud, readTimeout)
}

// isClosed reports whether err is go.bug.st/serial's "port closed".
func isClosed(err error) bool { return serialport.IsClosed(err) }
