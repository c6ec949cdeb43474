package analysis

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/idlewatt/idlewatt/internal/stat"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// Quiet power: the level a drive rests at, and its uncertainty.
//
// Quiet samples (no I/O outstanding, past the settle tail, DEVSLP pin not
// asserted, and in the active-idle state when a classifier labels states)
// are cut, in time order, into blocks of blockSeries.L consecutive quiet
// samples (10 ms to start with). The block means are what the estimates
// work on: blocks are long against the sensor noise's correlation and short
// against a background burst (garbage collection, housekeeping), so a burst
// shows as blocks far above the rest. See estimateLevel and
// docs/analysis.md, "Active idle and background bursts".

// blockSeries holds the block sums of a stream of samples in bounded
// memory: when maxBlocks blocks are full, neighbours merge in pairs and the
// block length doubles.
type blockSeries struct {
	L      int // samples per block; 0 until init
	minN   int // fewest samples for a level: minQuietS of them
	cur    blk
	blocks []blk
}

type blk struct {
	n   int
	sum float64
}

// maxBlocks bounds a series (16 B a block: 512 KiB). At 10 kS/s it holds
// 5.5 min of quiet time in 10 ms blocks before the first merge.
const maxBlocks = 1 << 15

// quietBlockS is the initial block length, s.
const quietBlockS = 0.010

// minQuietS is the least quiet time a level is reported from: a few blocks,
// not a few samples caught between two states.
const minQuietS = 0.030

func (b *blockSeries) init(rate units.Hertz) {
	b.L = max(1, int(math.Round(rate.Samples(quietBlockS))))
	b.minN = max(1, int(math.Ceil(rate.Samples(minQuietS))))
}

func (b *blockSeries) add(ps []float64) {
	if b.L == 0 {
		return
	}
	for len(ps) > 0 {
		k := min(len(ps), b.L-b.cur.n)
		b.cur.n += k
		b.cur.sum += sum4(ps[:k])
		ps = ps[k:]
		if b.cur.n >= b.L {
			b.push()
		}
	}
}

// sum4 sums ps with four accumulators: the adds do not wait on each other.
func sum4(ps []float64) float64 {
	var a, b, c, d float64
	i := 0
	for ; i+4 <= len(ps); i += 4 {
		q := ps[i : i+4 : i+4]
		a += q[0]
		b += q[1]
		c += q[2]
		d += q[3]
	}
	for ; i < len(ps); i++ {
		a += ps[i]
	}
	return (a + b) + (c + d)
}

// addEach adds each of ps in turn, as adding them one by one did (add1,
// now the tests' reference): within a block only its sum moves, so a
// block's samples are summed in a loop of their own, in order (not sum4's
// four sums: the one-by-one bits).
func (b *blockSeries) addEach(ps []float64) {
	if b.L == 0 {
		return
	}
	for len(ps) > 0 {
		k := max(1, min(len(ps), b.L-b.cur.n))
		sum := b.cur.sum
		for _, x := range ps[:k] {
			sum += x
		}
		b.cur.sum, b.cur.n = sum, b.cur.n+k
		ps = ps[k:]
		if b.cur.n >= b.L {
			b.push()
		}
	}
}

func (b *blockSeries) push() {
	if len(b.blocks) >= maxBlocks {
		h := len(b.blocks) / 2
		for i := range h {
			x, y := b.blocks[2*i], b.blocks[2*i+1]
			b.blocks[i] = blk{x.n + y.n, x.sum + y.sum}
		}
		b.blocks = b.blocks[:h]
		b.L *= 2
		if b.cur.n < b.L {
			return // the current block now has room to grow
		}
	}
	b.blocks = append(b.blocks, b.cur)
	b.cur = blk{}
}

// all returns the blocks, the last partial one included, in time order.
func (b *blockSeries) all() []blk {
	if b.cur.n > 0 {
		return append(b.blocks[:len(b.blocks):len(b.blocks)], b.cur)
	}
	return b.blocks
}

// levelEstimate is what estimateLevel finds.
type levelEstimate struct {
	Level float64 // mean of the kept quiet samples; NaN without any
	// U95 is the expanded uncertainty (95 %) of Level; nil when it cannot
	// be estimated (see Note).
	U95 *float64
	// NoiseVar1 is the variance of one sample's noise as it averages out:
	// the variance of a kept block mean times the samples per block, so
	// that NoiseVar1/N is the noise variance of a mean of N samples. NaN
	// when unknown.
	NoiseVar1 float64
	Dof       float64 // degrees of freedom of NoiseVar1
	Blocks    int     // independent block means behind U95
	BlockS    float64 // their length, in samples (multiply by the period)
	Kept      int     // samples in the level
	BurstN    int     // samples in background bursts
	BurstSum  float64
	Bursts    int // separate bursts
	LowN      int // samples excluded below the level (dips, other states)
	Note      string
	// Sigma1 is one sample's noise σ (its marginal standard deviation,
	// not its long-run part: what a single reading, the peak, scatters
	// by and what dithers the quantiser), NaN when unknown; CorrLen the
	// samples over which the noise is correlated (stat.Noise.CorrLen).
	Sigma1 float64
	// Marginal1 is one reading's largest noise over the lags measured
	// (stat.Noise.Marginal: hum and 1/f included), NaN without a model.
	Marginal1 float64
	CorrLen   int
	// sv and sdof are the statistical variance of Level and its degrees of
	// freedom (batch means of the kept blocks), before the meter's terms.
	sv, sdof float64
}

// Burst detection and independence thresholds (docs/analysis.md).
const (
	burstSigmas = 5 // a block more than 5 robust σ from the median block…
	// …4 σ when σ is the drive's noise model's (estimateLevelNoise)
	modelBurstSigmas = 4
	burstRelFrac     = 0.01 // …and more than 1 % of the level (a constant source has σ = 0)
	minBlocks        = 3    // fewest independent block means for an interval (as for a value: minQuietS); Student t at K − 1 widens it
)

// estimateLevel finds the quiet level of blocks bs (time order): the mean of
// the samples in blocks within ±max(5σ, 1 %·level, 3·uRes) of the median
// block mean, σ the robust spread of block means (the smaller of the two
// half inter-quartile distances ÷ stat.QuartileZ, so that bursts above or dips
// below, each under a quarter of the time, do not widen it). Blocks above
// that band are background bursts, and so are their neighbours (a burst's
// edges fall in part into the blocks beside it); blocks below are dips
// (another state, a short stop). uRes is the standard uncertainty of one
// reading from the meter's resolution given the noise σ of one sample (W,
// 0 when unknown) that dithers it; it is added in quadrature to the
// statistical term.
//
// With a finite floor (the block mean below which the drive is not in the
// active-idle state, from the state classifier's levels: see IdleFloorer)
// the estimate is level-based instead: blocks below floor are other states
// (LowN); the centre is the lowest dominant mode of the block means at or
// above it (idleMode), not their median, so that background bursts taking
// most of the idle-state time (an HDD's, 5–30 % above idle) do not become
// the level; and σ is the robust spread of successive block differences,
// which level changes between blocks do not widen.
func estimateLevel(bs []blk, L, minN int, resU func(sigma float64) float64) levelEstimate {
	return estimateLevelAbove(bs, L, minN, resU, math.Inf(-1), math.Inf(1))
}

func estimateLevelAbove(bs []blk, L, minN int, resU func(sigma float64) float64, floor, ceil float64) levelEstimate {
	return estimateLevelNoise(bs, L, minN, resU, floor, ceil, 0)
}

// estimateLevelNoise is estimateLevelAbove with blockSigma, the standard
// deviation of one block mean from the noise model (correlation between
// samples included; 0 unknown): the robust spreads of block means
// estimateLevelAbove takes σ from never go below it. Successive blocks of
// noise correlated over 5–20 ms are alike, so their differences alone make
// σ too small.
func estimateLevelNoise(bs []blk, L, minN int, resU func(sigma float64) float64, floor, ceil, blockSigma float64) levelEstimate {
	uRes := resU(0)
	e := levelEstimate{Level: math.NaN(), NoiseVar1: math.NaN(), Sigma1: math.NaN(), Marginal1: math.NaN()}
	var n int
	var sum float64
	for _, b := range bs {
		n += b.n
		sum += b.sum
	}
	if n == 0 {
		e.Note = "no quiet samples"
		return e
	}
	if n < minN {
		e.Note = fmt.Sprintf("%d quiet samples, less than %.0f ms: no level", n, 1e3*minQuietS)
		return e
	}
	var full []float64
	for _, b := range bs {
		if b.n >= L {
			full = append(full, b.sum/float64(b.n))
		}
	}
	if len(full) < 3 {
		e.Level, e.Kept = sum/float64(n), n
		e.Note = "too little quiet time to look for bursts or estimate an uncertainty"
		if !math.IsInf(floor, -1) {
			e.Level, e.Kept = math.NaN(), 0
			e.Note = "fewer than 3 whole 10 ms quiet blocks: no active idle (measure longer)"
		}
		return e
	}
	levelBased := !math.IsInf(floor, -1)
	centre, sigma, ok := levelCentre(full, floor, ceil, blockSigma, uRes)
	if !ok {
		e.Note = "no 10 ms of quiet time at the active-idle level (quiet time is in a lower link state or background work; measure's active_idle phase measures it under max_performance)"
		for _, b := range bs {
			if b.sum/float64(b.n) < floor {
				e.LowN += b.n
			} else {
				e.BurstN += b.n
				e.BurstSum += b.sum
			}
		}
		return e
	}
	rel := burstRelFrac
	if levelBased {
		rel = idleModeRelFrac
	}
	k := float64(burstSigmas)
	if !levelBased && blockSigma > 0 {
		// σ is the noise model's, not a spread steps widened: 4 of it
		// (steps of 4–5 σ a third of the time read active idle +0.7 %
		// with 5; the gaussian tail beyond 4 σ is 6·10⁻⁵).
		k = modelBurstSigmas
	}
	h := math.Max(k*sigma, math.Max(rel*math.Abs(centre), 3*uRes))
	kept := e.keepBlocks(bs, L, centre, h, floor, ceil)
	if e.Kept == 0 {
		e.Note = "every quiet block is a burst or a dip"
		return e
	}
	e.uncertainty(kept, L, levelBased, resU)
	return e
}

// levelCentre is where a level's blocks (full, their means) centre and the
// noise σ of one: with the drive's noise model (blockSigma) the densest
// window of ±3σ, without it the median and the smaller half-spread of the
// quartiles; level-based (a finite floor) the dominant mode in [floor,
// ceil] (idleMode), ok false when there is none.
func levelCentre(full []float64, floor, ceil, blockSigma, uRes float64) (centre, sigma float64, ok bool) {
	s := slices.Clone(full)
	slices.Sort(s)
	q25, q50, q75 := sortedQ(s, 0.25), sortedQ(s, 0.5), sortedQ(s, 0.75)
	sigma = math.Max(math.Min(q50-q25, q75-q50)/stat.QuartileZ, blockSigma)
	centre = q50
	if math.IsInf(floor, -1) {
		if blockSigma > 0 {
			// With the drive's noise model the spread of a block mean is
			// known — σ is the model's — and the centre is the densest
			// ±3σ window of block means (idleMode without a band):
			// background work a third of the time lifted the median and
			// the quartiles' spread by about a σ each, and active idle
			// 3.5 % above the truth (TestDriveIntervalsUnderMeterNoise,
			// level steps).
			sigma = blockSigma
			if m, ok := idleMode(s, math.Inf(-1), math.Inf(1), math.Max(3*sigma, math.Max(idleModeRelFrac*math.Abs(q50), 3*uRes))); ok {
				centre = m
			}
		}
		return centre, sigma, true
	}
	sigma = math.Max(stat.DiffSigma(full), blockSigma)
	centre, ok = idleMode(s, floor, ceil, math.Max(3*sigma, math.Max(idleModeRelFrac*math.Abs(floor), 3*uRes)))
	return centre, sigma, ok
}

// keepBlocks marks the blocks of bs beyond centre ± h (a partial block's
// band widened by √(L/n)), or outside [floor, ceil], as bursts (above,
// with their neighbours) and dips (below), counts them into e, keeps the
// rest (e.Level their mean, e.Kept their samples) and returns the kept
// whole blocks.
func (e *levelEstimate) keepBlocks(bs []blk, L int, centre, h, floor, ceil float64) []blk {
	levelBased := !math.IsInf(floor, -1)
	mark := make([]int8, len(bs)) // +1 burst, -1 dip, 0 kept
	for i, b := range bs {
		m := b.sum / float64(b.n)
		// A partial block is noisier; widen its band as 1/√n.
		hb := h
		if b.n < L {
			hb = h * math.Sqrt(float64(L)/float64(b.n))
		}
		switch {
		case m > centre+hb, m > ceil:
			mark[i] = 1
		case m < centre-hb, levelBased && m < floor:
			mark[i] = -1
		}
	}
	burst := make([]bool, len(bs))
	for i := range bs {
		if mark[i] == 1 || (i > 0 && mark[i-1] == 1 && mark[i] == 0) || (i+1 < len(bs) && mark[i+1] == 1 && mark[i] == 0) {
			burst[i] = true
		}
	}
	var kept []blk
	var ksum float64
	for i, b := range bs {
		switch {
		case burst[i]:
			e.BurstN += b.n
			e.BurstSum += b.sum
			if i == 0 || !burst[i-1] {
				e.Bursts++
			}
		case mark[i] == -1:
			e.LowN += b.n
		default:
			e.Kept += b.n
			ksum += b.sum
			if b.n >= L {
				kept = append(kept, b)
			}
		}
	}
	if e.Kept > 0 {
		e.Level = ksum / float64(e.Kept)
	}
	return kept
}

// uncertainty is the level's interval from batch means of the kept
// blocks, the batch length from their own autocorrelation
// (stat.MeanStdErr: ten correlation lengths, at least 10 batches; shorter
// series say so and take the larger of two estimates). Before, neighbours
// merged until their lag-1 autocorrelation fell under max(0.1, 2/√K),
// which under AR(1) noise of 5–20 ms stopped at batches still correlated.
func (e *levelEstimate) uncertainty(kept []blk, L int, levelBased bool, resU func(sigma float64) float64) {
	km := make([]float64, len(kept))
	for i, b := range kept {
		km[i] = b.sum / float64(b.n)
	}
	var ms stat.MeanSE
	if len(km) >= minBlocks {
		ms = stat.MeanStdErr(km)
	}
	if len(km) < minBlocks || float64(len(km))/ms.TauInt < minBlocks {
		e.Note = "fewer than 3 independent quiet blocks: no uncertainty (measure longer)"
		if levelBased {
			// Blocks at the idle level that are too few or too
			// correlated to be independent batches are a drive
			// passing through the band (a transition), not a level
			// a reader can be given: no value rather than one
			// without an interval (a 54 mW SSD read 42.6 mW so).
			e.Level, e.Kept = math.NaN(), 0
			e.Note = "fewer than 3 independent 10 ms quiet blocks at the active-idle level: no value (measure longer)"
		}
		return
	}
	e.Blocks, e.BlockS = ms.Batches, float64(ms.Batch*L)
	e.sv, e.sdof = ms.SE*ms.SE, ms.Dof
	e.NoiseVar1, e.Dof = e.sv*float64(len(km)*L), e.sdof
	if ms.Short {
		e.Note = fmt.Sprintf("quiet blocks correlated over %d of them: %d batches, fewer than the %d a batch length of ten correlation lengths needs; the interval is the larger of those batches' and the effective sample size's", ms.CorrLen, ms.Batches, stat.MinBatches)
	}
	u95 := expanded(e.sv, e.sdof, resU(math.Sqrt(e.NoiseVar1)))
	e.U95 = &u95
}

// idleModeRelFrac is the least half-width of idleMode's window, as a
// fraction of the level (a noise-free source has σ = 0).
const idleModeRelFrac = 0.002

// idleMode returns the dominant mode of the sorted block means s within
// [floor, ceil], the idle band: the median of the window [x, x+2w] (x a
// block mean) that holds the most blocks (the lowest of equals),
// re-centred once as the median of the blocks within ±w of it. w is a few σ
// of a block mean. ok is false when no window holds idleModeMin blocks and
// either half the blocks in the band or three times what an even spread
// over the band would put in it (blocks caught in transitions, not a
// level), or when the mode lies in the band's outer quarters (the idle
// level is its middle). Blocks outside the band are never the mode: below it the
// drive is in a lower link state, above it at background work, which may
// take ten times longer than idle (an HDD at medium_power). Blocks caught
// in a transition spread thinly over the band and do not form the mode.
// idleModeMin is the fewest blocks a mode is made of.
const idleModeMin = 3

func idleMode(s []float64, floor, ceil, w float64) (float64, bool) {
	i0, _ := slices.BinarySearch(s, floor)
	i1 := sort.Search(len(s), func(j int) bool { return s[j] > ceil })
	c := s[i0:max(i0, i1)]
	if len(c) == 0 {
		return 0, false
	}
	upTo := func(t float64) int { return sort.Search(len(c), func(j int) bool { return c[j] > t }) }
	count := func(i int) int { return upTo(c[i]+2*w) - i }
	best, at := 0, 0
	for i := range c {
		if n := count(i); n > best {
			best, at = n, i
		}
	}
	// A level, not transitions: at least idleModeMin blocks, and either
	// half the blocks in the band or three times what blocks spread evenly
	// over it would put in a window.
	even := math.Inf(1)
	if ceil > floor && !math.IsInf(ceil-floor, 0) {
		even = 3 * float64(len(c)) * 2 * w / (ceil - floor)
	}
	if best < idleModeMin || (2*best < len(c) && float64(best) < even) {
		return 0, false
	}
	m := sortedQ(c[at:at+best], 0.5)
	lo, _ := slices.BinarySearch(c, m-w)
	if hi := upTo(m + w); hi > lo {
		m = sortedQ(c[lo:hi], 0.5)
	}
	// The idle level is the band's middle; a mode in its outer quarters is
	// samples the noise carried over the threshold, not that level.
	if q := (ceil - floor) / 4; !math.IsInf(q, 0) && (m < floor+q || m > ceil-q) {
		return 0, false
	}
	return m, true
}

// expanded returns the 95 % expanded uncertainty of a statistical variance
// vs with dof degrees of freedom combined with a type-B term uRes
// (resolution and calibration, infinite degrees of freedom): stat.Expanded.
func expanded(vs, dof, uRes float64) float64 { return stat.Expanded(vs, dof, uRes) }

// t975 is the 0.975 quantile of Student's t (stat.T975).
func t975(nu float64) float64 { return stat.T975(nu) }

func sortedQ(s []float64, q float64) float64 { return stat.SortedQuantile(s, q) }

// meanU95 is the 95 % expanded uncertainty of a mean of n samples given the
// drive's quiet noise (q.NoiseVar1, q.Dof) and resolution term uRes; nil
// when the noise is unknown.
func meanU95(n uint64, q levelEstimate, uRes float64) *float64 {
	if n == 0 || math.IsNaN(q.NoiseVar1) {
		return nil
	}
	u := expanded(q.NoiseVar1/float64(n), q.Dof, uRes)
	return &u
}

// resolutionU is the standard uncertainty of a mean drive power p from the
// meter: its resolution (stat.ResolutionU: per rail ±½ LSB of current and
// voltage, rectangular, a bias of every reading that averaging does not
// remove unless noise of σ — one sample's, W — dithers it, and float32
// storage) and its stated calibration (stat.CalibrationU: gain and offset
// limits, rectangular, which do not shrink with the samples averaged), in
// quadrature. known is false when no rail states an LSB.
func resolutionU(rails []railLSB, p, sigma float64) (u float64, known bool) {
	res, known := stat.ResolutionU(rails, p, stat.DitherSigma(sigma, stat.QuantStep(rails)))
	cal, _ := stat.CalibrationU(rails, p)
	return math.Hypot(res, cal), known
}

// railLSB is a rail's resolution and stated calibration.
type railLSB = stat.Rail

// railOf is what the capture header says of channel c's resolution and
// calibration.
func railOf(c meter.Channel) railLSB {
	return railLSB{NominalV: float64(c.Rail.Nominal()), VoltLSB: float64(c.VoltLSB), CurrentLSB: float64(c.CurrentLSB),
		VoltGainErr: c.VoltGainErr, CurrentGainErr: c.CurrentGainErr, CurrentOffsetA: float64(c.CurrentOffset)}
}

// peakCI95 is the 95 % interval of the true power at the peak: the
// highest of n readings, M, each the true power plus gaussian noise of σ
// per reading (sigma, the quiet noise) and a resolution term ures, in
// quadrature (s = √(σ² + ures²)).
//
//   - Above: a reading taken at the true peak instant is at most M, and it
//     lies below the true peak by more than 1.96 s with probability 2.5 %,
//     so the true peak is ≤ M + 1.96 s.
//   - Below: M exceeds the true peak only by the noise of the reading that
//     made it, at most the largest of n noise draws, which exceeds z_n s,
//     z_n = Φ⁻¹(1 − 0.025/n), with probability ≤ 2.5 % (union bound over
//     the n readings), so the true peak is ≥ M − z_n s.
//
// Whatever how many readings sat at the peak level, the interval holds
// with at least 95 %. Nil without a noise estimate or samples.
func peakCI95(pk units.Watts, n int, sigma, ures float64) *[2]units.Watts {
	peak := float64(pk)
	if n <= 0 || math.IsNaN(peak) || math.IsNaN(sigma) || sigma < 0 {
		return nil
	}
	if math.IsNaN(ures) {
		ures = 0
	}
	s := math.Hypot(sigma, ures)
	zn := math.Sqrt2 * math.Erfinv(1-2*0.025/float64(n))
	return &[2]units.Watts{units.Watts(peak - zn*s), units.Watts(peak + 1.96*s)}
}

// driveNoise is a drive's quiet noise, measured once over every quiet
// sample in any state, robust to level steps (a classifier's states, GC
// bursts, a drive whose power steps between levels): what the average,
// the energy, the peak and the quantiser's dither are given, and the
// least statistical variance any level of the drive is given.
type driveNoise struct {
	nm stat.Noise
	// longRun is one sample's variance as it averages out (Var(mean of
	// N) = longRun/N), dof its degrees of freedom: the larger of the
	// variogram's σ²·τ and the robust batch-means variance of batches
	// of batch samples (batches of them), ten correlation lengths long.
	longRun, dof   float64
	batch, batches int
	ok             bool
}

// madEfficiency is the asymptotic efficiency of a MAD-based variance
// against the sample variance for gaussian data: the degrees of freedom it
// is worth per value.
const madEfficiency = 0.37

// quietNoise is the drive's driveNoise (computed on first use).
func (d *driveProc) quietNoise() driveNoise {
	if d.dn != nil {
		return *d.dn
	}
	dn := driveNoise{nm: d.noise.Noise()}
	d.dn = &dn
	if !dn.nm.Ok || !(dn.nm.Sigma > 0) {
		return dn
	}
	dn.ok = true
	dn.longRun = dn.nm.LongRunVar()
	dn.dof = math.Max(1, float64(dn.nm.N)/(stat.BatchFactor*float64(dn.nm.CorrLen))-1)
	series := &d.quiet
	if d.cls != nil {
		series = &d.rest
	}
	var means []float64
	for _, b := range series.all() {
		if b.n >= series.L {
			means = append(means, b.sum/float64(b.n))
		}
	}
	bl := max(1, int(math.Ceil(stat.BatchFactor*float64(dn.nm.CorrLen)/float64(max(series.L, 1)))))
	if k := len(means) / bl; k >= 2*stat.MinBatches {
		bm := make([]float64, k)
		for i := range bm {
			bm[i] = stat.Mean(means[i*bl : (i+1)*bl])
		}
		dn.batch, dn.batches = bl*series.L, k
		if v := stat.RobustDiffVar(bm) * float64(dn.batch); v > dn.longRun {
			dn.longRun, dn.dof = v, math.Max(1, madEfficiency*float64(k-1))
		}
	}
	// The noise within spans of one level, in batches up to seconds long
	// (spanNoise), where it exceeds the above by more than its own noise
	// (two standard errors of a variance of that many degrees of
	// freedom): white noise keeps the narrower estimate.
	if v, dof, batch, ok := d.spans.longRun(); ok && v > dn.longRun*(1+2*math.Sqrt(2/float64(dof))) {
		dn.longRun, dn.dof, dn.batch, dn.batches = v, float64(dof), batch, dof
	}
	return dn
}

// levelOf is the level of the drive's block series b (estimateLevelNoise;
// with floor and ceil infinite, median-centred) with the drive's quiet
// noise: the blocks' spread never below the noise model's, the level's
// statistical variance never below the noise over its samples, the
// resolution dithered by one sample's σ, and the drive's noise carried
// for the average and energy.
func (d *driveProc) levelOf(b *blockSeries, floor, ceil float64) levelEstimate {
	return d.levelOfSpread(b, floor, ceil, 0)
}

// levelOfSpread is levelOf with a block σ of at least minSigma.
func (d *driveProc) levelOfSpread(b *blockSeries, floor, ceil, minSigma float64) levelEstimate {
	bs := b.all()
	var n int
	var sum float64
	for _, x := range bs {
		n += x.n
		sum += x.sum
	}
	p := sum / float64(max(n, 1))
	resU := func(sigma float64) float64 {
		u, _ := resolutionU(d.lsb, p, sigma)
		return u
	}
	dn := d.quietNoise()
	blockSigma := 0.0
	if dn.ok {
		blockSigma = math.Sqrt(dn.nm.MeanVar(b.L))
		// A level's own block spread within spans of one level (robust:
		// a span's edges and bursts the label did not follow are few),
		// where it exceeds the model's by more than its noise: a meter's level
		// steps of ±a split a level's blocks in two 2a apart, and at the
		// model's σ the densest window held one half and the rest was
		// cut as bursts and dips — active idle read half a step off
		// (campaign steps family: −0.45 mW for steps of ±0.45 mW on 6
		// drives of 75).
		// Only within a band between levels, and a sixteenth of it at
		// most: a two-level span (a label held through bursts) is
		// indistinguishable from a telegraph by its spread alone, but
		// not by its size against the levels' gaps (the campaign's
		// telegraphs: bands ≥ 32 of their spread; an HDD whose label held
		// through GC under max_performance, 3:69: 0.45 W in a 3 W band).
		s, dof, ok := d.spans.blockSigma(b.L)
		if ok && s > blockSigma*(1+2/math.Sqrt(2*madEfficiency*float64(dof))) && s <= (ceil-floor)/16 {
			blockSigma = s
		}
	}
	// Active idle's blocks under max_performance are one level: where they
	// spread wider than the model says (a telegraph slower than a block,
	// whose halves neither the model nor the spans show), a block's σ is at
	// least their 5th–95th percentile ÷ 3.29, and both halves are the level
	// (campaign steps family: active idle half a 1.2 mW step low, 15:7).
	if is, ok := d.cls.(learnedSpread); ok && !math.IsInf(floor, -1) {
		blockSigma = math.Max(blockSigma, is.IdleSpread()/(2*z95))
	}
	blockSigma = math.Max(blockSigma, minSigma)
	e := estimateLevelNoise(bs, b.L, b.minN, resU, floor, ceil, blockSigma)
	if !dn.ok {
		return e
	}
	e.Sigma1, e.Marginal1, e.CorrLen = dn.nm.Sigma, dn.nm.Marginal, dn.nm.CorrLen
	e.NoiseVar1, e.Dof, e.Blocks, e.BlockS = dn.longRun, dn.dof, dn.batches, float64(dn.batch)
	if e.U95 != nil && e.Kept > 0 {
		v := math.Max(e.sv, dn.nm.MeanVar(e.Kept))
		u := expanded(v, e.sdof, resolutionUAt(d.lsb, e.Level, dn.nm.Sigma))
		e.U95 = &u
	}
	return e
}

func resolutionUAt(rails []railLSB, p, sigma float64) float64 {
	u, _ := resolutionU(rails, p, sigma)
	return u
}

// peakSigma is the noise of the one reading that made the peak: the
// larger of sampleSigma and Marginal1 — the plateau's σ leaves out a slow
// part (50/60 Hz hum and its harmonics) that moves the peak reading as
// much as any (the campaign's hum+ripple peaks: 9 mW above the truth, the
// interval's lower end 4 mW below the reading).
func (e levelEstimate) peakSigma() float64 {
	s := e.sampleSigma()
	if !math.IsNaN(e.Marginal1) && !(e.Marginal1 <= s) {
		return e.Marginal1
	}
	return s
}

// sampleSigma is one sample's noise σ: Sigma1, or without a noise model
// the noise as it averages out (√NoiseVar1, which correlated noise makes
// larger); NaN when neither is known.
func (e levelEstimate) sampleSigma() float64 {
	if !math.IsNaN(e.Sigma1) {
		return e.Sigma1
	}
	return math.Sqrt(e.NoiseVar1)
}

// z95 is the 0.95 quantile of the standard normal distribution: the 5th to
// 95th percentile of a normal spread is 2·z95 σ.
const z95 = 1.6448536269514722
