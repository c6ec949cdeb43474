package scpiemu

import (
	"bufio"
	"fmt"
	"strings"
	"sync"

	"github.com/idlewatt/idlewatt/internal/ptyserve"
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
	opts Options
	pty  *ptyserve.Pair

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
	pty, err := ptyserve.Open()
	if err != nil {
		return nil, fmt.Errorf("scpiemu: %w", err)
	}
	e := &Emulator{opts: opts, pty: pty}
	e.done.Add(1)
	go e.serve()
	return e, nil
}

// Path is the pty a host opens.
func (e *Emulator) Path() string { return e.pty.Path() }

// Lines returns the number of command lines received.
func (e *Emulator) Lines() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lines
}

// Close stops the emulator.
func (e *Emulator) Close() error {
	e.closed.Do(func() {
		e.pty.Close()
		e.done.Wait()
	})
	return nil
}

func (e *Emulator) serve() {
	defer e.done.Done()
	sc := bufio.NewScanner(e.pty.Master)
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
			if _, err := e.pty.Master.Write([]byte(reply + "\n")); err != nil {
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
