package hubemu

import (
	"fmt"
	"os"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair with github.com/creack/pty. The
// master is registered with Go's poller (so Close unblocks its reads and
// writes); the slave is put in raw mode so no line discipline touches the
// bytes even before a client configures it, and stays open in the emulator
// so clients can come and go without the master seeing a hang-up.
func openPTY() (master, slave *os.File, err error) {
	m, slave, err := pty.Open()
	if err != nil {
		return nil, nil, fmt.Errorf("open pty: %w", err)
	}
	if master, err = pollable(m); err != nil {
		slave.Close()
		return nil, nil, fmt.Errorf("pty master: %w", err)
	}
	if err := makeRaw(slave); err != nil {
		master.Close()
		slave.Close()
		return nil, nil, fmt.Errorf("raw mode on %s: %w", slave.Name(), err)
	}
	return master, slave, nil
}

// pollable returns f's descriptor as a non-blocking *os.File on Go's
// poller. creack/pty leaves the master blocking; a blocking read would then
// pin the descriptor open after Close, and an unplugged hub's host would
// never see the hang-up.
func pollable(f *os.File) (*os.File, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	nfd := -1
	var derr error
	if err := rc.Control(func(fd uintptr) { nfd, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		derr = err
	}
	f.Close()
	if derr != nil {
		return nil, derr
	}
	if err := unix.SetNonblock(nfd, true); err != nil {
		unix.Close(nfd)
		return nil, err
	}
	return os.NewFile(uintptr(nfd), "/dev/ptmx"), nil
}

// makeRaw is cfmakeraw(3) plus 8N1 without flow control. creack/pty has no
// raw mode and golang.org/x/term is not in the module graph, so the
// termios bits are set here; the speed is left alone (a pty has none).
func makeRaw(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	cerr := rc.Control(func(fd uintptr) {
		t, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
		if err != nil {
			serr = err
			return
		}
		t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON | unix.IXOFF | unix.IXANY
		t.Oflag &^= unix.OPOST
		t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
		t.Cflag &^= unix.CSIZE | unix.PARENB | unix.CSTOPB | unix.CRTSCTS
		t.Cflag |= unix.CS8 | unix.CREAD | unix.CLOCAL
		t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
		serr = unix.IoctlSetTermios(int(fd), unix.TCSETS, t)
	})
	if cerr != nil {
		return cerr
	}
	return serr
}
