package rig

import (
	"sort"
	"sync"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/states/detect"
	"github.com/idlewatt/idlewatt/states/drivesim"
	"github.com/idlewatt/idlewatt/units"
)

// StateAnalysis does the offline state detection of drives with a known
// profile inside analysis's own pass over the samples: the classifier it
// gives analysis labels each sample online (report.json's residency) and
// feeds the same samples to a detect.Classifier with hysteresis
// (states.json). Drives without a profile need their levels learned first,
// so Reports reads the capture again for those only.
type StateAnalysis struct {
	user  map[string]drivesim.Profile
	mu    sync.Mutex
	cols  map[int]*stateCollector
	hists map[int]*detect.LevelHistogram // drives without a profile
}

// NewStateAnalysis returns a StateAnalysis using built-in and user profiles.
func NewStateAnalysis(user map[string]drivesim.Profile) *StateAnalysis {
	return &StateAnalysis{user: user, cols: map[int]*stateCollector{}, hists: map[int]*detect.LevelHistogram{}}
}

// Factory is the analysis.Options.NewClassifier to analyse with.
func (sa *StateAnalysis) Factory() analysis.ClassifierFactory {
	return func(d capture.DriveInfo, rate units.Hertz) analysis.StateClassifier {
		if rate <= 0 {
			return nil
		}
		p, err := drivesim.Lookup(d.Profile, sa.user)
		if d.Profile == "" || err != nil {
			// No levels yet: gather the idle-power histogram they will be
			// learned from, and abstain (residency from I/O meanwhile).
			h := &detect.LevelHistogram{}
			sa.mu.Lock()
			sa.hists[d.Port] = h
			sa.mu.Unlock()
			return &histCollector{h: h, avg: idleAverager{per: blockSamples(time.Duration(float64(time.Second) / float64(rate)))}}
		}
		l := ProfileLevels(p)
		period := time.Duration(float64(time.Second) / float64(rate))
		on, err := detect.NewOnline(l, period, 0)
		if err != nil {
			return nil
		}
		c := &stateCollector{online: on, rep: StateReport{Port: d.Port, Name: d.Name, Levels: l, LevelsSource: "profile"}}
		if c.off, err = detect.New(detect.Options{Levels: l, Period: period}, func(s detect.Span) {
			c.spans = append(c.spans, s)
			c.sum.Add(s)
		}); err != nil {
			return nil
		}
		sa.mu.Lock()
		sa.cols[d.Port] = c
		sa.mu.Unlock()
		return c
	}
}

// Reports finishes the state detection after analysis.Analyze(path, …)
// ran with Factory: spans, transitions and latencies for every drive.
func (sa *StateAnalysis) Reports(path string) ([]StateReport, error) {
	ev, err := scanEvents(path)
	if err != nil {
		return nil, err
	}
	r, err := capture.Open(path)
	if err != nil {
		return nil, err
	}
	drives := headerDrives(r.Header())
	r.Close()
	var out []StateReport
	learn := map[int]bool{}
	for _, di := range drives {
		sa.mu.Lock()
		c := sa.cols[di.Port]
		sa.mu.Unlock()
		if c == nil {
			learn[di.Port] = true
			out = append(out, StateReport{Port: di.Port})
			continue
		}
		c.off.Close()
		io := ev.ios[di.Port]
		sort.Slice(io, func(a, b int) bool { return io[a].Issue < io[b].Issue })
		c.rep.fill(&c.sum, c.spans, io, ev.drivePins(di.Port))
		out = append(out, c.rep)
	}
	if len(learn) > 0 {
		learned, err := detectStates(path, sa.user, learn, sa.hists)
		if err != nil {
			return nil, err
		}
		for _, l := range learned {
			for i := range out {
				if out[i].Port == l.Port && learn[l.Port] {
					out[i] = l
				}
			}
		}
	}
	return out, nil
}

// drivePins are a port's DEVSLP changes on the host clock: the meter's
// events when it reports them, else the host's requests.
func (ev *capEvents) drivePins(port int) []detect.Pin {
	var dp []detect.Pin
	for _, p := range ev.pins {
		if p.port == port {
			dp = append(dp, detect.Pin{At: ev.clock.Host(p.index), Asserted: p.asserted})
		}
	}
	if len(dp) == 0 {
		dp = append(dp, ev.hostPins[port]...)
		sort.Slice(dp, func(a, b int) bool { return dp[a].At < dp[b].At })
	}
	return dp
}

// stateCollector labels samples online for analysis and collects the
// offline classifier's spans from the same samples.
type stateCollector struct {
	online *detect.Online
	off    *detect.Classifier
	spans  []detect.Span
	sum    detect.Summary
	rep    StateReport
}

func (c *stateCollector) Classify(s analysis.Sample) analysis.State {
	busy := s.Activity == analysis.Busy
	c.off.Push(s.Host, float64(s.Power), busy)
	return c.online.Classify(float64(s.Power), busy)
}

func (c *stateCollector) Gap(start, count uint64) {
	c.online.Reset()
	c.off.Gap()
}

// histCollector gathers the power of idle samples (no I/O, past the settle
// tail), as 10 ms means, for level learning, and abstains from labelling.
type histCollector struct {
	h   *detect.LevelHistogram
	avg idleAverager
}

func (c *histCollector) Classify(s analysis.Sample) analysis.State {
	if s.Activity == analysis.Idle {
		c.avg.add(c.h, float64(s.Power))
	} else {
		c.avg.reset()
	}
	return analysis.StateUnknown
}

func (c *histCollector) Gap(start, count uint64) { c.avg.reset() }
