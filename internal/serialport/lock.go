package serialport

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"go.bug.st/serial"
	"golang.org/x/sys/unix"
)

// ErrInUse is matched by *InUseError: another process holds the port.
var ErrInUse = errors.New("port in use")

// InUseError says which process holds a port idlewatt wanted.
type InUseError struct {
	Path string
	PID  int    // 0 if the holder could not be found
	Comm string // the holder's command name, if readable
}

func (e *InUseError) Error() string {
	switch {
	case e.PID > 0 && e.Comm != "":
		return fmt.Sprintf("port %s in use by PID %d (%s)", e.Path, e.PID, e.Comm)
	case e.PID > 0:
		return fmt.Sprintf("port %s in use by PID %d", e.Path, e.PID)
	}
	return fmt.Sprintf("port %s in use by another process (it is opened exclusively)", e.Path)
}

// Is makes errors.Is(err, ErrInUse) true.
func (e *InUseError) Is(target error) bool { return target == ErrInUse }

// Lock is an exclusive hold on a port's device node: flock(LOCK_EX) on a
// descriptor of its own, released by Release or when the process dies, so a
// killed idlewatt leaves no stale lock behind. It binds every idlewatt
// process, root included; go.bug.st/serial's TIOCEXCL (set on every port
// it opens) adds the kernel's refusal for other programs that are not root.
type Lock struct {
	mu   sync.Mutex
	fd   int // -1 once released
	path string
}

// Acquire locks path's device node (symlinks followed, so two names of one
// port are one lock). A port already locked, or opened exclusively
// (TIOCEXCL, EBUSY), is an *InUseError naming the holder's PID when
// /proc/locks shows it.
func Acquire(path string) (*Lock, error) {
	// O_NONBLOCK: a modem line without carrier must not hang the open;
	// O_NOCTTY: a port never becomes our controlling terminal.
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.EBUSY) {
		return nil, inUse(path)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		unix.Close(fd)
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, inUse(path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &Lock{fd: fd, path: path}, nil
}

// Release drops the lock. It is safe to call more than once.
func (l *Lock) Release() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fd < 0 {
		return nil
	}
	fd := l.fd
	l.fd = -1
	return unix.Close(fd) // closing the descriptor drops its flock
}

func inUse(path string) error {
	e := &InUseError{Path: path}
	e.PID = lockHolder(path)
	if e.PID > 0 {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(e.PID) + "/comm"); err == nil {
			e.Comm = strings.TrimSpace(string(b))
		}
	}
	return e
}

// lockHolder returns the PID /proc/locks gives for a FLOCK on path's inode,
// or 0. Lines look like "1: FLOCK  ADVISORY  WRITE 4242 00:19:5 0 EOF"
// (device major:minor in hex, inode in decimal); "->" lines are waiters.
func lockHolder(path string) int {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0
	}
	defer f.Close()
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 || fs[1] != "FLOCK" || fs[5] != want {
			continue
		}
		if pid, err := strconv.Atoi(fs[4]); err == nil && pid > 0 {
			return pid
		}
	}
	return 0
}

// OpenSerial opens path raw 8N1 at baud with go.bug.st/serial, holding an
// Acquire lock for as long as the port is open: the returned port's Close
// releases it. Mode.InitialStatusBits stays nil, so no modem-status ioctl
// is made (they fail on a pty). Every driver that opens a serial port or
// pty goes through here.
func OpenSerial(path string, baud int) (serial.Port, error) {
	l, err := Acquire(path)
	if err != nil {
		return nil, err
	}
	p, err := serial.Open(path, &serial.Mode{BaudRate: baud, DataBits: 8, Parity: serial.NoParity, StopBits: serial.OneStopBit})
	if err != nil {
		l.Release()
		return nil, err
	}
	return &lockedPort{Port: p, lock: l}, nil
}

// lockedPort is a serial.Port that releases its lock when closed.
type lockedPort struct {
	serial.Port
	lock *Lock
}

func (p *lockedPort) Close() error {
	err := p.Port.Close()
	if lerr := p.lock.Release(); err == nil {
		err = lerr
	}
	return err
}
