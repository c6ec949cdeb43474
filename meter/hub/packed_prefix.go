package hub

import (
	"math/bits"
	"sync/atomic"

	"github.com/idlewatt/idlewatt/units"
)

// The prefix table: how the float decoder (packed_float.go) reads a
// noisy channel sample — two Rice codes, a bus delta of parameter kb and
// a current delta of parameter ki — in one step.
//
// Reading the codes one by one, each code's position waits for the last
// one's length: two dependent steps a channel sample, and much else to do
// around them. But the length of a channel sample is fixed by its first
// bits alone: the bus code's zeros, its 1 and its kb bits, then the
// current code's zeros and 1 — the current code's ki remainder bits only
// follow. So a table indexed by the window's top prefixBits bits gives,
// when that prefix lies within them (nearly every sample of a meter's
// noise: its deltas are a few counts, their quotients 0–3), the sample's
// whole length, its bus delta and its current quotient: one load a
// channel sample, the remainder read with one shift.

// prefixBits is the index width of a prefix table: 2¹⁰ entries of 4
// bytes. A sample whose bus code and current quotient take 10 bits or
// fewer is in it (99.7 % of a noisy stream's: 0.5 mA σ on the current, a
// count on the bus voltage). Measured on that stream's frames: 9 bits
// missed 3× as often, for no gain; 11 and 12 bits (larger tables) took
// 2–20 % longer.
const prefixBits = 10

// prefixTable holds an entry for each value of a window's top prefixBits
// bits.
type prefixTable [1 << prefixBits]prefixEntry

// prefixEntry is a sample whose prefix lies in the index, or (0) not: a
// longer prefix, or an escape. It is loaded whole and split in registers:
// bits 0–7 hold the sample's length in bits tl (prefix + ki, at most 30:
// bits 6 and 7 are 0, so the entry is itself a shift count), 8–15 the bus
// delta, 32–63 the current code's quotient shifted left by ki.
type prefixEntry uint64

func newPrefixEntry(tl uint, bus int8, qs uint32) prefixEntry {
	return prefixEntry(uint64(tl) | uint64(uint8(bus))<<8 | uint64(qs)<<32)
}

func (e prefixEntry) tl() uint   { return uint(uint8(e)) }
func (e prefixEntry) bus() int32 { return int32(int8(e >> 8)) }
func (e prefixEntry) qs() uint32 { return uint32(e >> 32) }

// prefixTabs holds a table per parameter pair, built on first use and
// shared by every decoder (a table never changes once stored).
var prefixTabs [packedMaxKBus + 1][packedMaxKCur + 1]atomic.Pointer[prefixTable]

// storePrefixTab builds the table of kb and ki and stores it, unless
// another decoder stored it first.
func storePrefixTab(kb, ki uint) *prefixTable {
	p := &prefixTabs[kb&packedMaxKBus][min(ki, packedMaxKCur)]
	p.CompareAndSwap(nil, newPrefixTable(kb, ki))
	return p.Load()
}

// newPrefixTable builds the table of parameters kb and ki: for each index,
// the codes read from it as riceNext reads them.
func newPrefixTable(kb, ki uint) *prefixTable {
	t := new(prefixTable)
	for x := range t {
		w := uint64(x) << (64 - prefixBits)
		qb := uint(bits.LeadingZeros64(w))
		if qb >= packedEscape || qb+1+kb > prefixBits {
			continue
		}
		ub, w, nb := riceNext(w, kb, packedBusRaw)
		qc := uint(bits.LeadingZeros64(w))
		pre := nb + qc + 1
		if qc >= packedEscape || pre > prefixBits {
			continue
		}
		if d := unzig(ub); d == int32(int8(d)) {
			t[x] = newPrefixEntry(pre+ki, int8(d), uint32(qc)<<ki)
		}
	}
	return t
}

// floatChan is a channel of the block the prefix reader decodes.
type floatChan struct {
	tab *prefixTable // kb's and ki's
	// Its samples in packedFloats.v and .i: a sample is stored at its
	// set's index, one bounds check and no offset to add (measured: 5 %
	// of the inner loop, against an offset and the block's slices).
	v        []units.Volts
	i        []units.Amps
	mask     uint32  // 1<<ki − 1: the current code's remainder bits
	bus, cur int32   // its last counts
	lv, li   float64 // volts and amps per count
	kb, ki   uint8
	flags    uint8    // chRefill
	_        [37]byte // 128 bytes: &fc[j] is a shift, not a multiply
}

// chRefill marks a channel before whose sample prefixSets reloads the
// window.
const chRefill = 1

// prefixable reports whether the prefix reader suits the channels chs: a
// bus parameter above prefixBits − 6 leaves a sample's prefix little room
// in the table, and most samples would be read code by code.
func prefixable(chs []packedChan) bool {
	for j := range chs {
		if chs[j].kb > prefixBits-6 {
			return false
		}
	}
	return true
}

// bitReader reads a bit stream most significant bit first: win holds its
// next bits, nb of them loaded (at most 63), and i is the next byte of the
// stream to load.
type bitReader struct {
	win uint64
	nb  uint
	i   int
}

// pos is the bits read.
func (r *bitReader) pos() int { return 8*r.i - int(r.nb) }

// refill loads whole bytes of p into the window, up to 56–63 bits. The
// index is masked: a reader gone past the stream's end stays in p.
func (r *bitReader) refill(p *floatStream) {
	r.win |= be.Uint64(p[r.i&(floatBuf-1):]) >> (r.nb & 63)
	r.i += int((63 - r.nb) >> 3)
	r.nb |= 56
}

// prefixDeltas is unpackFloatDeltas through the prefix tables: the same
// volts and amps in f, and the bits read, for a block unpackFloatDeltas
// accepts; ok false for one it refuses (f then holds garbage, to be
// overwritten). st holds the bit stream of total bits, and p is st's
// first bytes: the stream and floatPad zeros.
//
// Still runs are found and filled as unpackFloatDeltas finds and fills
// them; the sets between are read a channel sample a step (prefixSets),
// a sample the tables do not hold code by code (slowSample). What
// unpackDeltas checks at each sample is checked here once: a count out of
// range ends the block, and a stream that ended before the block's last
// code shows in the position after the block (reading on past the end
// reads the zeros after it, then whatever st holds, and only goes on).
func (f *packedFloats) prefixDeltas(st *floatStream, p []byte, total int, chs []packedChan, count int) (int, bool) {
	fc := f.fc[:len(chs)]
	nch := len(chs)
	end := 0
	ready := false // fc is set up at the first set not in a still run
	zpat, zn := zeroSet(chs)
	var r bitReader
	for k := 1; k < count; {
		if zn != 0 {
			if r.nb < 56 {
				r.refill(st)
			}
			if r.win>>(64-zn) == zpat {
				if m := stillRun(f, p, r.pos(), total, chs, k, count, zn); m > 0 {
					r = readerAt(st, uint(r.pos()+m*int(zn)))
					k += m
					continue
				}
			}
		}
		if !ready {
			f.prefixChans(chs, count)
			ready = true
		}
		// Sets k…: all of them, or (if a still run may follow) one.
		end = count
		if zn != 0 {
			end = k + 1
		}
		for j := 0; k < end; {
			var stop prefixStop
			switch r, k, j, stop = prefixSets(st, fc, k, j, end, r); stop {
			case prefixBad:
				return 0, false
			case prefixMiss:
				if !slowSample(st, &r, &fc[j], k) {
					return 0, false
				}
				if j++; j == nch {
					j = 0
					k++
				}
			}
		}
	}
	return r.pos(), r.pos() <= total
}

// prefixChans sets up f.fc for the channels chs of a block of count sets,
// their tables and output slices.
func (f *packedFloats) prefixChans(chs []packedChan, count int) {
	maxKi := uint(0)
	for j := range chs {
		maxKi = max(maxKi, chs[j].ki)
	}
	// A sample the tables hold is at most prefixBits + ki bits: per of
	// them fit a reload's 57 bits or more and leave prefixBits loaded,
	// the next index, which prefixSets reads before it reloads.
	per, left := prefixPer[min(maxKi, packedMaxKCur)], uint8(0)
	for j := range chs {
		c, h := &f.fc[j], &chs[j]
		// Looked up whether or not they changed: a frame's parameters
		// change at random, a branch on it would be mispredicted.
		c.kb, c.ki, c.mask = uint8(h.kb), uint8(h.ki), 1<<h.ki-1
		if c.tab = prefixTabs[h.kb&packedMaxKBus][min(h.ki, packedMaxKCur)].Load(); c.tab == nil {
			c.tab = storePrefixTab(h.kb, h.ki)
		}
		c.bus, c.cur, c.lv, c.li = h.bus, h.cur, f.lv[j], f.li[j]
		c.v, c.i = f.v[j*count:(j+1)*count], f.i[j*count:(j+1)*count]
		c.flags = 0
		if left == 0 {
			c.flags, left = chRefill, per
		}
		left--
	}
}

// prefixPer[ki] is (56 − prefixBits) / (prefixBits + ki), without a
// division a block.
var prefixPer = func() (t [packedMaxKCur + 1]uint8) {
	for ki := range t {
		t[ki] = uint8((56 - prefixBits) / (prefixBits + ki))
	}
	return t
}()

// prefixStop is why prefixSets returned.
type prefixStop uint8

const (
	prefixDone prefixStop = iota // at set a.end
	prefixMiss                   // at a sample the tables do not hold, unread
	prefixBad                    // after a sample whose counts are out of range
)

// prefixSets reads channel samples of sets k… (from channel j of set k)
// to set end through the prefix tables, adds each to its channel's
// counts and writes its volts and amps, and returns the reader and where
// it stopped, and why. fc is the block's channels.
//
// This is the decoder's inner loop for noisy blocks. On the 2-core
// development machine its bound is the instructions a sample takes, not
// the chain from one table entry to the next (two blocks decoded in one
// loop, two such chains, ran 20 % slower: registers spill), so what it
// does a sample is kept short: a table load, a rotate, the counts, their
// range and two stores. The window is rotated by the sample's length,
// not shifted: the sample's bits come round to its low end, where its
// current remainder is read with a mask (no second variable shift, whose
// count would compete for CX). At the channels marked chRefill the
// window is reloaded whole from the bit position (8 bytes, at least 57
// bits), after the sample's index was read from it: no count of loaded
// bits to keep, and no stale bits to clear. The reload is rotated, not
// shifted, by the position's bit offset, and by the sample's length in
// the same rotation: one step fewer on the chain from one table entry to
// the next at a reload (the offset's bits, rotated round, are stale bits
// like the others).
func prefixSets(p *floatStream, fc []floatChan, k, j int, end int, r bitReader) (bitReader, int, int, prefixStop) {
	pos := uint(r.pos())
	win := be.Uint64(p[pos>>3&(floatBuf-1):]) << (pos & 7)
	for ; k < end; k++ {
		for ; j < len(fc); j++ {
			c := &fc[j]
			e := c.tab[win>>(64-prefixBits)]
			if e == 0 {
				return readerAt(p, pos), k, j, prefixMiss
			}
			if c.flags&chRefill != 0 {
				// Reloaded and rotated by the bit offset and the sample's
				// length in one step: the offset's bits come round to the
				// low end, above the sample's.
				win = bits.RotateLeft64(be.Uint64(p[pos>>3&(floatBuf-1):]), int(pos&7+e.tl()))
			} else {
				win = bits.RotateLeft64(win, int(e&63))
			}
			x := uint32(win) // the sample's bits, its current remainder lowest
			pos += e.tl()
			bus := c.bus + e.bus()
			cur := c.cur + unzig(e.qs()|x&c.mask)
			c.bus, c.cur = bus, cur
			if uint32(bus)|uint32(cur+1<<19)>>4 > 0xFFFF {
				return readerAt(p, pos), k, j, prefixBad
			}
			c.v[k] = units.Volts(float64(bus) * c.lv)
			c.i[k] = units.Amps(float64(cur) * c.li)
		}
		j = 0
	}
	return readerAt(p, pos), k, 0, prefixDone
}

// readerAt is a bitReader at bit pos of p: 8 bytes loaded, 7 of them
// counted (at most 63 bits, as refill wants).
func readerAt(p *floatStream, pos uint) bitReader {
	return bitReader{be.Uint64(p[pos>>3&(floatBuf-1):]) << (pos & 7), 56 - pos&7, int(pos>>3 + 7)}
}

// slowSample reads channel c's sample k from r code by code (a sample
// prefixSets' table does not hold: a long code, an escape) as prefixSets
// would, and reports whether its counts are in range.
func slowSample(p *floatStream, r *bitReader, c *floatChan, k int) bool {
	if r.nb < riceMaxBits {
		r.refill(p)
	}
	ub, w, used := riceNext(r.win, uint(c.kb), packedBusRaw)
	r.win, r.nb = w, r.nb-used
	if r.nb < riceMaxBits {
		r.refill(p)
	}
	ui, w, used := riceNext(r.win, uint(c.ki), packedCurRaw)
	r.win, r.nb = w, r.nb-used
	c.bus, c.cur = c.bus+unzig(ub), c.cur+unzig(ui)
	c.v[k] = units.Volts(float64(c.bus) * c.lv)
	c.i[k] = units.Amps(float64(c.cur) * c.li)
	return uint32(c.bus)|uint32(c.cur+1<<19)>>4 <= 0xFFFF
}
