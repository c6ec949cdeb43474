package rig

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/states"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/states/detect"
	"github.com/idlewatt/idlewatt/states/drivesim"
)

// StateReport is one drive's interface-state detection from its power trace
// (states/detect's offline classifier, with hysteresis): the intervals'
// residency, power, transitions and entry/exit latencies. Its JSON form is
// states.json.
type StateReport struct {
	Port         int                    `json:"port"`
	Name         string                 `json:"name"`
	LevelsSource string                 `json:"levels_source"` // "profile" or "learned"
	Levels       detect.Levels          `json:"levels"`
	MeasuredS    float64                `json:"measured_s"`
	Residency    map[string]float64     `json:"residency"`     // fraction of measured time
	PowerW       map[string]float64     `json:"power_w"`       // mean power in each state
	Spans        map[string]int         `json:"spans"`         // intervals per state
	Transitions  []TransitionCount      `json:"transitions"`   // from → to, count
	Entry        map[string]LatencyStat `json:"entry_latency"` // by state entered
	Exit         map[string]LatencyStat `json:"exit_latency"`  // by state left (DevSlp's are in devslp)
	// DevSlp is report.json's devslp block for the drive, the same values.
	DevSlp *analysis.DevSlp `json:"devslp,omitempty"`
	Note   string           `json:"note,omitempty"`
}

// ApplyStates makes the report's residency and per-state power those of
// the state detection (one classification, shown in report.json,
// report.md and states.json alike), and gives each state report the
// drive's DevSlp block.
func ApplyStates(rep *analysis.Report, st []StateReport) {
	for i := range st {
		for j := range rep.Drives {
			d := &rep.Drives[j]
			if d.Port != st[i].Port {
				continue
			}
			ds := d.DevSlp
			st[i].DevSlp = &ds
			r, p := st[i].Residency, st[i].PowerW
			if r == nil {
				continue
			}
			d.Residency = analysis.Residency{Active: r["active"], Background: r["background"], Idle: r["idle"], Partial: r["partial"],
				Slumber: r["slumber"], DevSlp: r["devslp"], Off: r["off"]}
			d.StatePowerW = analysis.StatePower{Active: p["active"], Background: p["background"], Idle: p["idle"], Partial: p["partial"],
				Slumber: p["slumber"], DevSlp: p["devslp"]}
			if !d.DevSlp.FloorW.Ok() && r["devslp"] > 0 && d.DevSlp.Outcome != states.NotSupported {
				d.DevSlp.Entered, d.DevSlp.PowerW = true, states.Num(p["devslp"])
			}
		}
	}
}

// TransitionCount counts one kind of transition.
type TransitionCount struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Count int    `json:"count"`
}

// LatencyStat summarises latencies, by cause ("io" or "pin").
type LatencyStat struct {
	Count  int     `json:"count"`
	Cause  string  `json:"cause"`
	MeanMs float64 `json:"mean_ms"`
	P50Ms  float64 `json:"p50_ms"`
	MaxMs  float64 `json:"max_ms"`
}

// ioSettle is how long after an I/O a sample is still kept out of level
// learning: the drive's own idle timers run from the completion.
const ioSettle = 50 * time.Millisecond

// DetectStates classifies each drive's samples in the capture into interface
// states. Levels come from the drive's profile when the capture names one,
// else they are learned from the idle samples' power histogram. Memory:
// the I/O events (16 bytes each) and the spans; samples are streamed.
func DetectStates(path string, user map[string]drivesim.Profile) ([]StateReport, error) {
	return detectStates(path, user, nil, nil)
}

// detectStates is DetectStates for the drives in only (all if nil); hist
// holds idle-power histograms already gathered by port, which spare the
// learning pass for those drives.
func detectStates(path string, user map[string]drivesim.Profile, only map[int]bool, hist map[int]*detect.LevelHistogram) ([]StateReport, error) {
	ev, err := scanEvents(path)
	if err != nil {
		return nil, err
	}
	clock, ios := ev.clock, ev.ios
	r, err := capture.Open(path)
	if err != nil {
		return nil, err
	}
	h := r.Header()
	r.Close()
	period := time.Duration(float64(time.Second) / h.RateHz)

	type drive struct {
		rep   StateReport
		rails []int
		busy  []detect.IO // merged [issue, complete+settle] intervals, by start
		bi    int
		hist  detect.LevelHistogram
		avg   idleAverager
		// histDone: hist was filled by the caller's own pass.
		histDone bool
		cls      *detect.Classifier
		spans    []detect.Span
		sum      detect.Summary
	}
	var drives []*drive
	for _, di := range headerDrives(h) {
		if only != nil && !only[di.Port] {
			continue
		}
		d := &drive{rep: StateReport{Port: di.Port, Name: di.Name}}
		for ch, c := range h.Channels {
			if c.Port == di.Port {
				d.rails = append(d.rails, ch)
			}
		}
		if len(d.rails) == 0 {
			continue
		}
		io := ios[di.Port]
		sort.Slice(io, func(a, b int) bool { return io[a].Issue < io[b].Issue })
		ios[di.Port] = io
		for _, x := range io {
			end := x.Complete
			if n := len(d.busy); n > 0 && x.Issue <= d.busy[n-1].Complete {
				d.busy[n-1].Complete = max(d.busy[n-1].Complete, end)
				continue
			}
			d.busy = append(d.busy, detect.IO{Issue: x.Issue, Complete: end})
		}
		if di.Profile != "" {
			if p, err := drivesim.Lookup(di.Profile, user); err == nil {
				d.rep.Levels, d.rep.LevelsSource = ProfileLevels(p), "profile"
			}
		}
		d.avg.per = blockSamples(time.Duration(float64(time.Second) / h.RateHz))
		if h := hist[di.Port]; h != nil && d.rep.LevelsSource == "" {
			d.hist, d.histDone = *h, true
		}
		drives = append(drives, d)
	}
	if len(drives) == 0 {
		return nil, fmt.Errorf("%s: no drives in the capture header", path)
	}

	// busyAt says whether host time t is inside (or within settle after) an
	// I/O; times must be asked in increasing order.
	busyAt := func(d *drive, t int64, settle int64) bool {
		for d.bi < len(d.busy) && d.busy[d.bi].Complete+settle < t {
			d.bi++
		}
		return d.bi < len(d.busy) && d.busy[d.bi].Issue <= t
	}
	scan := func(fn func(d *drive, t int64, w float64, gap bool)) error {
		r, err := capture.Open(path)
		if err != nil {
			return err
		}
		defer r.Close()
		rows := capture.NewRows(r)
		for _, d := range drives {
			d.bi = 0
		}
		var ts []int64
		for {
			run, err := rows.NextRun()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				if errors.Is(err, capture.ErrTruncated) {
					return nil // classify what was recorded
				}
				return err
			}
			if run.Gap > 0 {
				t := clock.Host(run.Index)
				for _, d := range drives {
					fn(d, t, 0, true)
				}
				continue
			}
			ts = ts[:0]
			for k := range run.N {
				ts = append(ts, clock.Host(run.Index+uint64(k)))
			}
			// Drives' state is their own, so each takes the whole run in turn.
			for _, d := range drives {
				ok := true
				for _, ch := range d.rails {
					ok = ok && run.Present[ch]
				}
				for k, t := range ts {
					if !ok {
						fn(d, t, 0, true)
						continue
					}
					var w float64
					for _, ch := range d.rails {
						w += float64(run.V[ch][k]) * float64(run.I[ch][k])
					}
					fn(d, t, w, false)
				}
			}
		}
	}

	// Pass 1 (only for drives without a profile): learn the levels.
	learn := false
	for _, d := range drives {
		learn = learn || (d.rep.LevelsSource == "" && !d.histDone)
	}
	if learn {
		err := scan(func(d *drive, t int64, w float64, gap bool) {
			if d.rep.LevelsSource != "" || d.histDone {
				return
			}
			if gap || busyAt(d, t, int64(ioSettle)) {
				d.avg.reset()
				return
			}
			d.avg.add(&d.hist, w)
		})
		if err != nil {
			return nil, err
		}
	}
	for _, d := range drives {
		if d.rep.LevelsSource != "" {
			continue
		}
		l, err := d.hist.Levels(0.02)
		if err != nil {
			d.rep.Note = err.Error()
			continue
		}
		d.rep.Levels, d.rep.LevelsSource = l, "learned"
	}
	for _, d := range drives {
		if d.rep.LevelsSource == "" {
			continue
		}
		dd := d
		d.cls, err = detect.New(detect.Options{Levels: d.rep.Levels, Period: period}, func(s detect.Span) {
			dd.spans = append(dd.spans, s)
			dd.sum.Add(s)
		})
		if err != nil {
			d.rep.Note, d.cls = err.Error(), nil
		}
	}
	// Pass 2: classify.
	err = scan(func(d *drive, t int64, w float64, gap bool) {
		if d.cls == nil {
			return
		}
		if gap {
			d.cls.Gap()
			return
		}
		d.cls.Push(t, w, busyAt(d, t, 0))
	})
	if err != nil {
		return nil, err
	}
	var out []StateReport
	for _, d := range drives {
		if d.cls != nil {
			d.cls.Close()
			dp := ev.drivePins(d.rep.Port)
			d.rep.fill(&d.sum, d.spans, ios[d.rep.Port], dp)
		}
		out = append(out, d.rep)
	}
	return out, nil
}

func (s *StateReport) fill(sum *detect.Summary, spans []detect.Span, ios []detect.IO, pins []detect.Pin) {
	s.MeasuredS = sum.Total().Seconds()
	s.Residency, s.PowerW, s.Spans = map[string]float64{}, map[string]float64{}, map[string]int{}
	for _, st := range detect.AllStates {
		s.Residency[st.String()] = sum.Residency(st)
		s.PowerW[st.String()] = float64(sum.MeanPower(st))
		s.Spans[st.String()] = sum.Spans[st]
	}
	for k, n := range sum.Transitions {
		s.Transitions = append(s.Transitions, TransitionCount{From: k[0].String(), To: k[1].String(), Count: n})
	}
	sort.Slice(s.Transitions, func(a, b int) bool {
		x, y := s.Transitions[a], s.Transitions[b]
		if x.Count != y.Count {
			return x.Count > y.Count
		}
		return x.From+x.To < y.From+y.To
	})
	entries, exits := detect.Latencies(spans, ios, pins, 50*time.Millisecond)
	s.Entry, s.Exit = map[string]LatencyStat{}, map[string]LatencyStat{}
	group := func(m map[string][]float64, causes map[string]string, state, cause string, d time.Duration) {
		m[state] = append(m[state], float64(d)/1e6)
		if c, ok := causes[state]; ok && c != cause {
			causes[state] = "mixed"
		} else {
			causes[state] = cause
		}
	}
	em, ec := map[string][]float64{}, map[string]string{}
	for _, e := range entries {
		group(em, ec, e.State.String(), e.Cause, e.Latency)
	}
	xm, xc := map[string][]float64{}, map[string]string{}
	for _, x := range exits {
		group(xm, xc, x.State.String(), x.Cause, x.Latency)
	}
	// DevSlp's entry and exit are measured by change points around the pin
	// (report.json's devslp block), not here.
	delete(em, detect.DevSlp.String())
	delete(xm, detect.DevSlp.String())
	for st, v := range em {
		s.Entry[st] = latencyStat(v, ec[st])
	}
	for st, v := range xm {
		s.Exit[st] = latencyStat(v, xc[st])
	}
}

func latencyStat(v []float64, cause string) LatencyStat {
	sort.Float64s(v)
	var sum float64
	for _, x := range v {
		sum += x
	}
	return LatencyStat{Count: len(v), Cause: cause, MeanMs: sum / float64(len(v)), P50Ms: v[len(v)/2], MaxMs: v[len(v)-1]}
}

// WriteStates writes states.json into dir and appends a section to
// dir/report.md (if it exists).
func WriteStates(dir string, reps []StateReport) error {
	b, err := json.MarshalIndent(struct {
		Schema string        `json:"schema"`
		Drives []StateReport `json:"drives"`
	}{"idlewatt.states/v1", reps}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "states.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, "report.md"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return err
	}
	defer f.Close()
	return writeStatesMarkdown(f, reps)
}

func writeStatesMarkdown(w io.Writer, reps []StateReport) error {
	var b strings.Builder
	b.WriteString("\n## Interface states detected from power\n\n")
	b.WriteString("Offline classification with hysteresis (states/detect); levels from the drive profile or learned from the idle samples.\n\n")
	b.WriteString("| Drive | Levels | State | Residency | Power (mW) | Intervals | Entry p50 / max (ms) | Exit p50 / max (ms) |\n|---|---|---|---:|---:|---:|---:|---:|\n")
	for _, r := range reps {
		if r.Residency == nil {
			fmt.Fprintf(&b, "| %s | — | not classified: %s | | | | | |\n", r.Name, r.Note)
			continue
		}
		for _, st := range detect.AllStates {
			name := st.String()
			if r.Spans[name] == 0 {
				continue
			}
			lat := func(m map[string]LatencyStat) string {
				if l, ok := m[name]; ok {
					return fmt.Sprintf("%.2f / %.2f (%s, n=%d)", l.P50Ms, l.MaxMs, l.Cause, l.Count)
				}
				return ""
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %.1f %% | %.2f | %d | %s | %s |\n", r.Name, r.LevelsSource, name,
				100*r.Residency[name], 1e3*r.PowerW[name], r.Spans[name], lat(r.Entry), lat(r.Exit))
		}
		if len(r.Transitions) > 0 {
			var ts []string
			for _, t := range r.Transitions {
				ts = append(ts, fmt.Sprintf("%s→%s %d", t.From, t.To, t.Count))
			}
			fmt.Fprintf(&b, "| %s | | transitions | %s | | | | |\n", r.Name, strings.Join(ts, ", "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// headerDrives are the capture's drives: as its header names them, or one
// per port of its channels when it names none (a plain `record`).
func headerDrives(h capture.Header) []capture.DriveInfo {
	if len(h.Drives) > 0 {
		return h.Drives
	}
	var out []capture.DriveInfo
	seen := map[int]bool{}
	for _, c := range h.Channels {
		if !seen[c.Port] {
			seen[c.Port] = true
			out = append(out, capture.DriveInfo{Port: c.Port, Name: fmt.Sprintf("port %d", c.Port)})
		}
	}
	return out
}

// idleAverager feeds the level histogram with the means of consecutive
// idle samples over levelBlock (10 ms), not single samples: sensor noise can be as
// large as a DevSlp level itself (2.5 mW of noise on a 4.5 mW floor), and
// the raw samples would smear one level into several false peaks.
type idleAverager struct {
	sum float64
	n   int
	per int
}

// levelBlock is the averaging window for level learning.
const levelBlock = 10 * time.Millisecond

func (a *idleAverager) add(h *detect.LevelHistogram, w float64) {
	a.sum += w
	a.n++
	if a.n >= a.per {
		h.Add(a.sum / float64(a.n))
		a.sum, a.n = 0, 0
	}
}

func (a *idleAverager) reset() { a.sum, a.n = 0, 0 }

func blockSamples(period time.Duration) int {
	return max(1, int(levelBlock/period))
}
