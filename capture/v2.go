package capture

import (
	"fmt"
	"math"

	"github.com/idlewatt/idlewatt/meter"
)

// Format 2 additions (docs/capture-format.md): sample encoding 2 (meter
// counts with their calibration, Rice-coded) and the summary-levels chunk.

const (
	encCounts = 2 // format 2: int32 counts + calibration table, count-stream coded

	chunkLevels = 0x12 // format 2: summary levels (min/max/mean/σ/count per window)

	countsFixed   = 24 // samples header (16) + ranges (1) + reserved (7)
	calEntryLen   = 32 // V gain, V offset, I gain, I offset: f64 each
	levelsFixed   = 24
	levelPointLen = 20 // min, max, mean, σ (f32) + count (u32)

	// flagRanges (samples byte 3, encoding 2): a range-id stream follows the
	// current stream; sample k uses calibration entry range[k].
	flagRanges = 0x01

	// Summary levels: window of level l is SummaryPer·levelK^l samples.
	levelK = 16
	levels = 4

	// maxCountsSamples bounds one encoding-2 chunk (the writer uses ≤ maxRunSamples).
	maxCountsSamples = 1 << 20
)

// Calibration converts a range's counts: V = f32(vcount·VGain + VOffset),
// computed in double precision (I likewise).
type Calibration struct {
	VGain, VOffset, IGain, IOffset float64
}

// toCounts32 is toCounts for int32 counts with gain lsb and no offset. The
// gain is the header's LSB in double precision, as meter drivers compute
// count × LSB: an LSB rounded to float32 first would not rebuild every
// value, and such chunks would fall back to float32.
func toCounts32(cnt []int32, xs []float32, l float64) ([]int32, bool) {
	inv := 1 / l
	cnt = cnt[:0]
	for _, x := range xs {
		// RoundToEven is one instruction on amd64 and arm64 (math.Round is
		// not); either way the check below decides whether c rebuilds x.
		c := math.RoundToEven(float64(x) * inv)
		if !(c >= math.MinInt32 && c <= math.MaxInt32) || float32(c*l) != x {
			return cnt, false
		}
		cnt = append(cnt, int32(c))
	}
	return cnt, true
}

// appendCountsChunk appends the payload of an encoding-2 samples chunk.
// ranges is nil (every sample in range 0) or one id per sample, each below
// len(cal).
func (e *countEncoder) appendCountsChunk(b []byte, ch int, start uint64, cal []Calibration, vc, ic []int32, ranges []uint8) []byte {
	flags := byte(0)
	if ranges != nil {
		flags = flagRanges
	}
	b = le.AppendUint16(b, uint16(ch))
	b = append(b, encCounts, flags)
	b = le.AppendUint32(b, uint32(len(vc)))
	b = le.AppendUint64(b, start)
	b = append(b, byte(len(cal)), 0, 0, 0, 0, 0, 0, 0)
	for _, c := range cal {
		for _, x := range [...]float64{c.VGain, c.VOffset, c.IGain, c.IOffset} {
			b = le.AppendUint64(b, math.Float64bits(x))
		}
	}
	for _, s := range [...][]int32{vc, ic} {
		at := len(b)
		b = append(b, 0, 0, 0, 0)
		b = e.appendCountStream(b, s)
		le.PutUint32(b[at:], uint32(len(b)-at-4))
	}
	if ranges != nil {
		at := len(b)
		b = append(b, 0, 0, 0, 0)
		b = appendRuns(b, ranges)
		le.PutUint32(b[at:], uint32(len(b)-at-4))
	}
	return b
}

// appendRuns codes range ids as (id u8, run length uvarint) pairs: a meter
// changes range rarely.
func appendRuns(b []byte, ids []uint8) []byte {
	for k := 0; k < len(ids); {
		j := k + 1
		for j < len(ids) && ids[j] == ids[k] {
			j++
		}
		b = append(b, ids[k])
		b = appendUvarint(b, uint64(j-k))
		k = j
	}
	return b
}

func appendUvarint(b []byte, x uint64) []byte {
	for x >= 0x80 {
		b = append(b, byte(x)|0x80)
		x >>= 7
	}
	return append(b, byte(x))
}

// countsDecoder keeps the scratch an encoding-2 chunk decodes into.
type countsDecoder struct {
	vc, ic []int32
	rg     []uint8
	cal    []Calibration
}

// parseCounts checks an encoding-2 payload's layout (not its streams) and
// returns its calibration table and the three streams' bytes.
func parseCounts(p []byte, n int, cal []Calibration) (_ []Calibration, vs, is, rs []byte, err error) {
	if len(p) < countsFixed {
		return cal, nil, nil, nil, fmt.Errorf("encoding-2 samples payload of %d bytes", len(p))
	}
	nr := int(p[16])
	if nr == 0 {
		return cal, nil, nil, nil, fmt.Errorf("encoding-2 samples chunk with no calibration entry")
	}
	d := p[countsFixed:]
	if len(d) < nr*calEntryLen {
		return cal, nil, nil, nil, fmt.Errorf("encoding-2 samples payload of %d bytes, shorter than its %d calibration entries", len(p), nr)
	}
	cal = cal[:0]
	for k := range nr {
		e := d[k*calEntryLen:]
		c := Calibration{
			VGain: math.Float64frombits(le.Uint64(e)), VOffset: math.Float64frombits(le.Uint64(e[8:])),
			IGain: math.Float64frombits(le.Uint64(e[16:])), IOffset: math.Float64frombits(le.Uint64(e[24:])),
		}
		for _, x := range [...]float64{c.VGain, c.VOffset, c.IGain, c.IOffset} {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return cal, nil, nil, nil, fmt.Errorf("calibration entry %d is not finite", k)
			}
		}
		cal = append(cal, c)
	}
	d = d[nr*calEntryLen:]
	streams := 2
	if p[3]&flagRanges != 0 {
		streams = 3
	}
	if p[3]&^flagRanges != 0 {
		return cal, nil, nil, nil, fmt.Errorf("encoding-2 samples flags 0x%02x", p[3])
	}
	var ss [3][]byte
	for k := range streams {
		if len(d) < 4 {
			return cal, nil, nil, nil, fmt.Errorf("encoding-2 samples payload ends before stream %d", k)
		}
		l := int(le.Uint32(d))
		if l > len(d)-4 {
			return cal, nil, nil, nil, fmt.Errorf("encoding-2 stream %d of %d bytes, %d left", k, l, len(d)-4)
		}
		ss[k], d = d[4:4+l], d[4+l:]
	}
	if len(d) != 0 {
		return cal, nil, nil, nil, fmt.Errorf("encoding-2 samples payload has %d bytes after its streams", len(d))
	}
	// A bound that keeps a forged count from allocating gigabytes.
	if n > maxCountsSamples {
		return cal, nil, nil, nil, fmt.Errorf("encoding-2 samples chunk of %d samples, at most %d", n, maxCountsSamples)
	}
	return cal, ss[0], ss[1], ss[2], nil
}

// Bounds of a plausible calibration gain when the header states no LSB for
// the channel: a count of more than a volt or an ampere, or of less than a
// picovolt or a femtoampere, is no meter's.
const (
	maxGain = 1
	minGain = 1e-15
	// gainTol is how closely range 0's gain must match the header's LSB:
	// the writer stores the LSB, a float32, widened to float64.
	gainTol = 1e-6
	// gainSpan bounds how far another range's gain may be from the LSB (an
	// auto-ranging ammeter spans about five decades).
	gainSpan = 1e6
)

// checkCalibration refuses a samples chunk's calibration (encoding 2's
// table, or encoding 1's LSB pair as one entry) that no meter could have:
// a gain of 0, negative or not finite, an offset beyond the whole count
// range, and — when the header states the channel's LSB — range 0's gain
// other than that LSB (every other range's within a factor gainSpan of it).
// A chunk refused here is invalid (its CRC is intact, its content is not):
// its samples become a damaged gap, named in the notes. A gain of 0 read
// as 0 J, ×1000 as 12 000 J, while the file's summaries and LSB said 12 J.
func checkCalibration(cal []Calibration, ch meter.Channel) error {
	for k, c := range cal {
		for _, q := range [...]struct {
			what         string
			gain, offset float64
			lsb          float64
			unit         string
		}{{"voltage", c.VGain, c.VOffset, float64(ch.VoltLSB), "V"}, {"current", c.IGain, c.IOffset, float64(ch.CurrentLSB), "A"}} {
			g := q.gain
			switch {
			case math.IsNaN(g) || math.IsInf(g, 0) || g <= 0:
				return fmt.Errorf("calibration entry %d: %s gain %g %s per count is not a positive number", k, q.what, g, q.unit)
			case q.lsb > 0 && k == 0 && math.Abs(g/q.lsb-1) > gainTol:
				return fmt.Errorf("calibration entry 0: %s gain %g %s per count is not the channel's LSB %g %s (header %s): the samples would read %.6g× what the meter measured",
					q.what, g, q.unit, q.lsb, q.unit, ch.Name(), g/q.lsb)
			case q.lsb > 0 && (g > q.lsb*gainSpan || g < q.lsb/gainSpan):
				return fmt.Errorf("calibration entry %d: %s gain %g %s per count is more than a factor %g from the channel's LSB %g %s", k, q.what, g, q.unit, gainSpan, q.lsb, q.unit)
			case q.lsb == 0 && (g > maxGain || g < minGain):
				return fmt.Errorf("calibration entry %d: %s gain %g %s per count is outside %g … %g %s", k, q.what, g, q.unit, minGain, float64(maxGain), q.unit)
			case math.Abs(q.offset) > g*(1<<31):
				return fmt.Errorf("calibration entry %d: %s offset %g %s is beyond the whole count range (%g %s)", k, q.what, q.offset, q.unit, g*(1<<31), q.unit)
			}
		}
	}
	return nil
}

// decodeCounts fills v and i (len n) from an encoding-2 payload.
func decodeCounts[V, I ~float64](d *countsDecoder, p []byte, n int, v []V, i []I) error {
	var vs, is, rs []byte
	var err error
	d.cal, vs, is, rs, err = parseCounts(p, n, d.cal)
	if err != nil {
		return err
	}
	if cap(d.vc) < n {
		d.vc, d.ic = make([]int32, n), make([]int32, n)
	}
	d.vc, d.ic = d.vc[:n], d.ic[:n]
	if err := decodeCountStream(d.vc, vs); err != nil {
		return fmt.Errorf("voltage %w", err)
	}
	if err := decodeCountStream(d.ic, is); err != nil {
		return fmt.Errorf("current %w", err)
	}
	if rs == nil {
		c := d.cal[0]
		for k := range n {
			v[k] = V(float32(float64(d.vc[k])*c.VGain + c.VOffset))
			i[k] = I(float32(float64(d.ic[k])*c.IGain + c.IOffset))
		}
		return nil
	}
	if cap(d.rg) < n {
		d.rg = make([]uint8, n)
	}
	d.rg = d.rg[:n]
	if err := decodeRuns(d.rg, rs, len(d.cal)); err != nil {
		return err
	}
	for k := range n {
		c := d.cal[d.rg[k]]
		v[k] = V(float32(float64(d.vc[k])*c.VGain + c.VOffset))
		i[k] = I(float32(float64(d.ic[k])*c.IGain + c.IOffset))
	}
	return nil
}

func decodeRuns(dst []uint8, src []byte, nr int) error {
	k := 0
	for len(src) > 0 {
		id := src[0]
		src = src[1:]
		if int(id) >= nr {
			return fmt.Errorf("range id %d, chunk has %d calibration entries", id, nr)
		}
		var run uint64
		var s uint
		for j := 0; ; j++ {
			if j >= len(src) || j > 9 {
				return fmt.Errorf("range stream: bad run length")
			}
			b := src[j]
			run |= uint64(b&0x7f) << s
			s += 7
			if b < 0x80 {
				src = src[j+1:]
				break
			}
		}
		if run == 0 || run > uint64(len(dst)-k) {
			return fmt.Errorf("range stream: a run of %d samples at sample %d of %d", run, k, len(dst))
		}
		for e := k + int(run); k < e; k++ {
			dst[k] = id
		}
	}
	if k != len(dst) {
		return fmt.Errorf("range stream covers %d of %d samples", k, len(dst))
	}
	return nil
}

// levelWin accumulates one summary window: power statistics of the samples
// present in it.
type levelWin struct {
	open     bool
	win      uint64 // window number at this level (index / per)
	n        uint64
	min, max float32
	sum, sq  float64
}

func (a *levelWin) add(n uint64, lo, hi float32, sum, sq float64) {
	if a.n == 0 {
		a.min, a.max = lo, hi
	} else {
		a.min, a.max = min(a.min, lo), max(a.max, hi)
	}
	a.n += n
	a.sum += sum
	a.sq += sq
}

// levelAcc is one level of one channel: its open window and the finished
// points not yet written (consecutive windows from start).
type levelAcc struct {
	per   uint64
	cur   levelWin
	start uint64 // window number of the first pending point
	pts   []levelPoint
}

type levelPoint struct {
	min, max, mean, std float32
	n                   uint32
}

// chanLevels is a channel's summary levels, finest first.
type chanLevels struct {
	lv [levels]levelAcc
}

func newChanLevels(base uint64) chanLevels {
	var c chanLevels
	per := base
	for l := range c.lv {
		c.lv[l].per = per
		per *= levelK
	}
	return c
}

// feed adds statistics of n samples lying in the window of sample index
// idx at level l, closing the open window first if idx is in another one.
func (w *Writer) feedLevel(ch, l int, idx uint64, n uint64, lo, hi float32, sum, sq float64) {
	a := &w.levels[ch].lv[l]
	wi := idx / a.per
	if a.cur.open && a.cur.win != wi {
		w.finishLevel(ch, l)
	}
	if !a.cur.open {
		a.cur = levelWin{open: true, win: wi}
	}
	a.cur.add(n, lo, hi, sum, sq)
}

// finishLevel closes level l's open window of channel ch into a point and
// feeds it to the level above.
func (w *Writer) finishLevel(ch, l int) {
	a := &w.levels[ch].lv[l]
	if !a.cur.open {
		return
	}
	c := a.cur
	a.cur.open = false
	if n := len(a.pts); n > 0 && (c.win != a.start+uint64(n) || n >= maxRunSamples) {
		w.writeLevel(ch, l)
	}
	if len(a.pts) == 0 {
		a.start = c.win
	}
	mean := c.sum / float64(c.n)
	std := math.Sqrt(max(0, c.sq/float64(c.n)-mean*mean))
	a.pts = append(a.pts, levelPoint{min: c.min, max: c.max, mean: float32(mean), std: float32(std), n: uint32(c.n)})
	if l+1 < levels {
		w.feedLevel(ch, l+1, c.win*a.per, c.n, c.min, c.max, c.sum, c.sq)
	}
}

// addPower2 feeds one sample's power to level 0.
func (w *Writer) addPower2(ch int, idx uint64, p float32) {
	a := &w.levels[ch].lv[0]
	if a.cur.open && a.cur.win == idx/a.per {
		a.cur.n++
		a.cur.min, a.cur.max = min(a.cur.min, p), max(a.cur.max, p)
		pp := float64(p)
		a.cur.sum += pp
		a.cur.sq += pp * pp
		return
	}
	pp := float64(p)
	w.feedLevel(ch, 0, idx, 1, p, p, pp, pp*pp)
}

// addPowers2 feeds the powers v[k]·i[k] of consecutive samples from index
// idx to level 0: addPower2 for each, a window's stretch at a time without
// a division per sample (the same sums in the same order).
func (w *Writer) addPowers2(ch int, idx uint64, v, i []float32) {
	a := &w.levels[ch].lv[0]
	i = i[:len(v)]
	for len(v) > 0 {
		if !a.cur.open || a.cur.win != idx/a.per {
			w.addPower2(ch, idx, v[0]*i[0])
			v, i, idx = v[1:], i[1:], idx+1
			continue
		}
		m := min(uint64(len(v)), (a.cur.win+1)*a.per-idx)
		c := &a.cur
		lo, hi, sum, sq := c.min, c.max, c.sum, c.sq
		for k, x := range v[:m] {
			p := x * i[k]
			lo, hi = min(lo, p), max(hi, p)
			pp := float64(p)
			sum += pp
			sq += pp * pp
		}
		c.min, c.max, c.sum, c.sq = lo, hi, sum, sq
		c.n += m
		v, i, idx = v[m:], i[m:], idx+m
	}
}

// writeLevel encodes level l's pending points of channel ch. Call with mu held.
func (w *Writer) writeLevel(ch, l int) {
	a := &w.levels[ch].lv[l]
	n := len(a.pts)
	if n == 0 {
		return
	}
	s := w.begin(chunkLevels, 0)
	w.pend = le.AppendUint16(w.pend, uint16(ch))
	w.pend = append(w.pend, byte(l), 0)
	w.pend = le.AppendUint32(w.pend, uint32(a.per))
	w.pend = le.AppendUint64(w.pend, a.start*a.per)
	w.pend = le.AppendUint32(w.pend, uint32(n))
	w.pend = le.AppendUint32(w.pend, 0)
	for _, p := range a.pts {
		w.pend = appendF32(w.pend, p.min)
	}
	for _, p := range a.pts {
		w.pend = appendF32(w.pend, p.max)
	}
	for _, p := range a.pts {
		w.pend = appendF32(w.pend, p.mean)
	}
	for _, p := range a.pts {
		w.pend = appendF32(w.pend, p.std)
	}
	for _, p := range a.pts {
		w.pend = le.AppendUint32(w.pend, p.n)
	}
	w.end(s)
	a.pts = a.pts[:0]
}

// decodeLevels reads a summary-levels payload into s.
func (r *Reader) decodeLevels(p []byte) error {
	if len(p) < levelsFixed {
		return fmt.Errorf("summary-levels payload of %d bytes", len(p))
	}
	s := &r.sum
	s.Channel, s.Level, s.Per, s.Start = int(le.Uint16(p)), int(p[2]), le.Uint32(p[4:]), le.Uint64(p[8:])
	n := int(le.Uint32(p[16:]))
	if s.Channel >= r.nch {
		return fmt.Errorf("summary for channel %d, header has %d", s.Channel, r.nch)
	}
	if s.Per == 0 {
		return fmt.Errorf("summary with 0 samples per point")
	}
	if n > MaxPayload || len(p) != levelsFixed+levelPointLen*n {
		return fmt.Errorf("summary-levels payload of %d bytes for %d points", len(p), n)
	}
	if s.Start%uint64(s.Per) != 0 || s.Start/uint64(s.Per)+uint64(n) > math.MaxUint64/uint64(s.Per) {
		return fmt.Errorf("summary windows from index %d of %d samples each are not aligned or run past the largest index", s.Start, s.Per)
	}
	if cap(s.MinW) < n {
		s.MinW, s.MaxW, s.MeanW = make([]float32, n), make([]float32, n), make([]float32, n)
	}
	if cap(s.StdW) < n {
		s.StdW, s.Count = make([]float32, n), make([]uint32, n)
	}
	s.MinW, s.MaxW, s.MeanW, s.StdW, s.Count = s.MinW[:n], s.MaxW[:n], s.MeanW[:n], s.StdW[:n], s.Count[:n]
	d := p[levelsFixed:]
	for k := range n {
		s.MinW[k] = math.Float32frombits(le.Uint32(d[4*k:]))
		s.MaxW[k] = math.Float32frombits(le.Uint32(d[4*(n+k):]))
		s.MeanW[k] = math.Float32frombits(le.Uint32(d[4*(2*n+k):]))
		s.StdW[k] = math.Float32frombits(le.Uint32(d[4*(3*n+k):]))
		s.Count[k] = le.Uint32(d[4*(4*n+k):])
		if s.Count[k] == 0 || s.Count[k] > s.Per {
			return fmt.Errorf("summary point %d counts %d samples of a %d-sample window", k, s.Count[k], s.Per)
		}
	}
	return nil
}
