package chart

import (
	"fmt"
	"math"
)

// Envelope is a power trace reduced to one row per time bucket, the way a
// scope draws a long record: the band between Min and Max shows every spike
// that happened in the bucket, and Mean is what the energy integral sees.
//
// T is the bucket's centre in seconds on whatever timeline the caller uses
// (the chart only needs it to increase). Min, Max and Mean are in watts. A row
// whose Mean is NaN is a gap: the chart breaks the line there instead of
// drawing across missing samples. All four slices have the same length.
type Envelope struct {
	T              []float64
	Min, Max, Mean []float64
}

// Len returns the number of rows.
func (e Envelope) Len() int { return len(e.T) }

// validate reports the first thing that would make e unplottable. Non-finite
// values are allowed (they are gaps); a decreasing or non-finite T is not,
// because the band polygon would fold over itself.
func (e Envelope) validate() error {
	n := len(e.T)
	if len(e.Min) != n || len(e.Max) != n || len(e.Mean) != n {
		return fmt.Errorf("envelope: lengths differ: T %d, Min %d, Max %d, Mean %d", n, len(e.Min), len(e.Max), len(e.Mean))
	}
	for i, t := range e.T {
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return fmt.Errorf("envelope: T[%d] is %v", i, t)
		}
		if i > 0 && t < e.T[i-1] {
			return fmt.Errorf("envelope: T[%d]=%g is before T[%d]=%g", i, t, i-1, e.T[i-1])
		}
	}
	return nil
}

// Decimator reduces a stream of power samples, or of summary points that
// already cover several samples, to at most Buckets rows of min/max/mean. It
// keeps four numbers per bucket and nothing per sample, so a one-hour capture
// at 10 kS/s (36 M samples a channel) costs the same memory as a one-second
// one, and Add/AddUniform do not allocate.
//
// # Fixed or growing span
//
// With a Span, buckets are Span/Buckets wide and samples outside
// [Start, Start+Span) are counted in Dropped and otherwise ignored. Without
// one (Span ≤ 0) the decimator does not need to know the capture's length:
// buckets start InitialWidth wide and, whenever a sample lands past the last
// bucket, adjacent buckets are merged in pairs (width doubles). The result
// then has between Buckets/2 and Buckets rows.
//
// # Gaps
//
// A bucket that received no sample is a gap (NaN row). A NaN power value, or
// a call to Gap, marks a break inside a bucket: the envelope gets an extra
// NaN row after it so the line is not drawn across the hole.
type Decimator struct {
	start, width float64
	fixed        bool
	min, max     []float64
	sum, cnt     []float64 // cnt is a float so summary points can carry their weight
	gap          []bool
	used         int // buckets [0, used) may hold data
	dropped      int64
	// dt is the widest sample spacing AddUniform has seen: zoomed in so far
	// that buckets are narrower than it, most buckets are empty between
	// two samples without anything missing, and Envelope must not break
	// the line there.
	dt float64
	// sdt is the smallest spacing between consecutive AddSummary points
	// (summaries carry no period of their own); lastS the last one's time.
	sdt, lastS float64
	sSeen      bool
}

// DecimatorOpts configures NewDecimator.
type DecimatorOpts struct {
	// Buckets is the most rows the envelope may have; default 2000, about one
	// per horizontal pixel of a wide chart.
	Buckets int
	// Start is the time (s) of the first bucket's left edge.
	Start float64
	// Span (s) fixes the time range; ≤ 0 means grow as samples arrive.
	Span float64
	// InitialWidth (s) is the first bucket width when Span ≤ 0; default 1 ms.
	InitialWidth float64
}

// NewDecimator returns an empty decimator, or an error if the options are not
// finite or Buckets is negative.
func NewDecimator(o DecimatorOpts) (*Decimator, error) {
	if o.Buckets == 0 {
		o.Buckets = 2000
	}
	if o.Buckets < 2 {
		return nil, fmt.Errorf("decimator: Buckets = %d, want ≥ 2", o.Buckets)
	}
	if !finite(o.Start) || !finite(o.Span) || !finite(o.InitialWidth) || o.InitialWidth < 0 {
		return nil, fmt.Errorf("decimator: Start %g, Span %g, InitialWidth %g must be finite (and width ≥ 0)", o.Start, o.Span, o.InitialWidth)
	}
	d := &Decimator{
		start: o.Start,
		min:   make([]float64, o.Buckets),
		max:   make([]float64, o.Buckets),
		sum:   make([]float64, o.Buckets),
		cnt:   make([]float64, o.Buckets),
		gap:   make([]bool, o.Buckets),
	}
	switch {
	case o.Span > 0:
		d.fixed, d.width = true, o.Span/float64(o.Buckets)
	case o.InitialWidth > 0:
		d.width = o.InitialWidth
	default:
		d.width = 1e-3
	}
	for i := range d.min {
		d.min[i], d.max[i] = math.Inf(1), math.Inf(-1)
	}
	return d, nil
}

// Dropped returns how many samples fell outside a fixed span (or had a
// non-finite time) and were ignored.
func (d *Decimator) Dropped() int64 { return d.dropped }

// Width returns the current bucket width in seconds.
func (d *Decimator) Width() float64 { return d.width }

// bucket returns the bucket index for time t, merging buckets first if a
// growing decimator has to reach t; -1 means drop the sample.
func (d *Decimator) bucket(t float64) int {
	x := (t - d.start) / d.width
	if !(x >= 0) || math.IsInf(x, 1) { // also catches NaN
		return -1
	}
	for x >= float64(len(d.min)) {
		if d.fixed || d.width > 1e290 { // no timeline is that long
			return -1
		}
		d.grow()
		x = (t - d.start) / d.width
	}
	b := int(x)
	if b >= d.used {
		d.used = b + 1
	}
	return b
}

// index is the bucket t falls in at the current width, without growing.
func (d *Decimator) index(t float64) int { return int((t - d.start) / d.width) }

// grow halves the number of buckets in use by merging neighbours.
func (d *Decimator) grow() {
	n := len(d.min)
	for i := 0; i < n/2; i++ {
		a, b := 2*i, 2*i+1
		d.min[i] = math.Min(d.min[a], d.min[b])
		d.max[i] = math.Max(d.max[a], d.max[b])
		d.sum[i] = d.sum[a] + d.sum[b]
		d.cnt[i] = d.cnt[a] + d.cnt[b]
		d.gap[i] = d.gap[a] || d.gap[b]
	}
	if n%2 == 1 { // the odd last bucket keeps its data at the new index
		i := n / 2
		d.min[i], d.max[i], d.sum[i], d.cnt[i], d.gap[i] = d.min[n-1], d.max[n-1], d.sum[n-1], d.cnt[n-1], d.gap[n-1]
		n++
	}
	for i := n / 2; i < len(d.min); i++ {
		d.min[i], d.max[i], d.sum[i], d.cnt[i], d.gap[i] = math.Inf(1), math.Inf(-1), 0, 0, false
	}
	d.width *= 2
	d.used = (d.used + 1) / 2
}

// Add adds one sample: w watts at t seconds. A NaN w marks a gap at t.
func (d *Decimator) Add(t, w float64) {
	b := d.bucket(t)
	if b < 0 {
		d.dropped++
		return
	}
	if w != w || math.IsInf(w, 0) {
		d.gap[b] = true
		return
	}
	d.put(b, w, w, w, 1)
}

func (d *Decimator) put(b int, lo, hi, mean, n float64) {
	if lo < d.min[b] {
		d.min[b] = lo
	}
	if hi > d.max[b] {
		d.max[b] = hi
	}
	d.sum[b] += mean * n
	d.cnt[b] += n
}

// AddUniform adds evenly spaced samples: w[i] watts at t0 + i·dt seconds.
// It is the fast path for meter blocks: the bucket is found once per run of
// samples that share it, not once per sample.
func (d *Decimator) AddUniform(t0, dt float64, w []float64) {
	if !(dt > 0) || !finite(t0) || math.IsInf(dt, 0) {
		for range w {
			d.dropped++
		}
		return
	}
	d.dt = math.Max(d.dt, dt)
	for i := 0; i < len(w); {
		t := t0 + float64(i)*dt
		b := d.bucket(t)
		if b < 0 {
			d.dropped++
			i++
			continue
		}
		// Estimate where the bucket ends, then nudge the estimate so each
		// sample lands exactly where Add would put it.
		end := d.start + float64(b+1)*d.width
		j := int(math.Ceil((end - t0) / dt))
		j = min(max(j, i+1), len(w))
		for j > i+1 && d.index(t0+float64(j-1)*dt) > b {
			j--
		}
		for j < len(w) && d.index(t0+float64(j)*dt) == b {
			j++
		}
		lo, hi, sum, n := d.min[b], d.max[b], 0.0, 0
		for _, v := range w[i:j] {
			if v != v || v > math.MaxFloat64 || v < -math.MaxFloat64 {
				d.gap[b] = true
				continue
			}
			if v < lo {
				lo = v
			}
			if v > hi {
				hi = v
			}
			sum += v
			n++
		}
		d.min[b], d.max[b] = lo, hi
		d.sum[b] += sum
		d.cnt[b] += float64(n)
		i = j
	}
}

// AddSummary adds a summary point that stands for n samples starting at t
// seconds with the given min, max and mean watts, e.g. one entry of a
// capture.Summary. The whole point goes to the bucket holding t; a NaN mean
// or n ≤ 0 marks a gap.
func (d *Decimator) AddSummary(t float64, lo, hi, mean float64, n int) {
	b := d.bucket(t)
	if b < 0 {
		d.dropped += int64(max(n, 1))
		return
	}
	if n <= 0 || !finite(mean) || !finite(lo) || !finite(hi) {
		d.gap[b] = true
		return
	}
	if sp := t - d.lastS; d.sSeen && sp > 0 && (d.sdt == 0 || sp < d.sdt) {
		d.sdt = sp
	}
	d.lastS, d.sSeen = t, true
	d.put(b, math.Min(lo, mean), math.Max(hi, mean), mean, float64(n))
}

// Gap marks samples missing over [from, to] seconds: every bucket the range
// touches gets a break even if it also holds samples.
func (d *Decimator) Gap(from, to float64) {
	if !finite(from) || !finite(to) || to < from {
		return
	}
	if from < d.start {
		from = d.start
	}
	b0 := d.bucket(from)
	b1 := d.bucket(to)
	if b0 < 0 {
		return
	}
	if b1 < 0 { // past a fixed span: mark to the end
		b1 = len(d.gap) - 1
	}
	for b := b0; b <= b1; b++ {
		d.gap[b] = true
	}
}

// Envelope returns the rows decimated so far, in new slices. Empty buckets
// and breaks become NaN rows — except empty buckets between two samples
// that are no further apart than 1.5 sample spacings (AddUniform's dt, or
// the smallest step between AddSummary points):
// those only mean the buckets are narrower than the samples, and are left
// out so the line joins its samples instead of falling apart into dots.
// Nothing before the first sample or after the last is included.
func (d *Decimator) Envelope() Envelope {
	first, last := -1, -1
	for b := 0; b < d.used; b++ {
		if d.cnt[b] > 0 {
			if first < 0 {
				first = b
			}
			last = b
		}
	}
	var e Envelope
	if first < 0 {
		return e
	}
	rows := last - first + 1
	for b := first; b <= last; b++ {
		if d.gap[b] && d.cnt[b] > 0 {
			rows++
		}
	}
	e = Envelope{T: make([]float64, 0, rows), Min: make([]float64, 0, rows), Max: make([]float64, 0, rows), Mean: make([]float64, 0, rows)}
	nan := math.NaN()
	for b := first; b <= last; b++ {
		t := d.start + (float64(b)+0.5)*d.width
		if !finite(t) || !finite(d.start+float64(b+1)*d.width) {
			break // past the float64 range: nothing real lives there
		}
		if d.cnt[b] == 0 {
			if sp := math.Max(d.dt, d.sdt); sp > 0 && !d.gap[b-1] {
				nb := b + 1
				for nb <= last && d.cnt[nb] == 0 && !d.gap[nb] {
					nb++
				}
				if nb <= last && float64(nb-b+1)*d.width < 1.5*sp {
					b = nb - 1
					continue
				}
			}
			e.T, e.Min, e.Max, e.Mean = append(e.T, t), append(e.Min, nan), append(e.Max, nan), append(e.Mean, nan)
			continue
		}
		e.T = append(e.T, t)
		e.Min = append(e.Min, d.min[b])
		e.Max = append(e.Max, d.max[b])
		e.Mean = append(e.Mean, d.sum[b]/d.cnt[b])
		if d.gap[b] {
			te := d.start + float64(b+1)*d.width
			e.T, e.Min, e.Max, e.Mean = append(e.T, te), append(e.Min, nan), append(e.Max, nan), append(e.Mean, nan)
		}
	}
	return e
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
