package scpiemu

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// Options configure New. The zero value is a Keysight N6705C whose channel 1
// draws 12.5 mA at 5 V.
type Options struct {
	IDN     string
	Current float64 // A
	Voltage float64 // V
}

// Emulator answers SCPI like a Keysight N6705 on a pty: *IDN?, *CLS,
// MEAS:CURR? (@n), MEAS:VOLT? (@n), SYST:ERR?. Anything else is pushed onto
// the error queue as -113 "Undefined header" with no reply, as the
// instrument does.
type Emulator struct {
	opts   Options
	master *os.File
	slave  *os.File
	path   string

	mu     sync.Mutex
	queue  []string
	lines  int
	done   sync.WaitGroup
	closed sync.Once
}

// New starts the emulator.
func New(opts Options) (*Emulator, error) {
	if opts.IDN == "" {
		opts.IDN = "Keysight Technologies,N6705C,MY00000001,D.01.09"
	}
	if opts.Current == 0 && opts.Voltage == 0 {
		opts.Current, opts.Voltage = 0.0125, 5
	}
	m, s, path, err := openPTY()
	if err != nil {
		return nil, fmt.Errorf("scpiemu: %w", err)
	}
	e := &Emulator{opts: opts, master: m, slave: s, path: path}
	e.done.Add(1)
	go e.serve()
	return e, nil
}

// Path is the pty a host opens.
func (e *Emulator) Path() string { return e.path }

// Lines returns the number of command lines received.
func (e *Emulator) Lines() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lines
}

// Close stops the emulator.
func (e *Emulator) Close() error {
	e.closed.Do(func() {
		e.master.Close()
		e.slave.Close()
		e.done.Wait()
	})
	return nil
}

func (e *Emulator) serve() {
	defer e.done.Done()
	sc := bufio.NewScanner(e.master)
	for sc.Scan() {
		cmd := strings.TrimSpace(sc.Text())
		if cmd == "" {
			continue
		}
		e.mu.Lock()
		e.lines++
		reply, ok := e.answer(cmd)
		e.mu.Unlock()
		if ok {
			if _, err := e.master.Write([]byte(reply + "\n")); err != nil {
				return
			}
		}
	}
}

func (e *Emulator) answer(cmd string) (string, bool) {
	u := strings.ToUpper(cmd)
	switch {
	case u == "*IDN?":
		return e.opts.IDN, true
	case u == "*CLS":
		e.queue = nil
		return "", false
	case u == "SYST:ERR?" || u == "SYSTEM:ERROR?":
		if len(e.queue) == 0 {
			return `+0,"No error"`, true
		}
		r := e.queue[0]
		e.queue = e.queue[1:]
		return r, true
	case strings.HasPrefix(u, "MEAS:CURR? (@") || strings.HasPrefix(u, "MEAS:VOLT? (@"):
		if !strings.HasSuffix(u, "(@1)") {
			e.queue = append(e.queue, `-222,"Data out of range"`)
			return "", false
		}
		if strings.HasPrefix(u, "MEAS:CURR") {
			return fmt.Sprintf("%+.5E", e.opts.Current), true
		}
		return fmt.Sprintf("%+.5E", e.opts.Voltage), true
	}
	e.queue = append(e.queue, `-113,"Undefined header"`)
	return "", false
}

// openPTY opens a pseudo-terminal pair (github.com/creack/pty) with the
// slave in raw mode, so any host, not only ours, sees bytes unchanged, and
// kept open, so the master does not see hang-ups between host connections.
func openPTY() (master, slave *os.File, path string, err error) {
	m, s, err := pty.Open()
	if err != nil {
		return nil, nil, "", err
	}
	if err := makeRaw(s); err != nil {
		m.Close()
		s.Close()
		return nil, nil, "", fmt.Errorf("pty %s: %v", s.Name(), err)
	}
	pm, err := pollable(m)
	if err != nil {
		s.Close()
		return nil, nil, "", fmt.Errorf("pty %s: %v", s.Name(), err)
	}
	return pm, s, s.Name(), nil
}

// makeRaw sets f's line discipline raw (creack/pty leaves it cooked, with
// echo: the host would read its own commands back as replies).
func makeRaw(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var terr error
	if err := rc.Control(func(fd uintptr) {
		t, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
		if err != nil {
			terr = err
			return
		}
		t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
		t.Oflag &^= unix.OPOST
		t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
		t.Cflag &^= unix.CSIZE | unix.PARENB
		t.Cflag |= unix.CS8
		terr = unix.IoctlSetTermios(int(fd), unix.TCSETS, t)
	}); err != nil {
		return err
	}
	return terr
}

// pollable returns f's descriptor as a File in Go's poller and closes f.
// pty.Open calls Fd(), which leaves the master blocking: Close would then
// not interrupt the serving goroutine's Read while a host holds the slave,
// and Close of the emulator would wait for it forever.
func pollable(f *os.File) (*os.File, error) {
	defer f.Close()
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}
