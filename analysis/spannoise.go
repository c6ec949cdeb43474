package analysis

import (
	"math"
	"slices"

	"github.com/idlewatt/idlewatt/internal/stat"
	"github.com/idlewatt/idlewatt/units"
)

// spanNoise measures the meter's noise as a mean averages it, over
// batches up to seconds long, from within quiet spans of one state: one
// label of the classifier, no I/O outstanding, the DEVSLP pin released.
// Each batch mean less its span's mean of them carries only the meter's
// noise (the drive holds one level there), so the pooled variance of
// those differences, times the samples in a batch, is one sample's
// variance as it averages out — the variogram's medians pass over a
// meter's level steps (a random telegraph, redrawn every 1–100 ms), as
// they pass over the drive's own, and the noise model misses what they
// add to a mean (campaign steps family: the average's interval held the
// truth in 21 of 25 drives, ±0.02 mW where the error was 0.07 mW).
type spanNoise struct {
	L      int // samples per block
	skip   int // samples to drop at a span's start (the power after I/O settling) and end
	left   int
	st     State
	on     bool
	cur    blk
	blocks []float64 // the current span's block means
	ss     [spanLags]float64
	dof    [spanLags]int
	dev0   reservoir // |block mean − its span's mean| (blockSigma)
}

// spanLags is how many batch lengths spanNoise keeps: 1, 2, … 2^(spanLags−1)
// blocks (10 ms to 5.12 s).
const spanLags = 10

// spanMaxBlocks bounds a span's blocks: a longer span is taken as two.
const spanMaxBlocks = 4096

// spanSkipS is the time dropped at the start and the end of each span:
// 50 ms.
const spanSkipS = 0.050

func (s *spanNoise) init(rate units.Hertz) {
	s.L = max(1, int(math.Round(rate.Samples(quietBlockS))))
	s.skip = int(math.Round(rate.Samples(spanSkipS)))
}

// addRun takes quiet, unpinned samples the classifier labelled st, as
// taking them one by one did (add, now the tests' reference): the skipped
// samples dropped at once, each block's samples summed in a loop of their
// own, in order.
func (s *spanNoise) addRun(ps []float64, st State) {
	if s.L == 0 || len(ps) == 0 {
		return
	}
	if !s.on || st != s.st {
		s.end()
		s.on, s.st, s.left = true, st, s.skip
	}
	d := min(s.left, len(ps))
	s.left -= d
	ps = ps[d:]
	for len(ps) > 0 {
		k := max(1, min(len(ps), s.L-s.cur.n))
		sum := s.cur.sum
		for _, p := range ps[:k] {
			sum += p
		}
		s.cur.sum, s.cur.n = sum, s.cur.n+k
		ps = ps[k:]
		if s.cur.n < s.L {
			return
		}
		s.blocks = append(s.blocks, s.cur.sum/float64(s.cur.n))
		s.cur = blk{}
		if len(s.blocks) >= spanMaxBlocks {
			s.flush(false)
		}
	}
}

// end closes the current span (I/O, the pin, a gap, a change of label).
func (s *spanNoise) end() {
	s.flush(true)
	s.on, s.cur = false, blk{}
}

// flush pools the current span's batches, less its last spanSkipS when
// the span ends (trim): the classifier's label changes a little after the
// power does, and the blocks of the next state's edge were counted in it.
func (s *spanNoise) flush(trim bool) {
	if trim {
		s.blocks = s.blocks[:max(0, len(s.blocks)-(s.skip+s.L-1)/s.L)]
	}
	for j := range spanLags {
		b := 1 << j
		m := len(s.blocks) / b
		if m < 2 {
			break
		}
		bm := make([]float64, m)
		for i := range bm {
			bm[i] = stat.Mean(s.blocks[i*b : (i+1)*b])
		}
		mu := stat.Mean(bm)
		for _, x := range bm {
			s.ss[j] += (x - mu) * (x - mu)
			if j == 0 {
				s.dev0.add(math.Abs(x - mu))
			}
		}
		s.dof[j] += m - 1
	}
	s.blocks = s.blocks[:0]
}

// longRun is one sample's variance as it averages out, from the longest
// batches pooled over at least 2·MinBatches degrees of freedom: the
// variance of a batch mean times its samples, with its degrees of freedom
// and the batch length in samples; ok is false too when the spans are not
// one level's (oneLevel).
func (s *spanNoise) longRun() (v float64, dof, batch int, ok bool) {
	s.end()
	if _, one := s.oneLevel(); !one {
		return 0, 0, 0, false
	}
	for j := spanLags - 1; j >= 0; j-- {
		if s.dof[j] >= 2*stat.MinBatches {
			batch = (1 << j) * s.L
			return s.ss[j] / float64(s.dof[j]) * float64(batch), s.dof[j], batch, true
		}
	}
	return 0, 0, 0, false
}

// oneLevelDecile: spans whose blocks' deviations have a lower decile under
// this fraction of their median are not one level's noise (gaussian noise
// gives 0.19, a telegraph's two levels about 1): a drive whose classifier
// held one label through its bursts (an HDD's GC under max_performance,
// campaign 3:69) has span means between the two, most blocks far from
// them, and read a spread of 0.3 W for a 4 mW noise.
const oneLevelDecile = 0.05

// blockSigma is the robust spread of one block mean within a span
// (MADScale × the median |block mean − its span's mean|), for blocks of
// samples samples (spanNoise's own), with the deviations' count: a
// level's block spread the meter's level steps widen, which the
// variogram's medians pass over; a span's edges and bursts its label did
// not follow, which the plain variance takes in whole, are few. ok is
// false for another block length or fewer than 2·MinBatches deviations.
func (s *spanNoise) blockSigma(samples int) (sigma float64, n int, ok bool) {
	s.end()
	if samples != s.L || len(s.dev0.v) < 2*stat.MinBatches {
		return 0, 0, false
	}
	med, ok := s.oneLevel()
	if !ok {
		return 0, 0, false
	}
	return stat.MADScale * med, s.dof[0], true
}

// oneLevel is the median deviation of a block from its span's mean, and
// whether the spans look like one level's noise (oneLevelDecile).
func (s *spanNoise) oneLevel() (float64, bool) {
	if len(s.dev0.v) < 2*stat.MinBatches {
		return 0, false
	}
	d := slices.Clone(s.dev0.v)
	slices.Sort(d)
	med := stat.SortedQuantile(d, 0.5)
	return med, stat.SortedQuantile(d, 0.1) >= oneLevelDecile*med
}
