package record

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// ProgressInterval is how often a progress reporter prints a line.
const ProgressInterval = time.Second

// ProgressOptions say what a progress line shows.
type ProgressOptions struct {
	// Label is the line's first word: the command ("record", "measure",
	// "idle", "devslp verify", "demo").
	Label string
	// Total is the planned length, shown as elapsed/total; 0: open-ended.
	Total time.Duration
	// Replayed: a recorded stream replayed unpaced, so no total and no CRC
	// count (its Stats are read once, at the end).
	Replayed bool
	// Phase, if set, names the phase being recorded; it follows the time.
	Phase func() string
	// InPlace rewrites the line in place (a terminal) instead of writing
	// one line each time (logs, CI).
	InPlace bool
	// Every is the interval between lines; 0 is ProgressInterval.
	Every time.Duration
}

// ProgressLine is one progress line, without its line ending:
//
//	record 5s/10s  1000 samples  p1 0.400 W  p2 -  crc 0  gaps 0 (0 lost)
//	idle 3s  settle:min_power            300 samples  p1 0.120 W  crc 0  gaps 0 (0 lost)
//
// then "meter gone 2s, reconnecting" or "reconnected N×" after an outage,
// and "mark errors N" when clock marks failed. Every command that records
// prints this line (docs/cli.md).
func ProgressLine(o ProgressOptions, elapsed time.Duration, pr Progress) string {
	var b strings.Builder
	b.WriteString(o.Label)
	b.WriteByte(' ')
	b.WriteString(elapsed.Truncate(time.Second).String())
	if o.Total > 0 && !o.Replayed {
		b.WriteString("/" + o.Total.String())
	}
	if o.Phase != nil {
		fmt.Fprintf(&b, "  %-28s", o.Phase())
	}
	fmt.Fprintf(&b, "  %d samples", pr.Samples)
	b.WriteString(pr.PowerString())
	if !o.Replayed {
		fmt.Fprintf(&b, "  crc %d", pr.Stats.CRCErrors)
	}
	fmt.Fprintf(&b, "  gaps %d (%d lost)", pr.Gaps, pr.Lost)
	if pr.DownNow > 0 {
		fmt.Fprintf(&b, "  meter gone %s, reconnecting", pr.DownNow.Truncate(time.Second))
	} else if pr.Disconnects > 0 {
		fmt.Fprintf(&b, "  reconnected %d×", pr.Disconnects)
	}
	if pr.MarkErrors > 0 {
		fmt.Fprintf(&b, "  mark errors %d", pr.MarkErrors)
	}
	return b.String()
}

// ReportProgress writes a ProgressLine of src() to w every o.Every until
// the returned stop is called; stop waits for the last line and, after
// lines rewritten in place, ends the line. src is usually a Recorder's
// Progress (each call starts a new power interval, so nothing else should
// call it meanwhile). A nil w reports nothing.
func ReportProgress(w io.Writer, src func() Progress, o ProgressOptions) (stop func()) {
	if w == nil {
		return func() {}
	}
	every := o.Every
	if every <= 0 {
		every = ProgressInterval
	}
	start := time.Now()
	done := make(chan struct{})
	shown := false
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			line := ProgressLine(o, time.Since(start), src())
			if o.InPlace {
				fmt.Fprintf(w, "\r%s\x1b[K", line)
			} else {
				fmt.Fprintln(w, line)
			}
			shown = true
		}
	})
	return func() {
		close(done)
		wg.Wait()
		if o.InPlace && shown {
			fmt.Fprintln(w)
		}
	}
}
