package hub

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// openSerial opens a tty raw at baud 8N1 with no flow control and no
// modem-status ioctls (they fail on a pty). The file is non-blocking and
// registered with Go's poller, so reads honour deadlines and Close unblocks
// a pending Read. Stale input is flushed.
func openSerial(path string, baud int) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	var serr error
	cerr := rc.Control(func(fd uintptr) { serr = makeRaw(int(fd), baud) })
	if cerr != nil || serr != nil {
		f.Close()
		return nil, fmt.Errorf("%s is not a usable serial port: %v", path, orErr(serr, cerr))
	}
	return f, nil
}

func orErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

var baudFlags = map[int]uint32{
	9600: unix.B9600, 19200: unix.B19200, 38400: unix.B38400, 57600: unix.B57600, 115200: unix.B115200,
	230400: unix.B230400, 460800: unix.B460800, 921600: unix.B921600, 1000000: unix.B1000000,
	2000000: unix.B2000000, 3000000: unix.B3000000, 4000000: unix.B4000000,
}

// makeRaw puts the tty in raw 8N1 mode at baud. It is also used by the
// emulator's pty (MakeRaw).
func makeRaw(fd, baud int) error {
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return err
	}
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON | unix.IXOFF | unix.IXANY
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB | unix.CSTOPB | unix.CRTSCTS
	t.Cflag |= unix.CS8 | unix.CREAD | unix.CLOCAL
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	if baud > 0 {
		b, ok := baudFlags[baud]
		if !ok {
			return fmt.Errorf("unsupported baud rate %d", baud)
		}
		t.Cflag = t.Cflag&^unix.CBAUD | b
		t.Ispeed, t.Ospeed = b, b
	}
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, t); err != nil {
		return err
	}
	return unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH)
}

// MakeRaw puts an open tty in raw mode without changing its speed; the
// emulator applies it to its pty so no line discipline touches the bytes
// before a client configures the port.
func MakeRaw(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = makeRaw(int(fd), 0) }); err != nil {
		return err
	}
	return serr
}
