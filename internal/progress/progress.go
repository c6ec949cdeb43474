package progress

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/idlewatt/idlewatt/internal/textsafe"
)

// After is how long a step runs silent; Every how often it is said then.
const (
	After = 2 * time.Second
	Every = time.Second
)

// Line prints "who: step: 63 % after 4 s" lines for the current step.
type Line struct {
	w    io.Writer
	who  string
	now  func() time.Time
	mu   sync.Mutex
	step func() string
	// since is when the step began; frac, if set, is how much of it is
	// done (0–1; negative: unknown).
	since time.Time
	frac  func() float64
	last  time.Time // when a line was last printed for this step
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
}

// New returns a line on w for who, on the clock now, that prints only when
// Tick is called.
func New(w io.Writer, who string, now func() time.Time) *Line {
	return &Line{w: w, who: who, now: now}
}

// Start returns a line on w that ticks on its own, four times per Every,
// in a goroutine goFn starts; Stop it.
func Start(w io.Writer, who string, goFn func(func())) *Line {
	p := New(w, who, time.Now)
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	goFn(func() {
		defer close(p.done)
		t := time.NewTicker(Every / 4)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.Tick()
			}
		}
	})
	return p
}

// Step starts a new step named name (frac may be nil).
func (p *Line) Step(name string, frac func() float64) {
	p.StepFunc(func() string { return name }, frac)
}

// StepFunc starts a new step whose name is asked at each line.
func (p *Line) StepFunc(name func() string, frac func() float64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.step, p.frac, p.since, p.last = name, frac, p.now(), time.Time{}
}

// Passes starts the step of reading path pass by pass: pass gives the
// current pass (from 1), frac how much of it is read.
func (p *Line) Passes(path string, pass func() int32, frac func() float64) {
	p.StepFunc(func() string {
		return fmt.Sprintf("reading %s (pass %d)", path, max(1, pass()))
	}, frac)
}

// Tick prints the line when the step has run After and the last line is
// Every old.
func (p *Line) Tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if p.step == nil || now.Sub(p.since) < After || (!p.last.IsZero() && now.Sub(p.last) < Every) {
		return
	}
	p.last = now
	line := fmt.Sprintf("%s: %s", p.who, textsafe.Terminal(p.step()))
	if p.frac != nil {
		if f := p.frac(); f >= 0 {
			line += fmt.Sprintf(": %.0f %%", 100*f)
		}
	}
	fmt.Fprintf(p.w, "%s after %.0f s\n", line, now.Sub(p.since).Seconds())
}

// Stop ends the line's goroutine; calling it again does nothing.
func (p *Line) Stop() {
	if p == nil || p.stop == nil {
		return
	}
	p.once.Do(func() {
		close(p.stop)
		<-p.done
	})
}
