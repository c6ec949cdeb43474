package serialport

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// OpenPolled opens path raw 8N1 at baud, locked against other openers as
// OpenSerial is, as a descriptor on Go's runtime poller: a Read waiting for
// bytes parks its goroutine in epoll, where go.bug.st/serial's Read blocks
// a thread in select(2). A thread blocked in a system call makes the
// runtime's monitor wake every 20 µs–10 ms to hand its P to another thread;
// at a hub's 180 reads a second that churn was most of record's CPU
// (docs/benchmarks.md, "record CPU"). Close unblocks a Read at once (it
// returns os.ErrClosed), so no read timeout is needed to notice a close.
//
// Linux only (termios2 sets any baud rate); elsewhere it is OpenSerial.
func OpenPolled(path string, baud int) (*PolledPort, error) {
	l, err := Acquire(path)
	if err != nil {
		return nil, err
	}
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		l.Release()
		if errors.Is(err, unix.EBUSY) {
			return nil, &InUseError{Path: path}
		}
		return nil, err
	}
	if err := rawMode(fd, baud); err != nil {
		unix.Close(fd)
		l.Release()
		return nil, err
	}
	// As go.bug.st/serial does: other users' opens fail with EBUSY (the
	// flock is what binds root). A pty may refuse it; the flock holds.
	_ = unix.IoctlSetInt(fd, unix.TIOCEXCL, 0)
	f := os.NewFile(uintptr(fd), path)
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		l.Release()
		return nil, err
	}
	p := &PolledPort{File: f, rc: rc, lock: l}
	p.readFn = p.rd.read
	return p, nil
}

// rawMode sets fd raw 8N1 at baud, no flow control, reads returning as soon
// as a byte is there — go.bug.st/serial's settings — through termios2, so
// any rate (921 600 included) is set the same way.
func rawMode(fd, baud int) error {
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS2)
	if err != nil {
		return fmt.Errorf("not a terminal: %w", err)
	}
	t.Cflag |= unix.CREAD | unix.CLOCAL
	t.Lflag &^= unix.ICANON | unix.ECHO | unix.ECHOE | unix.ECHOK | unix.ECHONL | unix.ECHOCTL | unix.ECHOPRT | unix.ECHOKE | unix.ISIG | unix.IEXTEN
	t.Iflag &^= unix.IXON | unix.IXOFF | unix.IXANY | unix.INPCK | unix.IGNPAR | unix.PARMRK | unix.ISTRIP | unix.IGNBRK | unix.BRKINT | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IUCLC
	t.Oflag &^= unix.OPOST
	t.Cflag &^= unix.CSIZE | unix.PARENB | unix.CSTOPB | unix.CRTSCTS
	t.Cflag |= unix.CS8
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	if baud > 0 {
		t.Cflag &^= unix.CBAUD
		t.Cflag |= unix.BOTHER
		t.Ispeed, t.Ospeed = uint32(baud), uint32(baud)
	}
	if err := unix.IoctlSetTermios(fd, unix.TCSETS2, t); err != nil {
		return fmt.Errorf("setting raw 8N1 at %d baud: %w", baud, err)
	}
	return nil
}

// PolledPort is a serial port as an *os.File (Read, Write, deadlines, Close
// through the runtime poller) holding the port's lock until Close.
type PolledPort struct {
	*os.File
	rc     syscall.RawConn
	closed atomic.Bool
	lock   *Lock

	rmu    sync.Mutex // one Read at a time: rd is its state
	rd     rawRead
	readFn func(uintptr) bool // rd.read, bound once (a closure per Read allocated)
}

// Read reads what the port has (at least one byte), waiting in the runtime
// poller until it has some. The read itself is a raw system call: on a
// non-blocking descriptor it cannot block, and unlike os.File.Read's it does
// not tell the runtime a thread may be stuck, which woke the runtime's
// monitor on every read (each wake-up then polled for another millisecond).
// It allocates nothing (the read's state lives in the port, one Read at a
// time). A closed port returns os.ErrClosed, a hung-up one the read's
// error (EIO).
func (p *PolledPort) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	p.rmu.Lock()
	p.rd = rawRead{b: b}
	err := p.rc.Read(p.readFn)
	n, errno := p.rd.n, p.rd.errno
	p.rd.b = nil
	p.rmu.Unlock()
	switch {
	case p.closed.Load():
		return 0, os.ErrClosed
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, &os.PathError{Op: "read", Path: p.Name(), Err: errno}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// rawRead is one Read's system call: into b, its count and error.
type rawRead struct {
	b     []byte
	n     int
	errno syscall.Errno
}

// read is RawConn.Read's function: false waits in the poller.
func (r *rawRead) read(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&r.b[0])), uintptr(len(r.b)))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		r.n, r.errno = int(n), e
		return true
	}
}

// ResetInputBuffer drops bytes received but not yet read.
func (p *PolledPort) ResetInputBuffer() error {
	rc, err := p.File.SyscallConn()
	if err != nil {
		return err
	}
	var ierr error
	if err := rc.Control(func(fd uintptr) { ierr = unix.IoctlSetInt(int(fd), unix.TCFLSH, unix.TCIFLUSH) }); err != nil {
		return err
	}
	return ierr
}

// Close closes the port (a Read in progress returns os.ErrClosed) and
// releases its lock.
func (p *PolledPort) Close() error {
	p.closed.Store(true)
	err := p.File.Close()
	if lerr := p.lock.Release(); err == nil {
		err = lerr
	}
	return err
}
