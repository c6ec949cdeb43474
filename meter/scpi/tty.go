package scpi

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// openTTY opens a serial device (or pty) raw, 8N1, with no modem-status
// ioctls (they fail on a pty). This uses
// x/sys/unix directly rather than go.bug.st/serial because go.mod does not
// carry that module yet; the file is the only place to change to swap.
func openTTY(path string, baud uint32) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	var terr error
	cerr := rc.Control(func(fd uintptr) {
		t, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
		if err != nil {
			terr = err
			return
		}
		t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON | unix.IXOFF
		t.Oflag &^= unix.OPOST
		t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
		t.Cflag &^= unix.CSIZE | unix.PARENB | unix.CSTOPB
		t.Cflag |= unix.CS8 | unix.CREAD | unix.CLOCAL
		t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
		if b, ok := bauds[baud]; ok {
			t.Cflag &^= unix.CBAUD
			t.Cflag |= b
			t.Ispeed, t.Ospeed = baud, baud
		}
		terr = unix.IoctlSetTermios(int(fd), unix.TCSETS, t)
	})
	if cerr != nil || terr != nil {
		f.Close()
		return nil, fmt.Errorf("%s is not a serial device: %v", path, errorsJoin(cerr, terr))
	}
	return f, nil
}

func errorsJoin(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

var bauds = map[uint32]uint32{9600: unix.B9600, 19200: unix.B19200, 38400: unix.B38400, 57600: unix.B57600,
	115200: unix.B115200, 230400: unix.B230400, 460800: unix.B460800, 921600: unix.B921600}
