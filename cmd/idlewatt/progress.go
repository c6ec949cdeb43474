package main

// The progress line of the commands that read a whole capture (report,
// plot, export): once a step has taken progressAfter it says on stderr what
// the command is doing, then again every progressEvery, so a long step on a
// big capture is never silent (issue 26: a 4096-channel report ran 12
// minutes without a word). Recording commands have their own line
// (record.ProgressLine).

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/internal/textsafe"
)

const (
	progressAfter = 2 * time.Second
	progressEvery = time.Second
)

// stepProgress prints "who: step: 63 % after 4 s" lines for the current
// step. Its clock and ticks are fields so that tests drive it without
// waiting.
type stepProgress struct {
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

// startProgress starts the progress line of cmd on its stderr; Stop it.
func startProgress(cmd *cobra.Command, who string) *stepProgress {
	p := newStepProgress(cmd.ErrOrStderr(), who, time.Now)
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	goSafe(cmd.ErrOrStderr(), func() {
		defer close(p.done)
		t := time.NewTicker(progressEvery / 4)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.tick()
			}
		}
	})
	return p
}

func newStepProgress(w io.Writer, who string, now func() time.Time) *stepProgress {
	return &stepProgress{w: w, who: who, now: now}
}

// Step starts a new step named name (frac may be nil).
func (p *stepProgress) Step(name string, frac func() float64) {
	p.StepFunc(func() string { return name }, frac)
}

// StepFunc starts a new step whose name is asked at each line.
func (p *stepProgress) StepFunc(name func() string, frac func() float64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.step, p.frac, p.since, p.last = name, frac, p.now(), time.Time{}
}

// Passes starts the step of reading the capture at path, pass by pass.
func (p *stepProgress) Passes(path string, at *readPos) {
	p.StepFunc(func() string {
		return fmt.Sprintf("reading %s (pass %d)", path, max(1, at.pass.Load()))
	}, at.frac)
}

// tick prints the line when the step has run progressAfter and the last
// line is progressEvery old.
func (p *stepProgress) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if p.step == nil || now.Sub(p.since) < progressAfter || (!p.last.IsZero() && now.Sub(p.last) < progressEvery) {
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
func (p *stepProgress) Stop() {
	if p == nil || p.stop == nil {
		return
	}
	p.once.Do(func() {
		close(p.stop)
		<-p.done
	})
}
