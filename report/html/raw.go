package html

import (
	"errors"
	"io"
	"math"
	"os"
	"sort"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
)

// Full-resolution windows: around every DEVSLP pin edge, where entry and
// exit latencies live, the page gets every sample, not only buckets.
const (
	rawBefore = 0.020 // s before an edge
	rawAfter  = 0.120 // s after it (exit latencies are tens of ms)
	// rawShare is the part of the byte budget full-resolution windows may
	// take by default (Budget.RawShare); edges past it get none (the page
	// says how many have one).
	rawShare = 0.15
)

// pinEdge is a DEVSLP pin edge as recorded: a host time, or a meter sample
// index (converted once the clock is known).
type pinEdge struct {
	port  int
	host  hostclock.Time
	index uint64
	meter bool
}

// rawSeg is a run of consecutive samples of one drive, the first at T.
type rawSeg struct {
	T float64
	W []float32
}

type rawWin struct {
	a, b float64
	segs []rawSeg
}

// NewPyramidFor returns a Pyramid that also keeps every sample around the
// DEVSLP pin edges of the capture at path. The edges are those of the
// records analysis' first pass hands it (analysis.RecordSink); if that
// pass handed it none, they are read from path at Begin (samples
// skipped). A capture that is not a regular file (a FIFO cannot be read
// twice, and opening one would block), or that cannot be read, gets no
// such windows; Analyze reports why.
func NewPyramidFor(path string, b Budget) *Pyramid {
	p := NewPyramid(b)
	if regular(path) {
		p.edgesFrom = path
	}
	return p
}

// readEdges reads the DEVSLP pin edges of the capture at path (samples
// skipped); none if it cannot be read.
func readEdges(path string) []pinEdge {
	r, err := capture.Open(path)
	if err != nil {
		return nil
	}
	defer r.Close()
	r.SkipSamples(true)
	var er edgeReader
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) || err != nil {
			break
		}
		er.record(&rec)
	}
	return er.finish(r.Header())
}

// edgeReader finds the DEVSLP pin edges in a capture's records.
type edgeReader struct {
	meterSeen map[int]bool
	host      []pinEdge
	edges     []pinEdge
}

func (er *edgeReader) record(rec *capture.Record) {
	switch {
	case rec.Kind == capture.KindState && rec.State.Kind == capture.StateDevSlpPin:
		er.host = append(er.host, pinEdge{port: rec.State.Port, host: rec.State.Host})
	case rec.Kind == capture.KindEvent && rec.Event.Kind == meter.EventDevSlp:
		if er.meterSeen == nil {
			er.meterSeen = map[int]bool{}
		}
		er.meterSeen[rec.Event.Port] = true
		er.edges = append(er.edges, pinEdge{port: rec.Event.Port, index: rec.Event.Index, meter: true})
	}
}

// finish gives the edges once every record has been seen: as analysis
// does, the meter's pin events where it reported them, the host's
// elsewhere (port 0: every drive of h).
func (er *edgeReader) finish(h capture.Header) []pinEdge {
	var ports []int
	for _, d := range h.Drives {
		ports = append(ports, d.Port)
	}
	for _, e := range er.host {
		targets := []int{e.port}
		if e.port == 0 {
			targets = ports
		}
		for _, port := range targets {
			if !er.meterSeen[port] {
				er.edges = append(er.edges, pinEdge{port: port, host: e.host})
			}
		}
	}
	er.host = nil
	return er.edges
}

// rawWindows turns the pin edges into per-port windows on the report's
// timeline, merged where they overlap. Called from Begin.
func (p *Pyramid) rawWindows() {
	by := map[int][]rawWin{}
	for _, e := range p.edges {
		h := float64(e.host)
		if e.meter {
			h = p.clock.HostF(float64(e.index))
		}
		t := (h - p.t0Host) / 1e9
		by[e.port] = append(by[e.port], rawWin{a: t - rawBefore, b: t + rawAfter})
	}
	p.raw = map[int][]rawWin{}
	for port, ws := range by {
		sort.Slice(ws, func(i, j int) bool { return ws[i].a < ws[j].a })
		var out []rawWin
		for _, w := range ws {
			if n := len(out); n > 0 && w.a <= out[n-1].b {
				out[n-1].b = math.Max(out[n-1].b, w.b)
				continue
			}
			out = append(out, w)
		}
		p.raw[port] = out
	}
	p.rawCursor = map[int]int{}
}

// keepRaw copies the samples of run (the first at t, dt apart) that fall
// in port's windows, while the budget lasts.
func (p *Pyramid) keepRaw(port int, t, dt float64, w []float64) {
	ws := p.raw[port]
	if len(ws) == 0 {
		return
	}
	end := t + dt*float64(len(w))
	i := p.rawCursor[port]
	for i < len(ws) && ws[i].b <= t {
		i++
	}
	p.rawCursor[port] = i
	limit := p.budget.rawShare() * p.budget.bytes(p.last-p.first) / (4 * 4 / 3)
	for ; i < len(ws) && ws[i].a < end; i++ {
		win := &ws[i]
		j0 := max(int(math.Ceil((win.a-t)/dt)), 0)
		j1 := min(int(math.Ceil((win.b-t)/dt)), len(w))
		if j1 <= j0 {
			continue
		}
		if len(win.segs) == 0 && float64(p.rawN+int(math.Ceil((win.b-win.a)/dt))) > limit {
			p.rawDropped++
			win.b = win.a // never start it later
			continue
		}
		seg := rawSeg{T: t + dt*float64(j0)}
		// A run continuing the last segment extends it.
		if n := len(win.segs); n > 0 {
			last := &win.segs[n-1]
			if math.Abs(last.T+dt*float64(len(last.W))-seg.T) < dt/2 {
				for _, x := range w[j0:j1] {
					last.W = append(last.W, float32(x))
				}
				p.rawN += j1 - j0
				continue
			}
		}
		for _, x := range w[j0:j1] {
			seg.W = append(seg.W, float32(x))
		}
		p.rawN += j1 - j0
		win.segs = append(win.segs, seg)
	}
}

// regular reports whether path is a regular file (symlinks followed).
func regular(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// peakWin follows one drive's highest sample so far and keeps every sample
// from rawBefore before it to rawAfter after it, so the peak row of the
// page zooms to single samples too. recent holds the last samples seen
// (the "before" part of a peak that has not happened yet).
type peakWin struct {
	max     float64
	seen    bool
	seg     rawSeg
	end     float64 // time the window ends
	open    bool    // still filling
	recent  []float32
	recentT float64 // time of recent[0]
}

// followPeak updates port's peak window with a run (the first sample at
// t, dt apart; dt is the clock's period, checked by the caller).
func (p *Pyramid) followPeak(port int, t, dt float64, w []float64) {
	pw := p.peaks[port]
	if pw == nil {
		pw = &peakWin{}
		p.peaks[port] = pw
	}
	// A run that does not continue the last one breaks the window and
	// the recent samples.
	if n := len(pw.recent); n > 0 && math.Abs(pw.recentT+dt*float64(n)-t) > dt/2 {
		pw.recent = pw.recent[:0]
		pw.open = false
	}
	if pw.open {
		k := min(len(w), max(int(math.Round((pw.end-t)/dt)), 0)) // times are on one grid
		for _, x := range w[:k] {
			pw.seg.W = append(pw.seg.W, float32(x))
		}
		pw.open = k == len(w)
	}
	best, bi := math.Inf(-1), -1
	for i, x := range w {
		if x > best && !math.IsNaN(x) && !math.IsInf(x, 0) {
			best, bi = x, i
		}
	}
	if bi >= 0 && (!pw.seen || best > pw.max) {
		pw.seen, pw.max = true, best
		before := int(math.Ceil(rawBefore / dt))
		after := int(math.Ceil(rawAfter / dt))
		// The window: up to `before` samples from recent and the run,
		// then the run up to `after` samples past the peak.
		from := bi - before
		var seg []float32
		if from < 0 {
			r := pw.recent
			if len(r) > -from {
				r = r[len(r)+from:]
			}
			seg = append(seg, r...)
			from = 0
		}
		to := min(len(w), bi+after+1)
		for _, x := range w[from:to] {
			seg = append(seg, float32(x))
		}
		pw.seg = rawSeg{T: t + dt*float64(bi) - dt*float64(bi-from) - dt*float64(len(seg)-(to-from)), W: seg}
		pw.end = t + dt*float64(bi+after+1)
		pw.open = to == len(w)
	}
	// Keep the last `before` samples as recent.
	before := int(math.Ceil(rawBefore / dt))
	if len(w) >= before {
		pw.recent = pw.recent[:0]
		for _, x := range w[len(w)-before:] {
			pw.recent = append(pw.recent, float32(x))
		}
		pw.recentT = t + dt*float64(len(w)-before)
	} else {
		if len(pw.recent) == 0 {
			pw.recentT = t
		}
		for _, x := range w {
			pw.recent = append(pw.recent, float32(x))
		}
		if drop := len(pw.recent) - before; drop > 0 {
			pw.recent = append(pw.recent[:0], pw.recent[drop:]...)
			pw.recentT += dt * float64(drop)
		}
	}
}
