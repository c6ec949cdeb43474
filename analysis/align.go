package analysis

import (
	"math"
	"sort"

	"github.com/idlewatt/idlewatt/meter"
)

// Clock maps meter sample indices to host monotonic nanoseconds:
// host(n) = Base + NsPerSample·(n − Ref).
type Clock struct {
	Ref         uint64  // sample index the fit is centred on
	Base        float64 // host ns at Ref
	NsPerSample float64 // fitted sample period on the host clock
	RateHz      float64 // nominal rate from the header

	Fitted     bool    // false: no usable marks, header start time and nominal rate used
	Marks      int     // mark echoes seen
	Used       int     // marks the fit went through (after per-window selection and outlier rejection)
	Synthetic  bool    // the marks were synthesised by the driver from receive times
	DriftPPM   float64 // meter clock vs host clock: positive = meter samples take longer than nominal
	ResidualMS struct {
		RMS, Max float64 // of the used marks' midpoints about the line, in ms
	}
	MinRTTMS    float64 // smallest round trip seen, in ms
	MedianRTTMS float64 // median round trip of the used marks, in ms
}

// Host returns the host time of sample n.
func (c *Clock) Host(n uint64) int64 {
	return int64(math.Round(c.Base + c.NsPerSample*(float64(n)-float64(c.Ref))))
}

// HostF returns the host time of (possibly fractional) sample index x.
func (c *Clock) HostF(x float64) float64 { return c.Base + c.NsPerSample*(x-float64(c.Ref)) }

// Index returns the (fractional) sample index at host time t.
func (c *Clock) Index(t int64) float64 {
	return float64(c.Ref) + (float64(t)-c.Base)/c.NsPerSample
}

// ClockFitter accumulates mark echoes in bounded memory and fits a Clock.
// Per window of meter time it keeps only the mark with the smallest round
// trip: a short round trip leaves little room for the asymmetry between the
// way out and the way back, which is what a midpoint cannot see.
type ClockFitter struct {
	rate    float64
	window  uint64 // samples per selection window
	best    map[uint64]meter.MarkEcho
	marks   int
	synth   int
	minRTT  int64
	maxKeep int
}

// NewClockFitter returns a fitter for a stream at rateHz that keeps the
// lowest-round-trip mark per windowSec of meter time. When more than maxKeep
// windows accumulate, the window doubles and neighbours are merged, so memory
// stays bounded however long the capture is.
func NewClockFitter(rateHz, windowSec float64, maxKeep int) *ClockFitter {
	w := uint64(math.Max(1, math.Round(rateHz*windowSec)))
	if maxKeep < 16 {
		maxKeep = 16
	}
	return &ClockFitter{rate: rateHz, window: w, best: map[uint64]meter.MarkEcho{}, minRTT: math.MaxInt64, maxKeep: maxKeep}
}

// Add offers one mark echo. Echoes with a negative round trip are ignored.
func (f *ClockFitter) Add(m meter.MarkEcho) {
	rtt := m.HostRecv - m.HostSent
	if rtt < 0 {
		return
	}
	f.marks++
	if m.Synthetic {
		f.synth++
	}
	if rtt < f.minRTT {
		f.minRTT = rtt
	}
	k := m.MeterIndex / f.window
	if b, ok := f.best[k]; !ok || rtt < b.HostRecv-b.HostSent {
		f.best[k] = m
	}
	if len(f.best) > f.maxKeep {
		f.window *= 2
		old := f.best
		f.best = make(map[uint64]meter.MarkEcho, len(old)/2+1)
		for _, m := range old {
			k := m.MeterIndex / f.window
			if b, ok := f.best[k]; !ok || m.HostRecv-m.HostSent < b.HostRecv-b.HostSent {
				f.best[k] = m
			}
		}
	}
}

// Fit returns the clock. With no usable marks it returns the fallback
// host(n) = startHost + n/rate with Fitted false. With one selected mark the
// offset comes from it and the period is nominal.
func (f *ClockFitter) Fit(startHost int64) Clock {
	c := Clock{RateHz: f.rate, Marks: f.marks, NsPerSample: 1e9 / f.rate, Base: float64(startHost)}
	if f.marks > 0 {
		c.MinRTTMS = float64(f.minRTT) / 1e6
		c.Synthetic = f.synth == f.marks
	}
	pts := make([]meter.MarkEcho, 0, len(f.best))
	for _, m := range f.best {
		pts = append(pts, m)
	}
	if len(pts) == 0 {
		return c
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].MeterIndex < pts[j].MeterIndex })
	c.Fitted = true
	c.Ref = pts[len(pts)/2].MeterIndex
	use := make([]bool, len(pts))
	for i := range use {
		use[i] = true
	}
	c.Base, c.NsPerSample = lineFit(pts, use, c.Ref, 1e9/f.rate)
	// One round of outlier rejection: a mark whose echo was delayed on one way
	// only (a queued frame) sits far from the line in one direction.
	if len(pts) >= 8 {
		res := residuals(pts, c)
		abs := make([]float64, len(res))
		for i, r := range res {
			abs[i] = math.Abs(r)
		}
		sort.Float64s(abs)
		limit := math.Max(4*abs[len(abs)/2]/0.6745, 20e3) // 4 σ (from the MAD), at least 20 µs
		for i, r := range res {
			use[i] = math.Abs(r) <= limit
		}
		c.Base, c.NsPerSample = lineFit(pts, use, c.Ref, c.NsPerSample)
	}
	res := residuals(pts, c)
	var ss, mx float64
	var rtts []float64
	for i, r := range res {
		if !use[i] {
			continue
		}
		c.Used++
		ss += r * r
		mx = math.Max(mx, math.Abs(r))
		rtts = append(rtts, float64(pts[i].HostRecv-pts[i].HostSent))
	}
	sort.Float64s(rtts)
	c.ResidualMS.RMS = math.Sqrt(ss/float64(c.Used)) / 1e6
	c.ResidualMS.Max = mx / 1e6
	c.MedianRTTMS = rtts[len(rtts)/2] / 1e6
	c.DriftPPM = (c.NsPerSample*f.rate/1e9 - 1) * 1e6
	return c
}

// lineFit fits mid = base + slope·(index − ref) by least squares over the
// used points, in coordinates centred on the first point so float64 keeps
// nanosecond precision on hosts with long uptimes.
func lineFit(pts []meter.MarkEcho, use []bool, ref uint64, nominal float64) (base, slope float64) {
	y0 := mid(pts[0])
	var n, sx, sy, sxx, sxy float64
	for i, p := range pts {
		if !use[i] {
			continue
		}
		x := float64(int64(p.MeterIndex - ref))
		y := float64(mid(p) - y0)
		n++
		sx += x
		sy += y
		sxx += x * x
		sxy += x * y
	}
	if n == 0 {
		return float64(y0), nominal
	}
	slope = nominal
	if d := n*sxx - sx*sx; n >= 2 && d > 0 {
		slope = (n*sxy - sx*sy) / d
	}
	return float64(y0) + (sy-slope*sx)/n, slope
}

func mid(m meter.MarkEcho) int64 { return m.HostSent + (m.HostRecv-m.HostSent)/2 }

func residuals(pts []meter.MarkEcho, c Clock) []float64 {
	out := make([]float64, len(pts))
	for i, p := range pts {
		out[i] = float64(mid(p)) - c.HostF(float64(p.MeterIndex))
	}
	return out
}
