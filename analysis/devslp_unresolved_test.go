package analysis_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/internal/noisegen"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// A DevSlp floor within the noise of Slumber: the drop under the pin is
// not resolved, no DevSlp level is learned, and the floor's time reads as
// Slumber. The residency must not then claim DevSlp 0 ± 0: the intervals
// of devslp and slumber must hold the true residencies (the independent
// generator's seed 2 drive 66: DevSlp 18.4 % reported 0 ± 0).

// linkSeg is a stretch of constant true power (s, W); floor marks the
// DevSlp floor's.
type linkSeg struct {
	t0, t1, w float64
	floor     bool
}

// linkTimeline is a SATA drive's run the way a DIPM link and a DevSlp
// verification shape it: bursts of I/O, after each the link at idle for
// tp, Partial until ts, then Slumber; DevSlp cycles from Slumber, the
// floor reached entry after the assertion and held until the read issued
// just after the release.
type linkTimeline struct {
	r                             *rand.Rand
	idle, partial, slumber, floor float64
	tp, ts, entry                 float64
	t, lastIO                     float64
	segs                          []linkSeg
	io, pins                      [][2]float64
}

func (l *linkTimeline) add(t0, t1, w float64, floor bool) {
	if t1 > t0 {
		l.segs = append(l.segs, linkSeg{t0, t1, w, floor})
	}
}

// quiet runs the link's timers from the last I/O until t1.
func (l *linkTimeline) quiet(t1 float64) {
	e := l.lastIO
	for _, s := range []linkSeg{{e, e + l.tp, l.idle, false}, {e + l.tp, e + l.ts, l.partial, false}, {e + l.ts, math.Inf(1), l.slumber, false}} {
		l.add(math.Max(s.t0, l.t), math.Min(s.t1, t1), s.w, false)
	}
	l.t = t1
}

func (l *linkTimeline) burst() {
	for k := 1 + l.r.IntN(3); k > 0; k-- {
		d := 0.5e-3 + 4.5e-3*l.r.Float64()
		l.add(l.t, l.t+d, 0.3, false)
		l.io = append(l.io, [2]float64{l.t, l.t + d})
		l.t += d
		l.lastIO = l.t
		if k > 1 {
			l.quiet(l.t + 0.1e-3 + 0.4e-3*l.r.Float64())
		}
	}
}

// cycle asserts the pin from Slumber and ends with the read after the
// release: at the floor until the read's issue, then the wake (idle
// power) and the transfer.
func (l *linkTimeline) cycle() {
	ta := l.lastIO + l.ts + 0.5 + 0.5*l.r.Float64()
	l.quiet(ta)
	tf, tr := ta+l.entry*(0.9+0.2*l.r.Float64()), ta+0.5+1.5*l.r.Float64()
	l.add(ta, tf, l.slumber, false)
	issue := tr + 0.1e-3 + 0.9e-3*l.r.Float64()
	l.add(tf, issue, l.floor, true)
	ready := issue + 5e-3 + 10e-3*l.r.Float64()
	done := ready + 0.5e-3
	l.add(issue, ready, l.idle, false)
	l.add(ready, done, 0.3, false)
	l.pins = append(l.pins, [2]float64{ta, tr})
	l.io = append(l.io, [2]float64{issue, done})
	l.t, l.lastIO = done, done
}

// buildLinkTimeline: 1.5 s at idle, bursts 0.2–1.5 s apart for 8 s,
// four DevSlp cycles, 2 s of tail — about 20 s, a DevSlp share near 20 %.
func buildLinkTimeline(r *rand.Rand) *linkTimeline {
	l := &linkTimeline{r: r, idle: 0.0239, partial: 0.0163, slumber: 0.00101, floor: 0.00069, tp: 1.8e-3, ts: 0.169, entry: 0.7e-3}
	l.add(0, 1.5, l.idle, false)
	l.t = 1.5
	l.burst()
	for l.t < 9.5 {
		l.quiet(l.t + 0.2 + 1.3*r.Float64())
		l.burst()
	}
	for range 4 {
		l.cycle()
	}
	l.quiet(l.t + 2)
	return l
}

// write writes the timeline at rate through the meter m (one 5 V rail,
// each sample the mean true power over its period plus the meter's
// noise), with the I/O and the pin's edges as the host and the meter
// record them, and returns the true DevSlp and Slumber residencies.
func (l *linkTimeline) write(t *testing.T, path string, rate float64, m *noisegen.Meter, rng *rand.Rand) (devslp, slumber float64) {
	t.Helper()
	n := int(l.t * rate)
	truth := make([]float64, n)
	var floorS, slumberS float64
	for _, s := range l.segs {
		a, b := s.t0*rate, math.Min(s.t1*rate, float64(n))
		if b <= a {
			continue
		}
		if s.floor {
			floorS += (b - a) / rate
		} else if s.w == l.slumber {
			slumberS += (b - a) / rate
		}
		for i := int(a); i < n && float64(i) < b; i++ {
			truth[i] += s.w * (math.Min(b, float64(i+1)) - math.Max(a, float64(i)))
		}
	}
	read := m.Read(rng, truth)
	const start = hostclock.Time(1e12)
	host := func(s float64) hostclock.Time { return start + hostclock.Time(math.Round(s*1e9)) }
	ch := meter.Channel{Port: 1, Rail: meter.Rail5V}
	h := capture.Header{Created: "2026-01-01T00:00:00Z", RateHz: units.Hertz(rate), StartHost: start, Tool: "devslp_unresolved_test",
		Meter:    meter.Info{Kind: "synthetic", Model: "noisegen", Ports: 1, Channels: []meter.Channel{ch}},
		Channels: []meter.Channel{ch}, Drives: []capture.DriveInfo{{Port: 1, Name: "floor within the noise"}}}
	w, err := capture.Create(path, h, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	type edge struct {
		at float64
		on bool
	}
	var edges []edge
	for _, p := range l.pins {
		edges = append(edges, edge{p[0], true}, edge{p[1], false})
	}
	sort.Slice(edges, func(a, b int) bool { return edges[a].at < edges[b].at })
	ei, ii := 0, 0
	for s := 0; s < n; s += 1000 {
		e := min(s+1000, n)
		tEnd := float64(e) / rate
		for ; ei < len(edges) && edges[ei].at < tEnd; ei++ {
			v, mv := "0", int64(0)
			if edges[ei].on {
				v, mv = "1", 1
			}
			if err := w.State(capture.StateEvent{Host: host(edges[ei].at), Port: 1, Kind: capture.StateDevSlpPin, Value: v}); err != nil {
				t.Fatal(err)
			}
			if err := w.Event(meter.Event{Kind: meter.EventDevSlp, Port: 1, Index: uint64(edges[ei].at * rate), Value: mv, HostRecv: host(edges[ei].at)}); err != nil {
				t.Fatal(err)
			}
		}
		for ; ii < len(l.io) && l.io[ii][1] < tEnd; ii++ {
			x := l.io[ii]
			if err := w.IO(capture.IOEvent{Port: 1, Op: capture.OpRead, Size: 4096, Offset: int64(ii) * 4096, Issue: host(x[0]), Complete: host(x[1])}); err != nil {
				t.Fatal(err)
			}
		}
		V, I := make([]units.Volts, e-s), make([]units.Amps, e-s)
		for j := range V {
			V[j], I[j] = 5, units.Amps(read[s+j]/5)
		}
		if err := w.Samples(&meter.Block{Channel: 0, Start: uint64(s), V: V, I: I}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	total := float64(n) / rate
	return floorS / total, slumberS / total
}

func TestUnresolvedDevSlpIntervalHoldsTheFloorTime(t *testing.T) {
	for k, noise := range []struct{ sigmaA, tauS float64 }{{0.6e-3, 0.5e-3}, {0.4e-3, 2e-3}, {1e-3, 0.2e-3}} {
		t.Run(fmt.Sprintf("ar1-%d", k), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(25, uint64(k)))
			l := buildLinkTimeline(rng)
			const rate = 10000
			m := &noisegen.Meter{Family: noisegen.AR1, RateHz: rate, Volts: 5, SigmaA: 34e-6, TauS: []float64{noise.tauS}, SigmasA: []float64{noise.sigmaA}}
			path := filepath.Join(t.TempDir(), "u.iwcap")
			devslp, slumber := l.write(t, path, rate, m, rng)
			opts := truthOpts()
			opts.States = &analysis.StateOptions{}
			r, err := analysis.Analyze(path, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.States) != 1 || r.States[0].Residency == nil {
				t.Fatalf("no state report: %+v", r.States)
			}
			st, d := r.States[0], r.Drives[0]
			if st.Levels.DevSlp != 0 {
				t.Fatalf("levels %+v: DevSlp learned, so this draw does not test an unresolved floor", st.Levels)
			}
			t.Logf("levels %+v; devslp %.4f ± %.4f (truth %.4f), slumber %.4f ± %.4f (truth %.4f)", st.Levels,
				d.Residency.DevSlp, d.ResidencyU95["devslp"], devslp, d.Residency.Slumber, d.ResidencyU95["slumber"], slumber)
			for _, q := range []struct {
				name     string
				x, truth float64
			}{{"devslp", d.Residency.DevSlp, devslp}, {"slumber", d.Residency.Slumber, slumber}} {
				if u := d.ResidencyU95[q.name]; !(math.Abs(q.x-q.truth) <= u) {
					t.Errorf("residency.%s %.4f ± %.4f does not hold the truth %.4f", q.name, q.x, u, q.truth)
				}
			}
			// The time is stated once: states.json's and the note's.
			if st.DevSlpUnresolved == nil || st.DevSlpUnresolved.S <= 0 {
				t.Errorf("states.json devslp_unresolved = %+v, want the pin-asserted time read as Slumber", st.DevSlpUnresolved)
			}
			var noted bool
			for _, n := range r.Notes {
				noted = noted || strings.Contains(n, "DevSlp level not learned")
			}
			if !noted {
				t.Errorf("no note says why the DevSlp residency is uncertain: %q", r.Notes)
			}
		})
	}
}
