package analysis

import (
	"math"
	"sort"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/stat"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// Clock maps meter sample indices to host monotonic nanoseconds:
// host(n) = Base + NsPerSample·(n − Ref).
type Clock struct {
	Ref         uint64      // sample index the fit is centred on
	Base        float64     // host ns at Ref
	NsPerSample float64     // fitted sample period on the host clock
	RateHz      units.Hertz // nominal rate from the header

	Fitted     bool    // false: no usable marks, header start time and nominal rate used
	Marks      int     // mark echoes seen
	Used       int     // marks the fit went through (after per-window selection and outlier rejection)
	Synthetic  bool    // the marks were synthesised by the driver from receive times
	DriftPPM   float64 // meter clock vs host clock: positive = meter samples take longer than nominal
	ResidualMS struct {
		RMS, Max units.Milliseconds // of the used marks' midpoints about the line
		// Excess is the largest distance of a used mark's midpoint from
		// the line beyond half its own round trip — where the meter saw it
		// if the line is right: what the marks say the line may be off by.
		// A mark delayed by the host lies far from the line but within its
		// round trip, and is no evidence against it (Max counts it).
		Excess units.Milliseconds
	}
	MinRTTMS    units.Milliseconds // smallest round trip seen
	MedianRTTMS units.Milliseconds // median round trip of the used marks
	// U95MS is how well a host time maps onto the meter's (95 %): half
	// the median round trip of the used marks plus ResidualMS.Excess. A
	// duration from a meter event to a host one (a DevSlp exit: the pin's
	// release to a read's completion) carries it.
	U95MS units.Milliseconds

	// Outliers counts the selected marks rejected because their midpoint
	// lies further from the robust line than their own round trip allows
	// (a wrong meter index, a host time off): see Fit. NegativeRTT counts
	// echoes received before they were sent, ignored.
	Outliers, NegativeRTT int
	// DriftRefusedPPM is the drift the marks implied when it was beyond
	// MaxDriftPPM and refused (the nominal rate was used: DriftPPM 0); 0
	// when nothing was refused.
	DriftRefusedPPM float64
	MaxDriftPPM     float64 // the bound in force
	// Disagree: too few marks (two) that disagree beyond their round trips;
	// which one is wrong cannot be told, so none was used (Fitted false).
	Disagree bool
	// StartOffsetS is set (non-zero) when the fitted clock puts the first
	// sample (index 0) outside [−StartSlack, +MaxStartLatency] of the
	// header's start time — before streaming was requested, or implausibly
	// long after: seconds from the header's start to the fitted sample 0.
	// StartRejected says the fit rested on one mark and was dropped for it
	// (Fitted false: header start and nominal rate); with several marks
	// that agree, the fit is kept and a note says the header disagrees.
	StartOffsetS  units.Seconds
	StartRejected bool

	// Place is the fitted line's own standard error, which every host
	// event placed on the sample timeline (an I/O's start and end)
	// shares: zero unless a line was fitted through at least three marks
	// and kept (see PlaceU).
	Place LinePlacement
}

// LinePlacement is what the least-squares line's error at a sample index
// x is made of: ε(x) = e_c + e_s·(x − MeanIndex), e_c and e_s independent
// with standard deviations SigmaNs/√N and SigmaNs/√Sxx (SigmaNs the marks'
// scatter about the line, √(Σr²/(N − 2))), at N − 2 degrees of freedom.
// The residuals of marks delayed by the host (a loaded machine stamping an
// echo late, a meter index taken late) make SigmaNs large; a line through
// few such marks is then off by milliseconds, and every I/O edge with it.
type LinePlacement struct {
	N         int     // marks the line went through; 0: no line error known
	MeanIndex float64 // their mean sample index
	Sxx       float64 // Σ (index − MeanIndex)², samples²
	SigmaNs   float64 // their scatter about the line, ns
}

// MaxStartLatency bounds how long after the header's start time (when
// streaming was requested) a meter's sample 0 may plausibly be taken; a
// clock fit that puts it later says its marks are wrong. StartSlack is how
// far before the request it may fall: the mark round trips' own error.
const (
	MaxStartLatency = 5e9  // ns
	StartSlack      = 50e6 // ns, or twice the median round trip if larger
)

// DefaultMaxDriftPPM bounds the clock drift Fit accepts. A meter's and a
// host's clocks are quartz crystals: ±10…50 ppm tolerance, ±20…50 ppm over
// temperature, a few ppm a year of ageing — at worst about ±100 ppm each,
// ±200 ppm between them. 1000 ppm is five times that: a fit beyond it says
// the marks (or the header's rate) are wrong, not the crystals. A meter
// clocked by a ceramic resonator (±0.5 %) or an RC oscillator (±1…2 %) needs
// a larger bound (analysis.Options.MaxDriftPPM).
const DefaultMaxDriftPPM = 1000

// Host returns the host time of sample n.
func (c *Clock) Host(n uint64) hostclock.Time {
	return hostclock.Time(math.Round(c.Base + c.NsPerSample*(float64(n)-float64(c.Ref))))
}

// HostF returns the host time of (possibly fractional) sample index x, in
// hostclock nanoseconds as a float64.
func (c *Clock) HostF(x float64) float64 { return c.Base + c.NsPerSample*(x-float64(c.Ref)) }

// Index returns the (fractional) sample index at host time t.
func (c *Clock) Index(t hostclock.Time) float64 {
	return float64(c.Ref) + (float64(t)-c.Base)/c.NsPerSample
}

// ClockFitter accumulates mark echoes in bounded memory and fits a Clock.
// Per window of meter time it keeps only the mark with the smallest round
// trip: a short round trip leaves little room for the asymmetry between the
// way out and the way back, which is what a midpoint cannot see.
type ClockFitter struct {
	// MaxDriftPPM is the drift beyond which Fit refuses the fitted rate
	// (default DefaultMaxDriftPPM).
	MaxDriftPPM float64

	rate    units.Hertz
	negRTT  int
	window  uint64 // samples per selection window
	best    map[uint64]meter.MarkEcho
	marks   int
	synth   int
	minRTT  time.Duration
	maxKeep int
}

// NewClockFitter returns a fitter for a stream at rateHz that keeps the
// lowest-round-trip mark per windowSec of meter time. When more than maxKeep
// windows accumulate, the window doubles and neighbours are merged, so memory
// stays bounded however long the capture is.
func NewClockFitter(rate units.Hertz, window time.Duration, maxKeep int) *ClockFitter {
	w := uint64(math.Max(1, math.Round(rate.Samples(units.SecondsOf(window)))))
	if maxKeep < 16 {
		maxKeep = 16
	}
	return &ClockFitter{MaxDriftPPM: DefaultMaxDriftPPM, rate: rate, window: w, best: map[uint64]meter.MarkEcho{}, minRTT: math.MaxInt64, maxKeep: maxKeep}
}

// Add offers one mark echo. Echoes with a negative round trip are ignored.
func (f *ClockFitter) Add(m meter.MarkEcho) {
	rtt := m.HostRecv.Sub(m.HostSent)
	if rtt < 0 || m.HostRecv < m.HostSent {
		f.negRTT++
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
	if b, ok := f.best[k]; !ok || rtt < b.HostRecv.Sub(b.HostSent) {
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
//
// The fit distrusts the marks (docs/analysis.md, "Clock alignment"):
//
//  1. A robust line — Siegel's repeated median of pairwise slopes (50 %
//     breakdown) over at most 512 marks evenly spread, and the median
//     offset — that a few wrong marks cannot move.
//  2. A mark is an outlier when its midpoint lies further from that line
//     than half its round trip (where the echo must lie if its meter index
//     is right) plus a tolerance for the line's own error: a wrong meter
//     index or host time. Outliers are counted and left out.
//  3. Least squares through the rest, then one round of 4σ trimming (from
//     the MAD) of marks delayed one way only.
//  4. A drift beyond MaxDriftPPM is refused: the nominal rate is used, the
//     offset is the marks' median, and DriftRefusedPPM says what was refused.
func (f *ClockFitter) Fit(startHost hostclock.Time) Clock {
	maxPPM := f.MaxDriftPPM
	if !(maxPPM > 0) {
		maxPPM = DefaultMaxDriftPPM
	}
	nominal := 1e9 / float64(f.rate)
	c := Clock{RateHz: f.rate, Marks: f.marks, NsPerSample: nominal, Base: float64(startHost), NegativeRTT: f.negRTT, MaxDriftPPM: maxPPM}
	if f.marks > 0 {
		c.MinRTTMS = units.Milliseconds(float64(f.minRTT) / 1e6)
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
	c.Ref = pts[len(pts)/2].MeterIndex
	use := make([]bool, len(pts))

	// 1–2: robust line, then outliers by their own round trip.
	good := consistentMarks(pts, use, c.Ref, nominal, maxPPM)
	c.Outliers = len(pts) - good
	if good == 0 || (len(pts) == 2 && good < 2) {
		// Two marks that disagree: which is wrong cannot be told.
		c.Disagree = len(pts) == 2
		c.Outliers = len(pts)
		return c
	}
	c.Fitted = true

	// 3: least squares through the consistent marks, one round of trimming.
	c.Base, c.NsPerSample = lineFit(pts, use, c.Ref, nominal)
	if good >= 8 {
		res := residuals(pts, c)
		var abs []float64
		for i, r := range res {
			if use[i] {
				abs = append(abs, math.Abs(r))
			}
		}
		limit := math.Max(4*stat.MADScale*stat.UpperMedian(abs), 20e3) // 4 σ (from the MAD), at least 20 µs
		for i, r := range res {
			use[i] = use[i] && math.Abs(r) <= limit
		}
		c.Base, c.NsPerSample = lineFit(pts, use, c.Ref, c.NsPerSample)
	}

	// 4: the drift bound.
	if d := (c.NsPerSample/nominal - 1) * 1e6; !(math.Abs(d) <= maxPPM) {
		c.DriftRefusedPPM = d
		var sel []meter.MarkEcho
		for i, p := range pts {
			if use[i] {
				sel = append(sel, p)
			}
		}
		c.NsPerSample, c.Base = nominal, medianOffset(sel, c.Ref, nominal)
	}
	c.residualStats(pts, use, nominal)
	if c.DriftRefusedPPM == 0 {
		c.Place = linePlacement(pts, use, c)
	}
	checkStart(&c, startHost, nominal)
	return c
}

// linePlacement is the fitted line's error model over the marks in use
// (LinePlacement); N 0 with fewer than three (no degrees of freedom left
// for the scatter). A refused drift's nominal-rate line is not a fit
// through the marks: the marks are the ones in doubt there, and their
// scatter about it is not the timeline's error.
//
// The line is a weighted fit (lineFit): mark i's midpoint varies as σ²/wᵢ
// about it, σ² estimated by Σ wᵢ rᵢ²/(n − 2), and the line's error at x is
// σ²(1/Σw + (x − x̄_w)²/Σw(x − x̄_w)²). LinePlacement keeps the unweighted
// form σ_e²(1/N + (x − m)²/Sxx), so the weighted one is stored as
// m = x̄_w, σ_e² = σ²·N/Σw and Sxx = N·Σw(x − x̄_w)²/Σw — the same
// variance at every x, N − 2 degrees of freedom.
func linePlacement(pts []meter.MarkEcho, use []bool, c Clock) LinePlacement {
	res := residuals(pts, c)
	wt := markWeights(pts, use, c.NsPerSample)
	var n, sw, swx, swr float64
	for i, p := range pts {
		if use[i] {
			w := wt(p)
			n++
			sw += w
			swx += w * float64(p.MeterIndex)
			swr += w * res[i] * res[i]
		}
	}
	if n < 3 || !(sw > 0) {
		return LinePlacement{}
	}
	m := swx / sw
	var swxx float64
	for i, p := range pts {
		if use[i] {
			d := float64(p.MeterIndex) - m
			swxx += wt(p) * d * d
		}
	}
	if !(swxx > 0) {
		return LinePlacement{}
	}
	sigma2 := swr / (n - 2)
	return LinePlacement{N: int(n), MeanIndex: m, Sxx: n * swxx / sw, SigmaNs: math.Sqrt(sigma2 * n / sw)}
}

// PlaceU is the 95 % half-width, in seconds, of Σ wᵢ·ε(xᵢ): the error the
// line puts into a duration bounded by host events at sample indices xs
// with signs ws (+1 where the duration ends at the event, −1 where it
// starts). Events placed by the same line share its error, so a state
// that ends at k I/O starts gains k times the line's offset error: not
// √k. Student t at N − 2 degrees of freedom. 0 without a line error.
func (p LinePlacement) PlaceU(xs, ws []float64) float64 {
	if p.N < 3 || len(xs) == 0 {
		return 0
	}
	var sw, swx float64
	for i, x := range xs {
		sw += ws[i]
		swx += ws[i] * (x - p.MeanIndex)
	}
	v := p.SigmaNs * p.SigmaNs * (sw*sw/float64(p.N) + swx*swx/p.Sxx)
	return stat.T975(float64(p.N-2)) * math.Sqrt(v) / 1e9
}

// consistentMarks marks in use the marks (sorted by meter index) whose
// midpoint lies within half their round trip, plus a tolerance for the
// line's own error, of a robust line through them all; two marks agree
// when the drift the line through them implies is possible. It returns
// how many are used.
func consistentMarks(pts []meter.MarkEcho, use []bool, ref uint64, nominal, maxPPM float64) int {
	slope, base := robustLine(pts, ref, nominal)
	line := Clock{Ref: ref, Base: base, NsPerSample: slope}
	res := residuals(pts, line)
	abs := make([]float64, len(res))
	for i, r := range res {
		abs[i] = math.Abs(r)
	}
	tol := math.Max(math.Max(4*stat.MADScale*stat.LowerMedian(abs), 20e3), 2*nominal)
	good := 0
	for i, r := range res {
		use[i] = math.Abs(r) <= float64(pts[i].HostRecv-pts[i].HostSent)/2+tol
		if use[i] {
			good++
		}
	}
	if len(pts) == 2 {
		// Two marks always sit on the line through them: they agree if the
		// drift that line implies is possible at all.
		a, b := pts[0], pts[1]
		span := float64(b.MeterIndex - a.MeterIndex)
		off := math.Abs(float64(mid(b)-mid(a)) - nominal*span)
		slack := float64(a.HostRecv-a.HostSent+b.HostRecv-b.HostSent)/2 + maxPPM*1e-6*nominal*span + math.Max(40e3, 4*nominal)
		good = 2
		if !(off <= slack) {
			good = 0
		}
		use[0], use[1] = good == 2, good == 2
	}
	return good
}

// residualStats sets the fit's residuals over the marks in use (RMS, max),
// their median round trip and the drift.
func (c *Clock) residualStats(pts []meter.MarkEcho, use []bool, nominal float64) {
	res := residuals(pts, *c)
	var ss, mx, ex float64
	var rtts []float64
	for i, r := range res {
		if !use[i] {
			continue
		}
		c.Used++
		ss += r * r
		mx = math.Max(mx, math.Abs(r))
		rtt := float64(pts[i].HostRecv - pts[i].HostSent)
		ex = math.Max(ex, math.Abs(r)-rtt/2)
		rtts = append(rtts, rtt)
	}
	c.ResidualMS.RMS = units.Milliseconds(math.Sqrt(ss/float64(c.Used)) / 1e6)
	c.ResidualMS.Max = units.Milliseconds(mx / 1e6)
	c.ResidualMS.Excess = units.Milliseconds(ex / 1e6)
	c.MedianRTTMS = units.Milliseconds(stat.UpperMedian(rtts) / 1e6)
	c.U95MS = c.MedianRTTMS/2 + c.ResidualMS.Excess
	c.DriftPPM = (c.NsPerSample/nominal - 1) * 1e6
}

// checkStart compares where the fit puts sample 0 with the header's start
// time (see Clock.StartOffsetS). A fit through one mark has nothing to
// outvote it: it is dropped for the header's start and nominal rate.
func checkStart(c *Clock, startHost hostclock.Time, nominal float64) {
	if startHost == 0 {
		return // a header without a start time: nothing to compare
	}
	off := c.HostF(0) - float64(startHost)
	slack := math.Max(StartSlack, 2*float64(c.MedianRTTMS)*1e6)
	if off >= -slack && off <= MaxStartLatency {
		return
	}
	c.StartOffsetS = units.Seconds(off / 1e9)
	if c.StartOffsetS == 0 {
		c.StartOffsetS = units.Seconds(math.Copysign(1e-9, off))
	}
	if c.Used > 1 {
		return
	}
	c.StartRejected = true
	c.Fitted = false
	c.Outliers += c.Used
	c.Used = 0
	c.Ref, c.Base, c.NsPerSample, c.DriftPPM = 0, float64(startHost), nominal, 0
	c.ResidualMS.RMS, c.ResidualMS.Max = 0, 0
}

// robustLine returns the repeated-median slope (ns per sample) and the
// median offset at ref of pts (sorted by index), thinned to at most 512
// marks evenly spread; nominal when no two marks differ in index.
func robustLine(pts []meter.MarkEcho, ref uint64, nominal float64) (slope, base float64) {
	const most = 512
	sel := pts
	if len(pts) > most {
		sel = make([]meter.MarkEcho, most)
		for k := range sel {
			sel[k] = pts[k*(len(pts)-1)/(most-1)]
		}
	}
	y0 := mid(pts[0])
	x := func(p meter.MarkEcho) float64 { return float64(int64(p.MeterIndex - ref)) }
	y := func(p meter.MarkEcho) float64 { return float64(mid(p) - y0) }
	var inner, outer []float64
	for i, a := range sel {
		inner = inner[:0]
		for j, b := range sel {
			if dx := x(b) - x(a); i != j && dx != 0 {
				inner = append(inner, (y(b)-y(a))/dx)
			}
		}
		if len(inner) > 0 {
			outer = append(outer, stat.LowerMedian(inner))
		}
	}
	slope = nominal
	if len(outer) > 0 {
		slope = stat.LowerMedian(outer)
	}
	return slope, medianOffset(pts, ref, slope)
}

// medianOffset is the median over pts of the host time at ref implied by
// each mark's midpoint and the slope.
func medianOffset(pts []meter.MarkEcho, ref uint64, slope float64) float64 {
	y0 := mid(pts[0])
	off := make([]float64, len(pts))
	for i, p := range pts {
		off[i] = float64(mid(p)-y0) - slope*float64(int64(p.MeterIndex-ref))
	}
	return float64(y0) + stat.MedianInPlace(off)
}

// lineFit fits mid = base + slope·(index − ref) by weighted least squares
// over the used points, in coordinates centred on the first point so
// float64 keeps nanosecond precision on hosts with long uptimes. Each mark
// weighs 1/s², s its midpoint's error bound (markSpread): a mark whose echo
// took 10 ms lies anywhere within ±5 ms of the line and says almost
// nothing beside ones that took 0.1 ms. Unweighted, the one mark of a
// 5 s window the host's load had delayed (RTT 10 ms, 5 ms off the line:
// within its own round trip, so no outlier) tilted a 20 s capture's line
// by −193 ppm and every DevSlp exit (a pin edge on the meter's clock to a
// read's completion on the host's) by up to 2.5 ms, against the truth's
// 0 ppm (campaign seed 17 drive 78).
func lineFit(pts []meter.MarkEcho, use []bool, ref uint64, nominal float64) (base, slope float64) {
	y0 := mid(pts[0])
	wt := markWeights(pts, use, nominal)
	var n, sw, sx, sy, sxx, sxy float64
	for i, p := range pts {
		if !use[i] {
			continue
		}
		x := float64(int64(p.MeterIndex - ref))
		y := float64(mid(p) - y0)
		w := wt(p)
		n++
		sw += w
		sx += w * x
		sy += w * y
		sxx += w * x * x
		sxy += w * x * y
	}
	if n == 0 {
		return float64(y0), nominal
	}
	slope = nominal
	if d := sw*sxx - sx*sx; n >= 2 && d > 0 {
		slope = (sw*sxy - sx*sy) / d
	}
	return float64(y0) + (sy-slope*sx)/sw, slope
}

// markSpread is the standard deviation (ns) of a mark's midpoint about the
// true line: the meter saw the mark somewhere in its round trip, so the
// midpoint is within ±RTT/2 — uniform, σ = RTT/√12 — and the meter index
// itself within half a sample period; at least markSpreadFloorNs (a round
// trip read as 0 is a clock's resolution, not certainty).
func markSpread(m meter.MarkEcho, nominal float64) float64 {
	rtt := float64(m.HostRecv.Sub(m.HostSent))
	return math.Max(math.Hypot(rtt/math.Sqrt(12), nominal/math.Sqrt(12)), markSpreadFloorNs)
}

// markSpreadFloorNs bounds markSpread below: 5 µs.
const markSpreadFloorNs = 5e3

// markWeights gives each used mark's weight in the line fit: 1/markSpread²,
// scaled so that the tightest mark weighs 1 — marks of one round trip
// (synthetic marks, RTT 0) weigh exactly 1, and the fit is the plain
// least squares bit for bit.
func markWeights(pts []meter.MarkEcho, use []bool, nominal float64) func(meter.MarkEcho) float64 {
	smin := math.Inf(1)
	for i, p := range pts {
		if use[i] {
			smin = math.Min(smin, markSpread(p, nominal))
		}
	}
	return func(m meter.MarkEcho) float64 {
		r := smin / markSpread(m, nominal)
		return r * r
	}
}

func mid(m meter.MarkEcho) hostclock.Time { return m.HostSent + (m.HostRecv-m.HostSent)/2 }

func residuals(pts []meter.MarkEcho, c Clock) []float64 {
	out := make([]float64, len(pts))
	for i, p := range pts {
		out[i] = float64(mid(p)) - c.HostF(float64(p.MeterIndex))
	}
	return out
}
