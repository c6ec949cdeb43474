package capture

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// The count codec of format 2 (docs/capture-format.md §Count streams): a
// stream of int32 meter counts cut into partitions of up to codecPart
// values; each partition is coded by whichever of four modes is cheapest —
// constant (every value equals the one before), order-1 Rice (differences),
// order-0 Rice (values minus a coded base, better for white noise: a
// difference of two noisy values has √2 the spread), or raw 32-bit. Rice
// coding with a per-partition parameter is what FLAC and Shorten use for
// audio residuals; it is within a few percent of the entropy of the
// Laplacian/Gaussian residuals a meter's noise gives, and costs a few
// nanoseconds per value both ways. Bits are written most significant first.

const (
	codecPart = 256 // values per partition
	riceMaxQ  = 32  // longest unary quotient an encoder writes (and a decoder accepts)

	modeConst = 0
	modeDelta = 1
	modeLevel = 2
	modeRaw   = 3
)

var errCodec = errors.New("count stream")

type bitWriter struct {
	b   []byte
	acc uint64
	n   uint // bits in acc not yet appended to b (< 8 between calls)
}

// put writes the low n bits of v, n ≤ 32.
func (w *bitWriter) put(v uint64, n uint) {
	if n == 0 {
		return
	}
	w.acc = w.acc<<n | v&(1<<n-1)
	w.n += n
	for w.n >= 8 {
		w.n -= 8
		w.b = append(w.b, byte(w.acc>>w.n))
	}
}

// unary writes q zeros then a one.
func (w *bitWriter) unary(q uint64) {
	for q >= 24 {
		w.put(0, 24)
		q -= 24
	}
	w.put(1, uint(q)+1)
}

// gamma writes u ≥ 0 as an Elias gamma code of u+1 (u < 2⁶³).
func (w *bitWriter) gamma(u uint64) {
	u++
	n := uint(bits.Len64(u))
	w.unary(uint64(n - 1))
	if n-1 > 32 {
		w.put(u>>32, n-1-32)
		w.put(u, 32)
	} else {
		w.put(u, n-1)
	}
}

func (w *bitWriter) close() []byte {
	if w.n > 0 {
		w.b = append(w.b, byte(w.acc<<(8-w.n)))
		w.n = 0
	}
	return w.b
}

type bitReader struct {
	b   []byte
	i   int
	acc uint64 // valid bits left-aligned
	n   uint
}

func (r *bitReader) refill() {
	for r.n <= 56 && r.i < len(r.b) {
		r.acc |= uint64(r.b[r.i]) << (56 - r.n)
		r.n += 8
		r.i++
	}
}

// get reads n ≤ 32 bits.
func (r *bitReader) get(n uint) (uint64, bool) {
	if n == 0 {
		return 0, true
	}
	if r.n < n {
		r.refill()
		if r.n < n {
			return 0, false
		}
	}
	v := r.acc >> (64 - n)
	r.acc <<= n
	r.n -= n
	return v, true
}

// unary reads zeros up to a one; at most max zeros.
func (r *bitReader) unary(max uint) (uint64, bool) {
	var q uint
	for {
		if r.n < 33 {
			r.refill()
		}
		z := uint(bits.LeadingZeros64(r.acc))
		if z < r.n {
			q += z
			if q > max {
				return 0, false
			}
			r.acc <<= z + 1
			r.n -= z + 1
			return uint64(q), true
		}
		// Only zeros in the buffer: consume them and go on.
		q += r.n
		if q > max || r.i >= len(r.b) {
			return 0, false
		}
		r.acc, r.n = 0, 0
	}
}

func (r *bitReader) gamma() (uint64, bool) {
	n, ok := r.unary(63)
	if !ok {
		return 0, false
	}
	var v uint64 = 1
	if n > 32 {
		hi, ok1 := r.get(uint(n - 32))
		lo, ok2 := r.get(32)
		if !ok1 || !ok2 {
			return 0, false
		}
		v = v<<n | hi<<32 | lo
	} else {
		lo, ok := r.get(uint(n))
		if !ok {
			return 0, false
		}
		v = v<<n | lo
	}
	return v - 1, true
}

func zigzag(d int64) uint64   { return uint64(d<<1) ^ uint64(d>>63) }
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// riceCost is the bits Rice parameter k takes for us, or MaxInt when a
// quotient would exceed riceMaxQ.
func riceCost(us []uint64, k uint, maxU uint64) int {
	if maxU>>k > riceMaxQ {
		return math.MaxInt
	}
	c := len(us) * int(k+1)
	for _, u := range us {
		c += int(u >> k)
	}
	return c
}

// bestRice picks the cheapest Rice parameter for us near the one the mean
// suggests.
func bestRice(us []uint64) (k uint, cost int) {
	var sum, maxU uint64
	for _, u := range us {
		sum += u
		maxU = max(maxU, u)
	}
	k0 := uint(0)
	if m := sum / uint64(len(us)); m > 0 {
		k0 = uint(bits.Len64(m)) - 1
	}
	// The quotient bound may force a larger parameter.
	if l := uint(bits.Len64(maxU)); l > 5 && k0 < l-5 {
		k0 = l - 5
	}
	cost = math.MaxInt
	for _, kk := range [...]uint{k0 - 1, k0, k0 + 1, k0 + 2} {
		if kk > 40 { // k0-1 wrapped
			continue
		}
		if c := riceCost(us, kk, maxU); c < cost {
			k, cost = kk, c
		}
	}
	return k, cost
}

// countEncoder keeps scratch for appendCountStream between calls.
type countEncoder struct {
	w      bitWriter
	d1, d0 [codecPart]uint64
}

// appendCountStream appends the coded stream of xs to dst.
func (e *countEncoder) appendCountStream(dst []byte, xs []int32) []byte {
	e.w = bitWriter{b: dst}
	prev := int64(0)
	for len(xs) > 0 {
		p := xs[:min(len(xs), codecPart)]
		xs = xs[len(p):]
		d1, d0 := e.d1[:len(p)], e.d0[:len(p)]
		allSame := true
		lo, hi := int64(p[0]), int64(p[0])
		q := prev
		for k, x := range p {
			v := int64(x)
			d1[k] = zigzag(v - q)
			allSame = allSame && v == q
			q = v
			lo, hi = min(lo, v), max(hi, v)
		}
		if allSame {
			e.w.put(modeConst, 2)
			continue
		}
		var sum int64
		for _, x := range p {
			sum += int64(x)
		}
		base := sum / int64(len(p))
		base = min(max(base, lo), hi)
		for k, x := range p {
			d0[k] = zigzag(int64(x) - base)
		}
		k1, c1 := bestRice(d1)
		k0, c0 := bestRice(d0)
		baseBits := gammaLen(zigzag(base - prev))
		craw := 32 * len(p)
		switch {
		case c1 != math.MaxInt && c1 <= craw && (c0 == math.MaxInt || c1 <= c0+baseBits):
			e.w.put(modeDelta, 2)
			e.w.put(uint64(k1), 6)
			e.rice(d1, k1)
		case c0 != math.MaxInt && c0+baseBits <= craw:
			e.w.put(modeLevel, 2)
			e.w.put(uint64(k0), 6)
			e.w.gamma(zigzag(base - prev))
			e.rice(d0, k0)
		default:
			e.w.put(modeRaw, 2)
			for _, x := range p {
				e.w.put(uint64(uint32(x)), 32)
			}
		}
		prev = int64(p[len(p)-1])
	}
	return e.w.close()
}

func (e *countEncoder) rice(us []uint64, k uint) {
	for _, u := range us {
		e.w.unary(u >> k)
		if k > 32 {
			e.w.put(u>>32, k-32)
			e.w.put(u, 32)
		} else {
			e.w.put(u, k)
		}
	}
}

func gammaLen(u uint64) int { return 2*bits.Len64(u+1) - 1 }

// decodeCountStream fills xs from src, which must hold exactly the coded
// stream of len(xs) values (trailing padding bits zero).
func decodeCountStream(xs []int32, src []byte) error {
	r := bitReader{b: src}
	prev := int64(0)
	for len(xs) > 0 {
		p := xs[:min(len(xs), codecPart)]
		xs = xs[len(p):]
		mode, ok := r.get(2)
		if !ok {
			return errCodecf("ends inside a partition header")
		}
		switch mode {
		case modeConst:
			for k := range p {
				p[k] = int32(prev)
			}
		case modeRaw:
			for k := range p {
				v, ok := r.get(32)
				if !ok {
					return errCodecf("ends inside a raw partition")
				}
				p[k] = int32(uint32(v))
			}
		default:
			kk, ok := r.get(6)
			if !ok || kk > 40 {
				return errCodecf("bad Rice parameter")
			}
			k := uint(kk)
			base := prev
			if mode == modeLevel {
				u, ok := r.gamma()
				if !ok {
					return errCodecf("bad partition base")
				}
				base += unzigzag(u)
			}
			for i := range p {
				q, ok := r.unary(riceMaxQ)
				if !ok {
					return errCodecf("bad Rice quotient")
				}
				var lo uint64
				if k > 32 {
					hi, ok1 := r.get(k - 32)
					l, ok2 := r.get(32)
					ok, lo = ok1 && ok2, hi<<32|l
				} else {
					lo, ok = r.get(k)
				}
				if !ok {
					return errCodecf("ends inside a residual")
				}
				v := unzigzag(q<<k|lo) + base
				if v < math.MinInt32 || v > math.MaxInt32 {
					return errCodecf("value %d outside int32", v)
				}
				p[i] = int32(v)
				if mode == modeDelta {
					base = v
				}
			}
		}
		prev = int64(p[len(p)-1])
	}
	// What is left must be the last byte's zero padding.
	if r.n >= 8 || r.i != len(r.b) || (r.n > 0 && r.acc != 0) {
		return errCodecf("%d bytes after the last value", len(r.b)-r.i+int(r.n/8))
	}
	return nil
}

type codecError string

func (e codecError) Error() string   { return "count stream: " + string(e) }
func (e codecError) Is(t error) bool { return t == errCodec }

func errCodecf(format string, a ...any) error { return codecError(fmt.Sprintf(format, a...)) }
