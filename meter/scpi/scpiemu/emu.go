package scpiemu

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/idlewatt/idlewatt/internal/ptyserve"
	"github.com/idlewatt/idlewatt/meter/scpi"
)

// Options configure New. The zero value is a Keysight N6705C whose channel 1
// draws 12.5 mA at 5 V.
type Options struct {
	Family  string  // a scpi.Families name; default n6705
	IDN     string  // default an example of the family's *IDN? reply
	Current float64 // A
	Voltage float64 // V (a current-only family never reports it)
	// Delay is waited before each measurement reply, as an instrument's
	// integration time; 0 answers at once.
	Delay time.Duration
	// Array mode (the family's scpi.ArrayMode): Noise is the readings'
	// Gaussian noise (A rms, from Seed); FetchDelay is added to each array
	// reply after its acquisition (points × interval), as an instrument's
	// processing and transfer time.
	Noise      float64
	FetchDelay time.Duration
	Seed       int64
}

// IDNs are example *IDN? replies, one per family; each detects as its own.
var IDNs = map[string]string{
	"n6705":  "Keysight Technologies,N6705C,MY00000001,D.01.09",
	"k2450":  "KEITHLEY INSTRUMENTS,MODEL 2450,04000001,1.7.3b",
	"k2280s": "KEITHLEY INSTRUMENTS,MODEL 2280S-32-6,4000001,1.02",
	"dp800":  "RIGOL TECHNOLOGIES,DP832,DP8C000001,00.01.14",
	"sdm":    "Siglent Technologies,SDM3065X,SDM36000001,3.01.01.10",
}

// Emulator answers SCPI on a pty like an instrument of its family: *IDN?,
// *CLS, SYST:ERR?, the family's Init commands and its measurement queries
// (channel 1 only; another channel queues -222 "Data out of range"). Anything
// else is pushed onto the error queue as -113 "Undefined header" with no
// reply, as the instruments do.
type Emulator struct {
	opts Options
	fam  scpi.Family
	pty  *ptyserve.Pair

	mu    sync.Mutex
	queue []string
	lines int
	wait  time.Duration // before the current reply (an array's acquisition)
	// array mode
	arrCmds  []arrayCmd
	tint     float64 // s
	points   int
	binary   bool
	acqStart time.Time
	rng      interface{ NormFloat64() float64 }
	done     sync.WaitGroup
	closed   sync.Once
}

// New starts the emulator.
func New(opts Options) (*Emulator, error) {
	if opts.Family == "" {
		opts.Family = "n6705"
	}
	fam, err := scpi.FamilyByName(opts.Family)
	if err != nil {
		return nil, fmt.Errorf("scpiemu: %w", err)
	}
	if opts.IDN == "" {
		opts.IDN = IDNs[fam.Name]
	}
	if opts.Current == 0 && opts.Voltage == 0 {
		opts.Current, opts.Voltage = 0.0125, 5
	}
	if opts.Delay < 0 || opts.FetchDelay < 0 || opts.Noise < 0 {
		return nil, fmt.Errorf("scpiemu: delay %v, fetch delay %v or noise %g is negative", opts.Delay, opts.FetchDelay, opts.Noise)
	}
	pty, err := ptyserve.Open()
	if err != nil {
		return nil, fmt.Errorf("scpiemu: %w", err)
	}
	e := &Emulator{opts: opts, fam: fam, pty: pty}
	e.initArray()
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
		e.wait = 0
		reply, ok, meas := e.answer(cmd)
		wait := e.wait
		e.mu.Unlock()
		if !ok {
			continue
		}
		if meas && wait == 0 {
			wait = e.opts.Delay
		}
		if wait > 0 {
			time.Sleep(wait)
		}
		if _, err := e.pty.Master.Write([]byte(reply + "\n")); err != nil {
			return
		}
	}
}

// answer returns cmd's reply, whether there is one, and whether cmd was a
// measurement.
func (e *Emulator) answer(cmd string) (reply string, ok, meas bool) {
	u := strings.ToUpper(cmd)
	switch u {
	case "*IDN?":
		return e.opts.IDN, true, false
	case "*CLS":
		e.queue = nil
		return "", false, false
	case "SYST:ERR?", "SYSTEM:ERROR?":
		if len(e.queue) == 0 {
			return `+0,"No error"`, true, false
		}
		r := e.queue[0]
		e.queue = e.queue[1:]
		return r, true, false
	}
	for _, c := range e.fam.Init {
		if u == strings.ToUpper(c) {
			return "", false, false
		}
	}
	if reply, ok, meas, handled := e.answerArray(u); handled {
		return reply, ok, meas
	}
	for _, m := range []struct {
		tmpl string
		x    float64
	}{{e.fam.MeasCurr, e.opts.Current}, {e.fam.MeasVolt, e.opts.Voltage}} {
		ch, hit := channel(u, m.tmpl)
		switch {
		case !hit:
			continue
		case ch != 1:
			e.push(`-222,"Data out of range"`)
			return "", false, true
		}
		return fmt.Sprintf("%+.5E", m.x), true, true
	}
	e.push(`-113,"Undefined header"`)
	return "", false, false
}

// initArray sets the array mode's matchers and the family's defaults.
func (e *Emulator) initArray() {
	e.arrCmds = compileArray(e.fam.Array)
	e.tint, e.points = e.fam.Array.Tint, e.fam.Array.Points
	e.rng = newRand(e.opts.Seed)
}

// queueLen is the error queue's depth; like the instruments', a full queue
// keeps its oldest entries and ends with -350 "Queue overflow".
const queueLen = 16

func (e *Emulator) push(msg string) {
	switch {
	case len(e.queue) < queueLen:
		e.queue = append(e.queue, msg)
	default:
		e.queue[queueLen-1] = `-350,"Queue overflow"`
	}
}

// channel matches an upper-cased command against a family template; a
// template without %d is channel 1.
func channel(u, tmpl string) (ch int, ok bool) {
	if tmpl == "" {
		return 0, false
	}
	pre, post, has := strings.Cut(strings.ToUpper(tmpl), "%D")
	if !has {
		return 1, u == pre
	}
	if len(u) <= len(pre)+len(post) || !strings.HasPrefix(u, pre) || !strings.HasSuffix(u, post) {
		return 0, false
	}
	ch, err := strconv.Atoi(u[len(pre) : len(u)-len(post)])
	return ch, err == nil
}
