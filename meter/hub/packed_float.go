package hub

import (
	"math/bits"

	"github.com/idlewatt/idlewatt/units"
)

// The stream decoder's path for a packed block: its codes decoded straight
// into the volts and amps the sink receives, channel by channel, without
// the counts in format 2's layout that unpack makes (and a second pass
// converting them). A quiet meter's block is mostly sets in which no count
// moved — every code a zero delta — and those are found a set at a time
// and delivered as copies of the set before. A noisy meter's sets are read
// through the prefix tables (packed_prefix.go), a channel sample a step.

// packedFloats is the float decoder's scratch, reused frame after frame.
type packedFloats struct {
	v  []units.Volts // channel position j's samples at [j×Count, (j+1)×Count)
	i  []units.Amps
	bs *floatStream // the bit stream, then floatPad zero bytes
	// lv, li are the volts and amps per count of channel position j.
	lv, li [16]float64
	chs    [16]packedChan // the block's channels (packedHeader sets those it has)
	fc     [16]floatChan  // the same, as the prefix reader reads them
}

// floatStream holds a block's bit stream and the zeros after it: a fixed
// size, so that the prefix reader masks its byte index into it rather
// than checking it, and may read on past the stream's end (it checks the
// end once, after the block) without leaving it.
type floatStream [floatBuf + 8]byte

// floatBuf bounds a bit stream and the zeros after it; a frame's payload
// is at most MaxPayload bytes. A power of two: the index mask.
const floatBuf = 8192

// floatPad is the zero bytes after the bit stream: unpackDeltas' 32.
const floatPad = 32

// unpackFloats decodes the format-3 data q (after the 14-byte header) of
// s as unpack does — the same checks, the same errors, nothing delivered
// from a block refused — into f.v and f.i, channel-major: channel position
// j's sample k is count × f.lv[j] volts and count × f.li[j] amps, as
// decoder.emit computes them from unpack's counts.
func (s *Samples) unpackFloats(q []byte, f *packedFloats) error {
	chs := &f.chs
	stream, err := s.packedHeader(q, chs)
	if err != nil {
		return err
	}
	n := s.Count * s.Chans
	if cap(f.v) < n {
		f.v, f.i = make([]units.Volts, n), make([]units.Amps, n)
	}
	f.v, f.i = f.v[:n], f.i[:n]
	var st *floatStream
	var bs []byte
	if size := len(stream) + floatPad; size <= floatBuf {
		if f.bs == nil {
			f.bs = new(floatStream)
		}
		st, bs = f.bs, f.bs[:size]
	} else {
		bs = make([]byte, size) // longer than a frame's (tests): no prefix reader
	}
	clear(bs[copy(bs, stream):])
	for j := range s.Chans {
		c := &chs[j]
		f.v[j*s.Count] = units.Volts(float64(uint16(c.bus)) * f.lv[j])
		f.i[j*s.Count] = units.Amps(float64(c.cur) * f.li[j])
	}
	total := 8 * len(stream)
	if st != nil && prefixable(chs[:s.Chans]) {
		// A block the prefix reader refuses is decoded again, code by
		// code, for the refusal unpackDeltas makes.
		if pos, ok := f.prefixDeltas(st, bs, total, chs[:s.Chans], s.Count); ok {
			return packedEnd(stream, pos)
		}
	}
	pos, err := unpackFloatDeltas(f, bs, total, chs[:s.Chans], s.Count)
	if err != nil {
		return err
	}
	return packedEnd(stream, pos)
}

// zeroSet returns the bits of a set of chs in which every delta is 0 —
// per channel, a bus code "1" and kb zeros, a current code "1" and ki
// zeros — and their length; length 0 if they are more than a refilled
// window is sure to hold.
func zeroSet(chs []packedChan) (pat uint64, n uint) {
	// The length first, a loop without an exit: where a noisy block's
	// sum passes 56 changes from block to block, and a branch on it
	// would be mispredicted.
	for j := range chs {
		n += 2 + chs[j].kb + chs[j].ki
	}
	if n > 56 {
		return 0, 0
	}
	for j := range chs {
		c := &chs[j]
		pat = (pat<<(1+c.kb)|1<<c.kb)<<(1+c.ki) | 1<<c.ki
	}
	return pat, n
}

// unpackFloatDeltas is unpackDeltas writing volts and amps into f (sample
// 0 already there) rather than counts: it returns the bits it read, or
// the error unpackDeltas returns for the same stream.
//
// A set whose bits are zeroSet's — no count of any channel moved — is
// recognised by one comparison, the run of such sets after it by runEnd
// (the stream repeating itself a set later), and the run is delivered as
// copies of the set before it. Such a set decodes to the same samples,
// and the same position, as its codes read one by one, and is range
// checked by the set before it. A run ends before the stream does: a set
// that would cross its end (the zeros after it can look like the run
// going on) is read code by code, which finds the end, and names the set,
// as unpackDeltas does.
func unpackFloatDeltas(f *packedFloats, p []byte, total int, chs []packedChan, count int) (int, error) {
	var (
		win uint64 // the stream's next bits, most significant first
		nb  uint   // bits of win loaded
		i   int    // next byte of p to load
	)
	last := total/8 - 8 // while i ≤ last, the position is ≤ total − 64
	zpat, zn := zeroSet(chs)
	fv, fi := f.v, f.i
	for k := 1; k < count; {
		if zn != 0 {
			if nb < 56 {
				win |= be.Uint64(p[i:]) >> nb
				i += int((63 - nb) >> 3)
				nb |= 56
			}
			if win>>(64-zn) == zpat {
				if m := stillRun(f, p, 8*i-int(nb), total, chs, k, count, zn); m > 0 {
					pos := 8*i - int(nb) + m*int(zn)
					win, nb, i = be.Uint64(p[pos>>3:])<<(pos&7), uint(64-pos&7), pos>>3+8
					k += m
					continue
				}
			}
		}
		for j := range chs {
			c := &chs[j]
			if nb < riceMaxBits {
				win |= be.Uint64(p[i:]) >> nb
				i += int((63 - nb) >> 3)
				nb |= 56
			}
			ub, w, used := riceNext(win, c.kb, packedBusRaw)
			nb -= used
			if nb < riceMaxBits {
				w |= be.Uint64(p[i:]) >> nb
				i += int((63 - nb) >> 3)
				nb |= 56
			}
			ui, w, used := riceNext(w, c.ki, packedCurRaw)
			nb -= used
			win = w
			bus, cur := c.bus+unzig(ub), c.cur+unzig(ui)
			if uint32(bus)|uint32(cur+1<<19)>>4 > 0xFFFF || i > last {
				if err := checkSample(8*i-int(nb), total, k, count, j, bus, cur); err != nil {
					return 0, err
				}
			}
			c.bus, c.cur = bus, cur
			o := j*count + k
			fv[o] = units.Volts(float64(bus) * f.lv[j])
			fi[o] = units.Amps(float64(cur) * f.li[j])
		}
		k++
	}
	return 8*i - int(nb), nil
}

// checkSample is the rare check of unpackDeltas' and unpackFloatDeltas'
// loops, out of them: the stream read to bit pos of total, sample k of
// count, channel j decoding to bus and cur.
func checkSample(pos, total, k, count, j int, bus, cur int32) error {
	if pos > total {
		return protoErr(TypeSamples2, "packed block: bit stream ends in sample %d of %d", k, count)
	}
	if bus < 0 || bus > 0xFFFF || cur < -(1<<19) || cur > 1<<19-1 {
		return protoErr(TypeSamples2, "packed block: sample %d channel %d decodes out of range (bus %d, current %d)", k, j, bus, cur)
	}
	return nil
}

// stillRun finds the run of sets whose every delta is 0 at bit pos of p,
// set k of count (its first set's bits known to be zeroSet's, zn of them),
// fills their volts and amps with the set before's, and returns their
// number: 0 if the first set would end past the stream's total bits.
func stillRun(f *packedFloats, p []byte, pos, total int, chs []packedChan, k, count int, zn uint) int {
	end := min(total, pos+(count-k)*int(zn))
	if pos+int(zn) > end {
		return 0
	}
	m := (runEnd(p, pos+int(zn), end, zn) - pos) / int(zn)
	for j := range chs {
		o := j*count + k
		fill(f.v[o:o+m], f.v[o-1])
		fill(f.i[o:o+m], f.i[o-1])
	}
	return m
}

// runEnd returns the first bit position x in [from, end) of p (bits most
// significant first) whose bit differs from bit x − period, or end: where
// a stream repeating with that period, from from − period on, stops
// repeating. The first whole multiple of the period that is whole bytes
// is compared bit by bit; from there on, the stream repeats with that
// multiple too, and is compared with itself 8 bytes at a time.
func runEnd(p []byte, from, end int, period uint) int {
	per := int(period)
	for per&7 != 0 {
		per += int(period)
	}
	x := bitRunEnd(p, from, min(end, from-int(period)+per), int(period))
	if x < min(end, from-int(period)+per) {
		return x
	}
	// Bits x… repeat with period per, a whole number B of bytes.
	x = bitRunEnd(p, x, min(end, (x+7)&^7), per)
	if x&7 != 0 || x >= end {
		return x
	}
	B, b, stop := per>>3, x>>3, end>>3
	for ; b+8 <= stop; b += 8 {
		if d := le.Uint64(p[b:]) ^ le.Uint64(p[b-B:]); d != 0 {
			b += bits.TrailingZeros64(d) >> 3
			return 8*b + bits.LeadingZeros8(p[b]^p[b-B])
		}
	}
	for ; b < stop; b++ {
		if d := p[b] ^ p[b-B]; d != 0 {
			return 8*b + bits.LeadingZeros8(d)
		}
	}
	return bitRunEnd(p, 8*stop, end, per)
}

// bitRunEnd is runEnd bit by bit, 56 bits a step.
func bitRunEnd(p []byte, from, end, period int) int {
	x := from
	for x < end {
		n := min(56, end-x)
		y := x - period
		a := be.Uint64(p[x>>3:]) << (x & 7)
		b := be.Uint64(p[y>>3:]) << (y & 7)
		if d := (a ^ b) >> (64 - n); d != 0 {
			return x + n - bits.Len64(d)
		}
		x += n
	}
	return end
}

// fill sets every element of s to x, eight stores a turn (a third of
// the time of one store a turn, on the 2-core development machine).
func fill[T ~float64](s []T, x T) {
	for len(s) >= 8 {
		s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7] = x, x, x, x, x, x, x, x
		s = s[8:]
	}
	for k := range s {
		s[k] = x
	}
}
