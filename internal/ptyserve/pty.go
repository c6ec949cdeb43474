package ptyserve

import (
	"errors"
	"fmt"
	"os"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// Pair is an open pseudo-terminal.
type Pair struct {
	// Master is the emulator's end, in Go's poller: Close interrupts a
	// blocked Read or Write on it.
	Master *os.File
	// Slave is held open; hosts open it again by Path.
	Slave *os.File
}

// Open opens a pair set up as the package doc says.
func Open() (*Pair, error) {
	m, s, err := pty.Open()
	if err != nil {
		return nil, fmt.Errorf("open pty: %w", err)
	}
	if err := makeRaw(s); err != nil {
		m.Close()
		s.Close()
		return nil, fmt.Errorf("raw mode on %s: %w", s.Name(), err)
	}
	pm, err := pollable(m)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("pty master of %s: %w", s.Name(), err)
	}
	return &Pair{Master: pm, Slave: s}, nil
}

// Path is the slave's path, the one a host opens.
func (p *Pair) Path() string { return p.Slave.Name() }

// Close closes both ends; a host still attached sees the line drop.
func (p *Pair) Close() error {
	return errors.Join(p.Master.Close(), p.Slave.Close())
}

// pollable returns f's descriptor as a non-blocking *os.File in Go's
// poller, and closes f.
func pollable(f *os.File) (*os.File, error) {
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	nfd := -1
	var derr error
	if err := rc.Control(func(fd uintptr) { nfd, derr = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, derr
	}
	if err := unix.SetNonblock(nfd, true); err != nil {
		unix.Close(nfd)
		return nil, err
	}
	return os.NewFile(uintptr(nfd), f.Name()), nil
}

// makeRaw is cfmakeraw(3) plus 8N1 without flow control; the speed is left
// alone (a pty has none).
func makeRaw(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
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
	}); err != nil {
		return err
	}
	return serr
}
