//go:build ignore

// residency-diff lays a campaign run's detected state intervals over the
// simulated drive's truth and shows where they disagree: the time per
// (truth, measured) pair and the episodes of disagreement, longest first,
// with the truth boundary each lies at. It is a comparator's tool (it
// reads the truth), for finding what the residency intervals miss.
//
//	idlewatt export RUN/capture.iwcap --parquet --out /tmp/pq
//	go run ./scripts/residency-diff.go RUN PORT /tmp/pq/state.parquet [TOP]
//
// RUN is a run directory of `idlewatt accuracy` (measure.json,
// truth-pPORT.jsonl). Times are placed as the campaign's comparator does:
// sample time + measure.json's emu_sample0_ns; the clock fit's drift
// (≤ 0.1 ms over a run) is ignored. The truth's labels follow the
// report's definitions as app/accuracy's truthState does (a request
// outstanding, merged over 1 ms: active; a transfer running on or a wake
// above idle: background; a GC burst: background).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/idlewatt/idlewatt/report/pqexport"
	"github.com/idlewatt/idlewatt/states/drivesim"
	"github.com/idlewatt/idlewatt/states/powerstate"
	pq "github.com/parquet-go/parquet-go"
)

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: residency-diff RUN PORT STATE.parquet [TOP]")
		os.Exit(2)
	}
	run, pqPath := os.Args[1], os.Args[3]
	port, _ := strconv.Atoi(os.Args[2])
	top := 15
	if len(os.Args) > 4 {
		top, _ = strconv.Atoi(os.Args[4])
	}
	d := load(run, port, pqPath)
	conf, eps := d.compare()
	var total time.Duration
	for _, x := range conf {
		total += x
	}
	fmt.Printf("port %d: %d measured intervals, %d truth segments, %.3f s compared (step %v)\n", port, len(d.meas), len(d.segs), total.Seconds(), step)
	printConfusion(conf, total)
	d.placeEpisodes(eps)
	d.printEpisodes(eps, top)
}

// diff is one drive's truth and measured state intervals, on the
// emulator clock.
type diff struct {
	segs  []drivesim.Segment
	busy  []drivesim.IOSpan // the host's outstanding requests, merged over 1 ms
	meas  []pqexport.StateRow
	e0    time.Duration // emulator time of sample time 0
	idleW float64
}

// episode is a run of disagreement between the truth and the measured
// state.
type episode struct {
	truth, meas string
	start, dur  time.Duration
	near        time.Duration // to the nearest truth state change
}

// step is the grid the intervals are compared on.
const step = 20 * time.Microsecond

// load reads the run's measure.json and truth for port and the measured
// intervals of port from the Parquet state table.
func load(run string, port int, pqPath string) *diff {
	var m struct {
		Sample0 int64 `json:"emu_sample0_ns"`
	}
	b, err := os.ReadFile(filepath.Join(run, "measure.json"))
	check(err)
	check(json.Unmarshal(b, &m))
	f, err := os.Open(filepath.Join(run, fmt.Sprintf("truth-p%d.jsonl", port)))
	check(err)
	_, segs, ios, err := drivesim.ReadTruthIO(f)
	check(err)
	rows, err := pq.ReadFile[pqexport.StateRow](pqPath)
	check(err)
	var meas []pqexport.StateRow
	for _, r := range rows {
		if int(r.Port) == port {
			meas = append(meas, r)
		}
	}
	if len(meas) == 0 {
		check(fmt.Errorf("port %d: no state intervals in %s", port, pqPath))
	}
	return &diff{segs: segs, busy: union(ios, time.Millisecond), meas: meas, e0: time.Duration(m.Sample0), idleW: idleLevel(segs)}
}

// truthAt is the truth's state at t by the report's definitions, and the
// index of the segment holding t.
func (d *diff) truthAt(t time.Duration) (string, int) {
	segs, busy := d.segs, d.busy
	k := sort.Search(len(segs), func(k int) bool { return segs[k].End > t })
	if k == len(segs) {
		return "?", k
	}
	q := sort.Search(len(busy), func(q int) bool { return busy[q].End > t })
	if q < len(busy) && busy[q].Start <= t {
		return "active", k
	}
	s := segs[k]
	switch {
	case s.GC:
		return "background", k
	case s.State == powerstate.Active || s.State == powerstate.SpinUp:
		return "background", k
	case s.State == powerstate.Wake:
		if float64(s.Power()) > d.idleW*(1+1e-9) {
			return "background", k
		}
		return "idle", k
	}
	return s.State.String(), k
}

// compare walks the measured intervals on the step grid: the time by
// (truth, measured) pair and the episodes of disagreement.
func (d *diff) compare() (map[[2]string]time.Duration, []episode) {
	conf := map[[2]string]time.Duration{}
	var eps []episode
	var cur *episode
	for _, r := range d.meas {
		a, z := d.e0+time.Duration(r.StartS*1e9), d.e0+time.Duration(r.EndS*1e9)
		for t := a; t < z; t += step {
			ts, _ := d.truthAt(t)
			conf[[2]string{ts, r.State}] += step
			if ts == r.State {
				cur = nil
				continue
			}
			if cur == nil || cur.truth != ts || cur.meas != r.State || cur.start+cur.dur+step < t {
				eps = append(eps, episode{truth: ts, meas: r.State, start: t})
				cur = &eps[len(eps)-1]
			}
			cur.dur = t + step - cur.start
		}
		cur = nil
	}
	return conf, eps
}

// printConfusion prints the time of each off-diagonal (truth, measured)
// pair, most first.
func printConfusion(conf map[[2]string]time.Duration, total time.Duration) {
	fmt.Println("time by truth → measured (ms; off-diagonal only):")
	var keys [][2]string
	for k := range conf {
		if k[0] != k[1] {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return conf[keys[i]] > conf[keys[j]] })
	for _, k := range keys {
		fmt.Printf("  %-10s → %-10s %9.2f ms (%.3f pp)\n", k[0], k[1], ms(conf[k]), 100*conf[k].Seconds()/total.Seconds())
	}
}

// placeEpisodes sets each episode's distance to the nearest truth state
// change.
func (d *diff) placeEpisodes(eps []episode) {
	segs := d.segs
	for i := range eps {
		e := &eps[i]
		_, k := d.truthAt(e.start)
		e.near = time.Duration(1 << 62)
		for _, j := range []int{k - 1, k, k + 1} {
			if j >= 0 && j < len(segs) {
				for _, edge := range []time.Duration{segs[j].Start, segs[j].End} {
					dist := e.start - edge
					if dist < 0 {
						dist = -dist
					}
					if dist < e.near {
						e.near = dist
					}
				}
			}
		}
	}
}

// printEpisodes prints the episodes by length, the top longest of them
// (with VERBOSE set, with what lay around each).
func (d *diff) printEpisodes(eps []episode, top int) {
	sort.Slice(eps, func(i, j int) bool { return eps[i].dur > eps[j].dur })
	hist := map[string]int{}
	for _, e := range eps {
		switch {
		case e.dur < time.Millisecond:
			hist["<1 ms"]++
		case e.dur < 5*time.Millisecond:
			hist["1–5 ms"]++
		default:
			hist["≥5 ms"]++
		}
	}
	fmt.Printf("%d episodes of disagreement: %v\nlongest:\n", len(eps), hist)
	for i, e := range eps {
		if i >= top {
			break
		}
		fmt.Printf("  at %9.4f s (sample time %9.4f s) %7.2f ms  truth %-10s measured %-10s  %6.2f ms from a truth boundary\n",
			e.start.Seconds(), (e.start - d.e0).Seconds(), ms(e.dur), e.truth, e.meas, ms(e.near))
		if os.Getenv("VERBOSE") == "" {
			continue
		}
		d.printAround(e)
	}
}

// printAround prints the truth and the measured intervals within 3 ms of
// episode e, in ms from its start.
func (d *diff) printAround(e episode) {
	lo, hi := e.start-3*time.Millisecond, e.start+e.dur+3*time.Millisecond
	for _, s := range d.segs {
		if s.End > lo && s.Start < hi {
			ts, _ := d.truthAt(s.Start + (s.End-s.Start)/2)
			fmt.Printf("      truth %8.3f … %8.3f ms  %-8s gc=%v io=%v %.4f W → %s\n", ms(s.Start-e.start), ms(s.End-e.start), s.State, s.GC, s.IO, float64(s.Power()), ts)
		}
	}
	for _, x := range d.busy {
		if x.End > lo && x.Start < hi {
			fmt.Printf("      busy  %8.3f … %8.3f ms\n", ms(x.Start-e.start), ms(x.End-e.start))
		}
	}
	for _, r := range d.meas {
		a, z := d.e0+time.Duration(r.StartS*1e9), d.e0+time.Duration(r.EndS*1e9)
		if z > lo && a < hi {
			fmt.Printf("      meas  %8.3f … %8.3f ms  %-10s %.4f W (%d samples)\n", ms(a-e.start), ms(z-e.start), r.State, r.MeanW, r.Samples)
		}
	}
}

// idleLevel is the drive's idle power: that of its longest idle segment.
func idleLevel(segs []drivesim.Segment) (w float64) {
	var best time.Duration
	for _, s := range segs {
		if s.State == powerstate.Idle && !s.GC && s.End-s.Start > best {
			best, w = s.End-s.Start, float64(s.Power())
		}
	}
	return w
}

func union(spans []drivesim.IOSpan, gap time.Duration) []drivesim.IOSpan {
	s := append([]drivesim.IOSpan(nil), spans...)
	sort.Slice(s, func(i, j int) bool { return s[i].Start < s[j].Start })
	var out []drivesim.IOSpan
	for _, x := range s {
		if n := len(out); n > 0 && x.Start-out[n-1].End < gap {
			out[n-1].End = max(out[n-1].End, x.End)
			continue
		}
		out = append(out, x)
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "residency-diff:", err)
		os.Exit(1)
	}
}
