package hub

import (
	"math/bits"
)

// Sample format 3, packed (docs/hub-protocol.md § SAMPLES2, format 3): the
// 20-bit samples of format 2, lossless, in about a third of its bytes.
// Each SAMPLES2 frame carries every channel's first sample whole, a Rice
// parameter per channel for its bus and current deltas, then one bit
// stream of the deltas of samples 1…S−1, sample-major. A meter's counts
// are a level plus noise, so a delta costs the noise's bits, not the
// converter's: this is what lets 20-bit samples of one port at 10 kS/s
// fit the 921,600-baud UART that v1's 16-bit samples filled.

// FormatPacked is sample format 3: format 2's values, delta/Rice coded
// per frame. IDENTITY lists it with FormatBitPacked; a hub that lists it
// lists FormatBit20 too (its LSBs are the 20-bit ones).
const (
	FormatPacked    uint8 = 3
	FormatBitPacked       = 1 << (FormatPacked - 1)
)

// Packed layout limits.
const (
	packedChanHdr = 6  // per channel: bus u16, current 3 bytes, k byte
	packedEscape  = 16 // a Rice quotient of 16 or more is sent raw after 16 zero bits
	packedBusRaw  = 17 // raw width of a zigzagged bus delta (|d| ≤ 65535)
	packedCurRaw  = 21 // raw width of a zigzagged current delta (|d| ≤ 2²⁰ − 1)
	packedMaxKBus = 7  // k byte bits 0–2
	packedMaxKCur = 20 // k byte bits 3–7, 0–20
	packedMinBits = 2  // the shortest sample of one channel: two 1-bit Rice codes
)

// PackedAssumedBytes is the bytes per channel sample a hub assumes for a
// packed stream when it checks START against its link (NAK BANDWIDTH):
// 24 bits, what a current with a few hundred counts of noise and a bus
// voltage with a few counts cost. A noisier stream than that overflows the
// hub's buffer on a link it barely fits: an OVERRUN, recovered from the
// ring once the link has room.
const PackedAssumedBytes = 3

func zig(d int32) uint32   { return uint32(d<<1) ^ uint32(d>>31) }
func unzig(u uint32) int32 { return int32(u>>1) ^ -int32(u&1) }

// riceLen is the bits of u's code with parameter k and escape width raw.
func riceLen(u uint32, k uint, raw int) int {
	if q := u >> k; q < packedEscape {
		return int(q) + 1 + int(k)
	}
	return packedEscape + raw
}

// Packer encodes format-3 SAMPLES2 payloads. Its scratch is reused: a
// steady stream does not allocate. Not safe for concurrent use.
type Packer struct {
	zb, zi []uint32 // zigzagged deltas, sample-major (k−1)×chans + j
	cost   []int    // bits of sample k (k ≥ 1) with the chosen parameters
	kb, ki [16]uint
}

// Append appends to dst the payload of one SAMPLES2 frame of format 3
// holding the first sets of n sample sets in sets (format 2's layout:
// per set, per channel, bus u16 and a 20-bit current in 3 bytes), with
// hdr's First, Mask and Flags; as many sets as fit maxPayload bytes, at
// least one. It returns dst and the sets it packed.
func (pk *Packer) Append(dst []byte, hdr Samples, sets []byte, n, maxPayload int) ([]byte, int) {
	chans := bits.OnesCount16(hdr.Mask)
	if chans == 0 || n < 1 {
		return dst, 0
	}
	// No more sets than could fit at the shortest codes (2 bits per
	// channel): the work per frame is bounded by the frame, not by n (a
	// RESEND answer packs thousands of sets, frame after frame).
	budget := (maxPayload - samples2Hdr - chans*packedChanHdr) * 8
	n = min(n, 0xFFFF, 1+max(budget, 0)/(packedMinBits*chans))
	stride := chans * 5
	m := (n - 1) * chans
	if cap(pk.zb) < m {
		pk.zb, pk.zi = make([]uint32, m), make([]uint32, m)
	}
	pk.zb, pk.zi = pk.zb[:m], pk.zi[:m]
	for k := 1; k < n; k++ {
		for j := range chans {
			a, b := sets[(k-1)*stride+j*5:], sets[k*stride+j*5:]
			pk.zb[(k-1)*chans+j] = zig(int32(le.Uint16(b)) - int32(le.Uint16(a)))
			pk.zi[(k-1)*chans+j] = zig(cur20(b[2:]) - cur20(a[2:]))
		}
	}
	// Parameters for all n sets, then as many sets as fit with them; the
	// parameters chosen again for those sets can only shorten them.
	pk.choose(chans, n)
	s, used := 1, 0
	for ; s < n; s++ {
		c := pk.setBits(chans, s)
		if used+c > budget {
			break
		}
		used += c
	}
	pk.choose(chans, s)

	hdr.Count, hdr.Format = s, FormatPacked
	dst = hdr.AppendHeader2(dst)
	for j := range chans {
		q := sets[j*5:]
		dst = append(dst, q[0], q[1], q[2], q[3], q[4], byte(pk.kb[j]|pk.ki[j]<<3))
	}
	var w packWriter
	w.dst = dst
	for k := 1; k < s; k++ {
		for j := range chans {
			w.rice(pk.zb[(k-1)*chans+j], pk.kb[j], packedBusRaw)
			w.rice(pk.zi[(k-1)*chans+j], pk.ki[j], packedCurRaw)
		}
	}
	return w.close(), s
}

// choose picks each channel's bus and current parameters, the shortest
// for the deltas of sets 1…s−1.
func (pk *Packer) choose(chans, s int) {
	for j := range chans {
		pk.kb[j] = bestK(pk.zb, j, chans, s, packedMaxKBus, packedBusRaw)
		pk.ki[j] = bestK(pk.zi, j, chans, s, packedMaxKCur, packedCurRaw)
	}
}

func bestK(z []uint32, j, chans, s int, maxK uint, raw int) uint {
	best, bestCost := uint(0), -1
	for k := uint(0); k <= maxK; k++ {
		c := 0
		for x := 1; x < s; x++ {
			c += riceLen(z[(x-1)*chans+j], k, raw)
		}
		if bestCost < 0 || c < bestCost {
			best, bestCost = k, c
		}
	}
	return best
}

// setBits is the bits set x (≥ 1) costs with the chosen parameters.
func (pk *Packer) setBits(chans, x int) int {
	c := 0
	for j := range chans {
		c += riceLen(pk.zb[(x-1)*chans+j], pk.kb[j], packedBusRaw) + riceLen(pk.zi[(x-1)*chans+j], pk.ki[j], packedCurRaw)
	}
	return c
}

// packWriter appends bits, most significant first, to dst.
type packWriter struct {
	dst  []byte
	acc  uint64
	nacc uint
}

func (w *packWriter) put(v uint32, n uint) {
	w.acc = w.acc<<n | uint64(v)&(1<<n-1)
	w.nacc += n
	for w.nacc >= 8 {
		w.nacc -= 8
		w.dst = append(w.dst, byte(w.acc>>w.nacc))
	}
}

func (w *packWriter) rice(u uint32, k uint, raw int) {
	if q := u >> k; q < packedEscape {
		w.put(0, uint(q))
		w.put(1, 1)
		w.put(u, k)
		return
	}
	w.put(0, packedEscape)
	w.put(u, uint(raw))
}

// close pads the last byte with zero bits.
func (w *packWriter) close() []byte {
	if w.nacc > 0 {
		w.dst = append(w.dst, byte(w.acc<<(8-w.nacc)))
		w.nacc = 0
	}
	return w.dst
}

// packReader reads bits most significant first; past the end it fails.
type packReader struct {
	p   []byte
	pos int // bit position
}

func (r *packReader) bit() (uint32, bool) {
	if r.pos >= 8*len(r.p) {
		return 0, false
	}
	b := uint32(r.p[r.pos>>3]>>(7-r.pos&7)) & 1
	r.pos++
	return b, true
}

func (r *packReader) get(n uint) (uint32, bool) {
	v := uint32(0)
	for range n {
		b, ok := r.bit()
		if !ok {
			return 0, false
		}
		v = v<<1 | b
	}
	return v, true
}

// rice reads one Rice code of parameter k (escape width raw). Where 8
// bytes of the stream remain from the current byte, the code is read from
// one 64-bit window (its quotient by a leading-zero count); near the end,
// bit by bit — the same codes, the same failures.
func (r *packReader) rice(k uint, raw int) (uint32, bool) {
	if i := r.pos >> 3; i+8 <= len(r.p) {
		sh := uint(r.pos & 7)
		win := be.Uint64(r.p[i:]) << sh // 64 − sh ≥ 57 bits of the stream
		q := uint(bits.LeadingZeros64(win))
		if q < packedEscape && q+1+k <= 64-sh {
			r.pos += int(q + 1 + k)
			if k == 0 {
				return uint32(q), true
			}
			return uint32(q)<<k | uint32(win<<(q+1)>>(64-k)), true
		}
		if q >= packedEscape && packedEscape+uint(raw) <= 64-sh {
			r.pos += packedEscape + raw
			return uint32(win << packedEscape >> (64 - uint(raw))), true
		}
	}
	return r.riceSlow(k, raw)
}

func (r *packReader) riceSlow(k uint, raw int) (uint32, bool) {
	q := uint32(0)
	for {
		b, ok := r.bit()
		if !ok {
			return 0, false
		}
		if b == 1 {
			break
		}
		if q++; q == packedEscape {
			return r.get(uint(raw))
		}
	}
	low, ok := r.get(k)
	return q<<k | low, ok
}

// unpack decodes the format-3 data q (after the 14-byte header) of s into
// s.unpacked in format 2's layout and points s.Data at it.
func (s *Samples) unpack(q []byte) error {
	hdr := s.Chans * packedChanHdr
	if len(q) < hdr {
		return protoErr(TypeSamples2, "packed block: %d bytes, shorter than %d channel headers", len(q), s.Chans)
	}
	stream := q[hdr:]
	// Every sample after the first costs at least 2 bits per channel: a
	// count the stream cannot hold is refused before anything is sized
	// by it.
	if (s.Count-1)*s.Chans*packedMinBits > 8*len(stream) {
		return protoErr(TypeSamples2, "packed block: %d samples × %d channels cannot fit %d bytes", s.Count, s.Chans, len(stream))
	}
	n := s.Count * s.Chans * 5
	if cap(s.unpacked) < n {
		s.unpacked = make([]byte, n)
	}
	out := s.unpacked[:n]
	var kb, ki [16]uint
	var bus, cur [16]int32
	for j := range s.Chans {
		h := q[j*packedChanHdr:]
		bus[j], cur[j] = int32(le.Uint16(h)), cur20(h[2:])
		kb[j], ki[j] = uint(h[5]&7), uint(h[5]>>3)
		if ki[j] > packedMaxKCur {
			return protoErr(TypeSamples2, "packed block: channel %d current Rice parameter %d above %d", j, ki[j], packedMaxKCur)
		}
		if cur[j] < -(1<<19) || cur[j] > 1<<19-1 {
			return protoErr(TypeSamples2, "packed block: channel %d first current count %d out of range", j, cur[j])
		}
		copy(out[j*5:], h[:5])
	}
	r := packReader{p: stream}
	stride := s.Chans * 5
	for k := 1; k < s.Count; k++ {
		for j := range s.Chans {
			ub, ok1 := r.rice(kb[j], packedBusRaw)
			ui, ok2 := r.rice(ki[j], packedCurRaw)
			if !ok1 || !ok2 {
				return protoErr(TypeSamples2, "packed block: bit stream ends in sample %d of %d", k, s.Count)
			}
			bus[j] += unzig(ub)
			cur[j] += unzig(ui)
			if bus[j] < 0 || bus[j] > 0xFFFF || cur[j] < -(1<<19) || cur[j] > 1<<19-1 {
				return protoErr(TypeSamples2, "packed block: sample %d channel %d decodes out of range (bus %d, current %d)", k, j, bus[j], cur[j])
			}
			o := out[k*stride+j*5:]
			o[0], o[1] = byte(bus[j]), byte(bus[j]>>8)
			o[2], o[3], o[4] = byte(cur[j]), byte(cur[j]>>8), byte(cur[j]>>16)
		}
	}
	// The stream ends in the byte its last code ends in, padded with 0s:
	// one encoding per block, so a stray byte is an error, not ignored.
	if end := (r.pos + 7) / 8; end != len(stream) {
		return protoErr(TypeSamples2, "packed block: %d bytes after the bit stream's end", len(stream)-end)
	}
	if pad, _ := r.get(uint(8*len(stream) - r.pos)); pad != 0 {
		return protoErr(TypeSamples2, "packed block: padding bits not zero")
	}
	s.Data, s.Width = out, 5
	return nil
}
