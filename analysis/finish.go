package analysis

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/idlewatt/idlewatt/analysis/series"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/stat"
	"github.com/idlewatt/idlewatt/units"
)

// finish turns the accumulators into the report's numbers and notes.
func (r *Report) finish(p *pass1, c *Clock, t0 float64, opts Options) {
	dt := c.NsPerSample / 1e9
	last := r.captureSpan(t0)
	r.endNotes()
	r.inputNotes(opts)
	relPeriod := periodU95(c, r.Capture.DurationS)
	for i, d := range r.drivesProc {
		r.finishDrive(&r.Drives[i], d, p, dt, t0, relPeriod)
		r.traces = append(r.traces, d.chart(t0, last))
	}
	var names []string
	var hists []*Histogram
	for i, d := range r.drivesProc {
		if d.total.all.n > 0 {
			names = append(names, r.Drives[i].Name)
			hists = append(hists, &d.total.hist)
		}
	}
	r.dists = distributions(names, hists)
	r.drivesProc = nil
	if len(r.Notes) > 0 {
		r.Notes = dedupe(r.Notes)
	}
}

// captureSpan sets the capture's duration and start from the drives'
// first and last samples, and returns the last one's host time.
func (r *Report) captureSpan(t0 float64) (last int64) {
	first, last := int64(math.MaxInt64), int64(math.MinInt64)
	for _, d := range r.drivesProc {
		if d.any {
			first, last = min(first, d.first), max(last, d.last)
		}
	}
	if first <= last {
		r.Capture.DurationS = units.Seconds(float64(last-first) / 1e9)
		r.Capture.StartS = units.Seconds((float64(first) - t0) / 1e9)
	} else {
		r.note("the capture holds no samples")
	}
	return last
}

// inputNotes says what the report could not use: I/O events and a state
// classifier.
func (r *Report) inputNotes(opts Options) {
	if r.Capture.IOEvents == 0 {
		r.note("no I/O events: all time counts as idle (idle-only report)")
	}
	if r.Capture.Unattributed > 0 {
		r.note(fmt.Sprintf("%d I/O events name no port and the capture has several drives: they are not attributed", r.Capture.Unattributed))
	}
	if opts.NewClassifier == nil {
		r.note("no state classifier: residency is active (busy) vs idle from I/O segmentation; partial, slumber and devslp read 0")
	}
}

// finishDrive fills one drive's report from its processor.
func (r *Report) finishDrive(dr *DriveReport, d *driveProc, p *pass1, dt, t0, relPeriod float64) {
	d.collect()
	t := &d.total
	n := t.all.n
	dr.Rails = nil
	for _, ch := range d.rails {
		dr.Rails = append(dr.Rails, p.hdr.Channels[ch].Rail.String())
	}
	qe := r.drivePower(dr, d, dt, relPeriod)
	r.driveSamples(dr, d, dt)
	if n > 0 {
		d.residency(dr)
	}
	if d.unlearned != "" && n > 0 {
		// Not a guess from I/O alone: what needs the drive's levels is
		// not measured.
		nan, nanW := math.NaN(), units.Watts(math.NaN())
		dr.Residency = Residency{nan, nan, nan, nan, nan, nan, nan}
		dr.StatePowerW = StatePower{nanW, nanW, nanW, nanW, nanW, nanW}
		dr.ActiveIdleW, dr.ActiveIdleU95W = nanW, nil
		dr.Bursts = burstInfo(levelEstimate{Level: nan}, dt)
		r.note(fmt.Sprintf("drive %q: %s; its residency, per-state power and active_idle_w are null", dr.Name, d.unlearned))
	}
	dr.DevSlp = d.devslpReport(p, dr.Port)
	r.addDevSlpChart(dr.Name, dr.Port, d.devslpChart)
	if dr.Residency.DevSlp > 0 {
		// No pin cycles (the HBA's own DevSlp, say): entered, but the floor
		// is the judged cycles' alone; the DevSlp intervals' mean is
		// state_power_w.devslp, a quantity of its own.
		dr.DevSlp.Entered = true
	}
	dr.IO = ioTotals(&t.io, dr.Segments, dr.DurationS, dr.AverageW)
	if d.dropped > 0 {
		r.note(fmt.Sprintf("drive %q: %d samples missing in %d gaps (%.3f s): metrics cover the %.3f s measured; nothing is interpolated", dr.Name, d.dropped, d.gaps, dr.Samples.MissingS, dr.DurationS))
	}
	for pi, name := range d.phaseNames {
		if ph, ok := d.phase(pi, name, qe, dt, t0, relPeriod); ok {
			if d.unlearned != "" {
				ph.ActiveIdleW, ph.ActiveIdleU95W, ph.Bursts = units.Watts(math.NaN()), nil, burstInfo(levelEstimate{Level: math.NaN()}, dt)
			}
			dr.Phases = append(dr.Phases, ph)
		}
	}
}

// drivePower fills a drive's power, energy, idle and quiet figures with
// their uncertainties, notes the ones that could not be measured, and
// returns the active-idle estimate (whose noise the phases borrow).
func (r *Report) drivePower(dr *DriveReport, d *driveProc, dt, relPeriod float64) levelEstimate {
	t := &d.total
	n := t.all.n
	dr.DurationS = units.Seconds(float64(n) * dt)
	dr.EnergyJ = units.Joules(nanIfNone(n, t.all.sum*dt))
	dr.EnergyWh = float64(dr.EnergyJ) / 3600
	dr.AverageW = units.Watts(nanIfNone(n, t.all.mean()))
	pk, pkDelta := d.peakOf(t)
	dr.PeakW = units.Watts(nanIfNone(n, pk))
	dr.MinW = units.Watts(nanIfNone(n, t.all.min))
	dr.P50W, dr.P95W, dr.P99W = quant(&t.hist, t.all, 0.5), quant(&t.hist, t.all, 0.95), quant(&t.hist, t.all, 0.99)
	dr.PeakWindows = peaks(t)
	ia := t.byAct[Idle]
	dr.Idle = IdleInfo{Samples: t.idleHist.Count(), S: units.Seconds(float64(t.idleHist.Count()) * dt), MeanW: units.Watts(nanIfNone(ia.n, ia.mean())),
		P5W: quant(&t.idleHist, ia, 0.05), P95W: quant(&t.idleHist, ia, 0.95)}
	qe := d.activeIdle(&d.quiet, &d.rest, &d.mp)
	dr.ActiveIdleW, dr.ActiveIdleU95W = qe.watts()
	dr.Bursts = burstInfo(qe, dt)
	re := qe
	if d.cls != nil {
		re = d.quietLevel(&d.rest)
	}
	dr.Quiet = quietPower(re, dt)
	if math.IsNaN(qe.NoiseVar1) {
		// Too little active idle to measure the noise: measure it at
		// whatever level the drive rested (Slumber, DevSlp) instead.
		if !math.IsNaN(re.NoiseVar1) {
			qe.NoiseVar1, qe.Dof, qe.Blocks, qe.BlockS = re.NoiseVar1, re.Dof, re.Blocks, re.BlockS
			qe.Note += "; noise measured over idle time in every state"
		}
	}
	dr.AverageU95W = (*units.Watts)(meanU95(n, qe, d.resU(dr.AverageW, qe)))
	dr.EnergyU95J = energyU95(dr.AverageU95W, dr.DurationS, dr.EnergyJ, relPeriod)
	dr.Uncertainty = d.uncertainty(qe, dt)
	if !math.IsNaN(qe.NoiseVar1) {
		if d.pole != nil {
			b, u95B := d.pole.b()
			dr.PeakCI95W = peakCI95Deconvolved(dr.PeakW, pkDelta, int(n), qe.peakSigma(), d.resU(dr.PeakW, qe), b, u95B)
		} else {
			dr.PeakCI95W = peakCI95(dr.PeakW, int(n), qe.peakSigma(), d.resU(dr.PeakW, qe))
		}
		dr.PeakCI95W = widenByLevelStep(dr.PeakCI95W, d.cls)
	}
	switch {
	case n > 0 && math.IsNaN(float64(dr.ActiveIdleW)):
		r.note(fmt.Sprintf("drive %q: active_idle_w is null, not measured: %s (quiet = no I/O outstanding, past the settle tail, DEVSLP not asserted, in active idle)", dr.Name, qe.Note))
	case n > 0 && dr.ActiveIdleU95W == nil:
		r.note(fmt.Sprintf("drive %q: active_idle_u95_w is null: %s", dr.Name, qe.Note))
	}
	if n > 0 && dr.Uncertainty.ResolutionUW == nil && dr.ActiveIdleU95W != nil {
		r.note(fmt.Sprintf("drive %q: the capture's channels state no LSB: the intervals hold the noise measured and float32 storage, not the meter's resolution", dr.Name))
	}
	if n > 0 && dr.Uncertainty.CalibrationUW == nil && dr.ActiveIdleU95W != nil {
		r.note(fmt.Sprintf("drive %q: the capture's channels state no calibration limits (current_gain_error, volt_gain_error, current_offset_a): the intervals do not hold the meter's calibration", dr.Name))
	}
	if n > 0 && dr.AverageU95W == nil {
		r.note(fmt.Sprintf("drive %q: average_u95_w and energy_u95_j are null: the sensor noise could not be measured (%s)", dr.Name, qe.Note))
	}
	return qe
}

// driveSamples fills a drive's segments and sample counts, and notes the
// samples left out.
func (r *Report) driveSamples(dr *DriveReport, d *driveProc, dt float64) {
	t := &d.total
	dr.Segments = segments(t, dt, len(d.act.spans))
	dr.Samples = SampleInfo{Count: t.all.n, Dropped: d.dropped, CRCErrors: r.Capture.CRCErrors, Gaps: d.gaps,
		MissingS: units.Seconds(float64(d.dropped) * dt), Late: d.late, Rejected: d.rejected, RejectedJ: units.Joules(d.rejectedW * dt), Invalid: d.invalid}
	if d.rejected > 0 {
		s := fmt.Sprintf("drive %q: %d rail samples (%.6g J) hold sample indices the drive's timeline already has (overlapping, backward or restarted chunks): energy_j %.6g J covers each instant once and leaves them out", dr.Name, d.rejected, dr.Samples.RejectedJ, dr.EnergyJ)
		if d.restartW != 0 {
			s += fmt.Sprintf("; %.6g J of them come after the index restarted at 0 — if that is a second run of the meter, the two runs drew energy_j + %.6g J", d.restartW*dt, d.restartW*dt)
		}
		r.note(s)
	}
	if d.invalid > 0 {
		r.note(fmt.Sprintf("drive %q: %d rail samples have invalid values (NaN, ±Inf or |V·I| > %g W): treated as missing (gap reason %q), in no figure", dr.Name, d.invalid, MaxPlausibleW, GapInvalid))
	}
	if d.late > 0 {
		r.note(fmt.Sprintf("drive %q: %d rail samples arrived after their index was given up (a rail more than the skew limit behind the others): ignored", dr.Name, d.late))
	}
}

// residency fills a drive's state residency and per-state power; the
// drive has samples.
func (d *driveProc) residency(dr *DriveReport) {
	n := d.total.all.n
	res := [numStates]float64{}
	for s := range res {
		res[s] = float64(d.states[s].n) / float64(n)
	}
	dr.Residency = Residency{Active: res[StateActive], Background: res[StateBackground], Idle: res[StateIdle], Partial: res[StatePartial], Slumber: res[StateSlumber], DevSlp: res[StateDevSlp], Off: res[StateOff]}
	dr.StatePowerW = StatePower{Active: units.Watts(d.states[StateActive].mean()), Background: units.Watts(d.states[StateBackground].mean()), Idle: units.Watts(d.states[StateIdle].mean()),
		Partial: units.Watts(d.states[StatePartial].mean()), Slumber: units.Watts(d.states[StateSlumber].mean()), DevSlp: units.Watts(d.states[StateDevSlp].mean())}
}

// phase is the drive's figures over phase pi, or false if the phase has
// neither samples nor I/O. A phase too short for its own noise estimate
// borrows the drive's (qe), scaled to the samples its level averages.
func (d *driveProc) phase(pi int, name string, qe levelEstimate, dt, t0, relPeriod float64) (Phase, bool) {
	m := d.phases[pi]
	if m.all.n == 0 && m.io.ops == 0 {
		return Phase{}, false
	}
	mn := m.all.n
	ph := Phase{Name: name, Samples: mn, DurationS: units.Seconds(float64(mn) * dt), AverageW: units.Watts(nanIfNone(mn, m.all.mean())), PeakW: units.Watts(nanIfNone(mn, d.peakOfW(m))),
		MinW: units.Watts(nanIfNone(mn, m.all.min)), EnergyJ: units.Joules(nanIfNone(mn, m.all.sum*dt)),
		P50W: quant(&m.hist, m.all, 0.5), P95W: quant(&m.hist, m.all, 0.95), P99W: quant(&m.hist, m.all, 0.99),
		PeakWindows: d.phasePeaks(m, mn), Segments: segments(m, dt, 0)}
	borrow := func(e *levelEstimate) {
		if e.U95 == nil && !math.IsNaN(e.Level) && !math.IsNaN(qe.NoiseVar1) && e.Kept > 0 {
			e.U95 = meanU95(uint64(e.Kept), qe, d.resU(units.Watts(e.Level), qe))
		}
	}
	pe := d.activeIdle(&m.quiet, &m.rest, &m.mp)
	borrow(&pe)
	ph.ActiveIdleW, ph.ActiveIdleU95W = pe.watts()
	ph.Bursts = burstInfo(pe, dt)
	pr := pe
	if d.cls != nil {
		pr = d.quietLevel(&m.rest)
		borrow(&pr)
	}
	ph.Quiet = quietPower(pr, dt)
	ph.AverageU95W = (*units.Watts)(meanU95(mn, qe, d.resU(ph.AverageW, qe)))
	ph.EnergyU95J = energyU95(ph.AverageU95W, ph.DurationS, ph.EnergyJ, relPeriod)
	if m.seen {
		ph.StartS = units.Seconds((float64(m.first) - t0) / 1e9)
	}
	ph.IO = ioTotals(&m.io, ph.Segments, ph.DurationS, ph.AverageW)
	return ph, true
}

// endNotes says what the reader's account holds and why reading stopped
// early, if it did. Plot gives the same lines.
func (r *Report) endNotes() {
	tailDamage := r.integrity()
	if r.Capture.Complete {
		return
	}
	what := "the end chunk"
	if r.Capture.EndError != "" {
		what += " (" + r.Capture.EndError + ")"
	}
	at := fmt.Sprintf("byte %d", r.Capture.EndOffset)
	if r.Capture.DurationS > 0 {
		at += fmt.Sprintf(", %.3f s after the first sample", r.Capture.DurationS)
	}
	if tailDamage {
		r.dataNote(fmt.Sprintf("capture damaged to its end: nothing intact follows %s; %s is lost to media damage, not to an unclean stop — everything intact before is reported", at, what))
		return
	}
	r.dataNote(fmt.Sprintf("capture incomplete: reading stopped at %s, without %s — the run did not finish cleanly; everything before is reported, anything after (later phases, final link statistics) is missing", at, what))
}

// integrity fills Capture.Integrity from the reader's account, adds its
// notes, and says whether damage ran to the end of the file.
func (r *Report) integrity() (tail bool) {
	in := &r.Capture.Integrity
	in.InvalidSamples = r.Capture.invalid
	if in.InvalidSamples > 0 {
		if r.Capture.GapReasons == nil {
			r.Capture.GapReasons = map[string]uint64{}
		}
		r.Capture.GapReasons[GapInvalid] += in.InvalidSamples
	}
	in.KeptFraction = 1
	a := r.account
	r.account = nil
	if a == nil {
		return false
	}
	in.DamagedRegions, in.DamagedBytes, in.ChunksLost = a.DamageRegions, a.DamagedBytes, a.ChunksLost
	in.SamplesLost = a.SamplesLost
	if u, ok := a.Unaccounted(); ok {
		in.SamplesLost, in.SamplesLostExact = u, true
	}
	in.CorrectedBits, in.InvalidChunks = len(a.Corrected), a.Invalid
	var rejected uint64
	for re, x := range a.Rejected {
		if x.Samples > 0 {
			if in.RejectedSamples == nil {
				in.RejectedSamples = map[string]uint64{}
			}
			in.RejectedSamples[capture.Reject(re).String()] = x.Samples
			rejected += x.Samples
		}
	}
	in.TrailingBytes, in.TrailingCapture = a.Trailing.Bytes, a.Trailing.Capture
	delivered := a.Read - min(rejected, a.Read)
	if held := delivered + in.SamplesLost; in.SamplesLostExact && a.Written > 0 {
		in.KeptFraction = float64(delivered) / float64(a.Written)
	} else if held > 0 {
		in.KeptFraction = float64(delivered) / float64(held)
	}
	for _, n := range a.Notes() {
		r.dataNote(n)
	}
	for _, d := range a.Damage {
		tail = tail || d.Tail
	}
	return tail
}

// quant is the x-quantile of h, whose values a summarises, kept inside their
// range; NaN without values.
func quant(h *Histogram, a acc, x float64) units.Watts {
	return units.Watts(h.QuantileIn(x, a.min, a.max))
}

func nanIfNone(n uint64, x float64) float64 {
	if n == 0 {
		return math.NaN()
	}
	return x
}

// periodU95 is the relative 95 % interval of the fitted sample period:
// the least-squares slope's, residual σ over the marks' spread (taken as
// even over the capture's spanS), Student t at n−2 degrees of freedom; 0
// without a fit of at least 3 marks (drift then is not corrected, and not
// bounded either: the method string says so).
func periodU95(c *Clock, spanS units.Seconds) float64 {
	n := float64(c.Used)
	if !c.Fitted || n < 3 || !(spanS > 0) {
		return 0
	}
	sigma := float64(c.ResidualMS.RMS) * 1e-3 * math.Sqrt(n/(n-2))
	return t975(n-2) * sigma / (float64(spanS) * math.Sqrt(n/12))
}

// energyU95 is the 95 % interval of an energy e measured over durS at an
// average with interval uAvg: the average's, times the duration, and the
// sample period's (relative, relPeriod), in quadrature.
func energyU95(uAvg *units.Watts, durS units.Seconds, e units.Joules, relPeriod float64) *units.Joules {
	if uAvg == nil {
		return nil
	}
	u := units.Joules(math.Hypot(float64(*uAvg)*float64(durS), float64(e)*relPeriod))
	return &u
}

func peaks(m *metricSet) PeakWindows {
	var w [4]units.Watts
	for k := range w {
		w[k] = units.Watts(math.NaN())
		if m.winSeen[k] {
			w[k] = units.Watts(m.win[k])
		}
	}
	return PeakWindows{W1ms: w[0], W10ms: w[1], W100ms: w[2], W1s: w[3]}
}

// phasePeaks is peaks for a phase of n samples: a window longer than the
// phase is no peak of it (the sliding windows run over the whole drive, so
// one ending in a 0.2 ms phase holds 1 s of what came before): NaN.
func (d *driveProc) phasePeaks(m *metricSet, n uint64) PeakWindows {
	p := peaks(m)
	if d.wins == nil {
		return p
	}
	for k, f := range []*units.Watts{&p.W1ms, &p.W10ms, &p.W100ms, &p.W1s} {
		if uint64(d.wins.n[k]) > n {
			*f = units.Watts(math.NaN())
		}
	}
	return p
}

// activeIdleMethod is settings.idle_floor: how active_idle_w is found.
const activeIdleMethod = "mean of quiet samples (no I/O outstanding, past the settle tail, DEVSLP not asserted, active-idle state when classified), " +
	"leaving out background bursts and dips: 10 ms blocks beyond max(5 robust sigma, 1 %) of the median block, and a burst's neighbours; " +
	"with the drive's levels (learned from the capture), over quiet time in every link state: 10 ms blocks within max(5 sigma, 0.2 %) of the dominant mode of block means in the idle band " +
	"(sigma from successive-block differences), blocks above are bursts, below are other states"

// uncertaintyMethod is uncertainty.method.
const uncertaintyMethod = "95 % expanded: levels by batch means of their quiet blocks, the batch length from the blocks' own autocorrelation (10 correlation lengths, at least 10 batches), " +
	"never below the drive's quiet noise over the level's samples; the drive's quiet noise from a variogram of differences at dyadic lags, robust to level steps " +
	"(one sample's sigma, its correlation, its long-run variance, with robust batch means), which average and energy scale to their samples; " +
	"Student t at the Welch-Satterthwaite degrees of freedom, with the channels' LSB resolution (rectangular, dithered by one sample's sigma) and stated calibration limits (rectangular) in quadrature"

// quietLevel estimates the level of one quiet block series.
func (d *driveProc) quietLevel(b *blockSeries) levelEstimate {
	return d.levelOf(b, math.Inf(-1), math.Inf(1))
}

// activeIdle is the active-idle estimate: with a classifier of the drive's
// learned levels (IdleBander; with state detection, every SATA drive whose
// levels were learned), level-based over rest, the quiet samples in every
// link state, within the learned idle band; without state detection (or
// for a drive the levels hold no idle level for), median-centred over
// quiet, the quiet samples labelled active idle (estimateLevel).
//
// Where level learning took idle from the max_performance time because
// the mode over every context held a lower level too (idleFromMP), the
// estimate is over mp, the quiet samples under max_performance, when they
// show an idle level: in every link state, a Partial scattered over idle's
// band by noise that 10 ms blocks do not average (an aliased ripple, hum)
// outnumbered idle's blocks, and active idle read the Partial level
// (held-out campaign seed 31 drive 1; TestIdleFromMaxPerformanceWhenPartialMerges).
func (d *driveProc) activeIdle(quiet, rest, mp *blockSeries) levelEstimate {
	f, ok := d.cls.(IdleBander)
	if !ok {
		return d.quietLevel(quiet)
	}
	lo, hi, ok := f.IdleBand()
	if !ok {
		return d.quietLevel(quiet)
	}
	if m, ok := d.cls.(idleFromMP); ok && m.IdleFromMaxPerformance() {
		// One level (idle) and background work above it: as the quiet
		// level (no band: no lower state to cut), with a block σ of at
		// least the blocks' own spread, 5th to 95th percentile ÷ 3.29 —
		// noise slower than a block (an aliased ripple) makes successive
		// blocks alike, and at their differences' σ the densest window,
		// or idle's band, kept one swing of it: 2–3 % off.
		if e := d.levelOfSpread(mp, math.Inf(-1), math.Inf(1), mpBlockSpread(mp)); !math.IsNaN(e.Level) {
			return e
		}
	}
	// Not the samples labelled active idle, even where rest shows no idle
	// level: under noise they are partly lower-state samples the noise
	// carried over the threshold (a 54 mW SSD read 47 mW from them).
	return d.bandLevel(rest, lo, hi)
}

// widenByLevelStep widens a peak's interval by half the meter's learned
// level step (learning.level_step_w) each way: a random telegraph offsets
// each reading by ±step/2, which the noise model — robust to level steps —
// leaves out, and the peak reading sits on either half (held-out campaign
// seeds 34–36, steps family: 4 of 27 peaks read 1.3–4 mW high, outside
// intervals of ±0.5–3 mW; TestIntervalsUnderLevelSteps).
func widenByLevelStep(ci *[2]units.Watts, cls StateClassifier) *[2]units.Watts {
	ls, ok := cls.(learnedSpread)
	if ci == nil || !ok {
		return ci
	}
	a := units.Watts(ls.LevelStep() / 2)
	if !(a > 0) {
		return ci
	}
	return &[2]units.Watts{ci[0] - a, ci[1] + a}
}

// mpBlockSpread is the 5th-to-95th-percentile spread ÷ 3.29 (2 z95) of b's
// whole block means; 0 with fewer than 20.
func mpBlockSpread(b *blockSeries) float64 {
	var ms []float64
	for _, x := range b.all() {
		if x.n == b.L {
			ms = append(ms, x.sum/float64(x.n))
		}
	}
	if len(ms) < 20 {
		return 0
	}
	slices.Sort(ms)
	return (stat.SortedQuantile(ms, 0.95) - stat.SortedQuantile(ms, 0.05)) / (2 * z95)
}

// idleFromMP is a classifier whose learned idle level is the
// max_performance mode's, the mode over every context holding a lower
// level too (LevelLearning.idleMP).
type idleFromMP interface{ IdleFromMaxPerformance() bool }

func (d *driveProc) bandLevel(b *blockSeries, lo, hi units.Watts) levelEstimate {
	return d.levelOf(b, float64(lo), float64(hi))
}

// resU is the resolution and calibration term of a mean power p, dithered
// by one sample's quiet noise q found.
// peakOfW is peakOf's power.
func (d *driveProc) peakOfW(m *metricSet) float64 {
	w, _ := d.peakOf(m)
	return w
}

func (d *driveProc) resU(p units.Watts, q levelEstimate) float64 {
	sigma := 0.0
	if s := q.sampleSigma(); !math.IsNaN(s) {
		sigma = s
	}
	u, _ := resolutionU(d.lsb, float64(p), sigma)
	return u
}

func (d *driveProc) uncertainty(qe levelEstimate, dt float64) Uncertainty {
	u := Uncertainty{Method: uncertaintyMethod, Level: 0.95, NoiseBlocks: qe.Blocks, NoiseBlockMS: units.Milliseconds(qe.BlockS * dt * 1e3), Note: qe.Note}
	if s := units.Watts(qe.sampleSigma()); !math.IsNaN(float64(s)) {
		u.NoiseSigmaW = &s
	}
	if s := units.Watts(qe.peakSigma()); !math.IsNaN(float64(s)) {
		u.NoisePeakSigmaW = &s
	}
	if d.pole != nil {
		tau, u95 := d.pole.tauS(dt)
		ms, ums := units.Milliseconds(tau*1e3), units.Milliseconds(u95*1e3)
		u.SensorTimeConstantMS, u.SensorTimeConstantU95MS, u.SensorSteps = &ms, &ums, d.pole.Steps
	}
	if !math.IsNaN(qe.NoiseVar1) {
		s, c := units.Watts(math.Sqrt(qe.NoiseVar1)), units.Milliseconds(float64(qe.CorrLen)*dt*1e3)
		u.NoiseLongRunSigmaW, u.NoiseCorrMS = &s, &c
	}
	if r, known := stat.ResolutionU(d.lsb, qe.Level, 0); known && !math.IsNaN(r) {
		u.ResolutionUW = (*units.Watts)(&r)
	}
	if c, known := stat.CalibrationU(d.lsb, qe.Level); known && !math.IsNaN(c) {
		u.CalibrationUW = (*units.Watts)(&c)
	}
	return u
}

func burstInfo(e levelEstimate, dt float64) Bursts {
	quiet := e.Kept + e.BurstN + e.LowN
	b := Bursts{QuietS: units.Seconds(float64(quiet) * dt), Count: e.Bursts, S: units.Seconds(float64(e.BurstN) * dt), EnergyJ: units.Joules(e.BurstSum * dt), MeanW: units.Watts(math.NaN())}
	if quiet > 0 {
		b.Share = float64(e.BurstN) / float64(quiet)
		b.DipShare = float64(e.LowN) / float64(quiet)
	}
	if e.BurstN > 0 {
		b.MeanW = units.Watts(e.BurstSum / float64(e.BurstN))
		if !math.IsNaN(e.Level) {
			b.ExcessJ = units.Joules((e.BurstSum - e.Level*float64(e.BurstN)) * dt)
		}
	}
	return b
}

func segments(m *metricSet, dt float64, count int) Segments {
	return Segments{BusyS: units.Seconds(float64(m.byAct[Busy].n) * dt), SettleS: units.Seconds(float64(m.byAct[Settle].n) * dt), IdleS: units.Seconds(float64(m.byAct[Idle].n) * dt),
		BusyW: units.Watts(nanIfNone(m.byAct[Busy].n, m.byAct[Busy].mean())), SettleW: units.Watts(nanIfNone(m.byAct[Settle].n, m.byAct[Settle].mean())),
		IdleW: units.Watts(nanIfNone(m.byAct[Idle].n, m.byAct[Idle].mean())), BusyCount: count}
}

func ioTotals(a *ioAcc, seg Segments, durS units.Seconds, avgW units.Watts) IOTotals {
	t := IOTotals{Ops: a.ops, Bytes: a.bytes, Errors: a.errs, BusyS: seg.BusyS}
	if a.ops > 0 {
		t.ByOp = map[string]OpTotal{}
		for op := capture.OpRead; op <= capture.OpTrim; op++ {
			if a.byOp[op].Ops > 0 {
				t.ByOp[op.String()] = a.byOp[op]
			}
		}
	}
	mb := float64(a.bytes) / 1e6
	if seg.BusyS > 0 && seg.BusyW > 0 {
		busyS, busyW := float64(seg.BusyS), float64(seg.BusyW)
		t.MBPerSPerWBusy = mb / busyS / busyW
		t.IOPSPerWBusy = float64(a.ops) / busyS / busyW
	}
	if durS > 0 && avgW > 0 {
		t.MBPerSPerW = mb / float64(durS) / float64(avgW)
		t.IOPSPerW = float64(a.ops) / float64(durS) / float64(avgW)
	}
	return t
}

// watts is the estimate as a report's level and its 95 % half-width.
func (e levelEstimate) watts() (units.Watts, *units.Watts) {
	return units.Watts(e.Level), (*units.Watts)(e.U95)
}

// quietPower is the quiet level e with its bursts.
func quietPower(e levelEstimate, dt float64) QuietPower {
	w, u := e.watts()
	return QuietPower{W: w, U95W: u, Bursts: burstInfo(e, dt)}
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// chart extracts the drive's chart series.
func (d *driveProc) chart(t0 float64, end int64) series.Trace {
	tr := series.Trace{Name: d.info.Name}
	if d.dec != nil {
		tr.Power = d.dec.Envelope()
	}
	sec := func(t int64) float64 { return (float64(t) - t0) / 1e9 }
	// Busy intervals closer than a chart bucket would be drawn as one.
	join := int64(1e9 * d.dec.Width())
	for _, sp := range d.act.spans {
		if n := len(tr.IO); n > 0 && sec(sp.s)-tr.IO[n-1].End < float64(join)/1e9 {
			tr.IO[n-1].End = sec(sp.e)
			continue
		}
		tr.IO = append(tr.IO, series.Interval{Start: sec(sp.s), End: sec(sp.e)})
	}
	for _, sp := range d.pin.spans {
		tr.States = append(tr.States, series.StateSpan{Start: sec(sp.s), End: sec(min(sp.e, end)), State: "devslp"})
		tr.Notes = append(tr.Notes, series.Annotation{T: sec(sp.s), Text: "DEVSLP"})
	}
	for _, ps := range d.ph.spans(d.phaseNames, end) {
		if strings.TrimSpace(ps.name) == "" {
			continue
		}
		tr.Notes = append(tr.Notes, series.Annotation{T: sec(ps.s), Text: ps.name})
	}
	return tr
}
