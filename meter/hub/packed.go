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

// unpack decodes the format-3 data q (after the 14-byte header) of s into
// s.unpacked in format 2's layout and points s.Data at it. A block is
// accepted whole or refused whole: nothing is delivered from it before
// its last code and its padding have been checked.
func (s *Samples) unpack(q []byte) error {
	var chs [16]packedChan
	stream, err := s.packedHeader(q, &chs)
	if err != nil {
		return err
	}
	// s.unpacked holds the samples, 3 bytes of slack (each channel sample
	// is stored with one 8-byte write whose last 3 bytes the next one
	// overwrites), then a copy of the bit stream and 32 zero bytes, so
	// that every refill of the reader is one 8-byte load.
	n := s.Count * s.Chans * 5
	size := n + 3 + len(stream) + 32
	if cap(s.unpacked) < size {
		s.unpacked = make([]byte, size)
	}
	out, bs := s.unpacked[:n+3], s.unpacked[n+3:size]
	clear(bs[copy(bs, stream):])
	for j := range s.Chans {
		copy(out[j*5:], q[j*packedChanHdr:j*packedChanHdr+5])
	}
	pos, err := unpackDeltas(out, bs, 8*len(stream), chs[:s.Chans], s.Count)
	if err != nil {
		return err
	}
	if err := packedEnd(stream, pos); err != nil {
		return err
	}
	s.Data, s.Width = out[:n], 5
	return nil
}

// packedHeader checks the channel headers of the format-3 data q of s and
// the count against the bit stream's length, fills chs[:s.Chans] with
// each channel's parameters and first counts, and returns the bit stream.
func (s *Samples) packedHeader(q []byte, chs *[16]packedChan) ([]byte, error) {
	hdr := s.Chans * packedChanHdr
	if len(q) < hdr {
		return nil, protoErr(TypeSamples2, "packed block: %d bytes, shorter than %d channel headers", len(q), s.Chans)
	}
	stream := q[hdr:]
	// Every sample after the first costs at least 2 bits per channel: a
	// count the stream cannot hold is refused before anything is sized
	// by it.
	if (s.Count-1)*s.Chans*packedMinBits > 8*len(stream) {
		return nil, protoErr(TypeSamples2, "packed block: %d samples × %d channels cannot fit %d bytes", s.Count, s.Chans, len(stream))
	}
	for j := range s.Chans {
		h := q[j*packedChanHdr:]
		c := &chs[j]
		c.bus, c.cur = int32(le.Uint16(h)), cur20(h[2:])
		c.kb, c.ki = uint(h[5]&7), uint(h[5]>>3)
		if c.ki > packedMaxKCur {
			return nil, protoErr(TypeSamples2, "packed block: channel %d current Rice parameter %d above %d", j, c.ki, packedMaxKCur)
		}
		if c.cur < -(1<<19) || c.cur > 1<<19-1 {
			return nil, protoErr(TypeSamples2, "packed block: channel %d first current count %d out of range", j, c.cur)
		}
	}
	return stream, nil
}

// packedEnd checks that the bit stream ends in the byte its last code
// ends in (at bit pos), padded with 0s: one encoding per block, so a stray
// byte is an error, not ignored.
func packedEnd(stream []byte, pos int) error {
	if end := (pos + 7) / 8; end != len(stream) {
		return protoErr(TypeSamples2, "packed block: %d bytes after the bit stream's end", len(stream)-end)
	}
	if pos&7 != 0 && stream[len(stream)-1]&(0xFF>>(pos&7)) != 0 {
		return protoErr(TypeSamples2, "packed block: padding bits not zero")
	}
	return nil
}

// packedChan is one channel's state while a block unpacks: its Rice
// parameters and its last counts.
type packedChan struct {
	kb, ki   uint
	bus, cur int32
}

// unpackDeltas decodes samples 1…count−1 of the channels chs from the
// bit stream of total bits at the start of p, which has at least 32 zero
// bytes after it, into out (format 2's layout, sample 0 already there, 3
// bytes of slack at the end), and returns the bits it read.
//
// This is the decoder's inner loop (at 10 kS/s a packed stream is mostly
// Rice codes of a few bits), so the bit reader is written out in it: win
// holds the stream's next bits, most significant first, nb of them
// loaded; a refill is one 8-byte load of which whole bytes are kept.
// Past the stream's end it reads the zeros after it: a code that runs off
// the end decodes to garbage, and the position then says the stream
// ended inside it — the refusal, and the message, of reading bit by bit.
// The position is checked only in the stream's last 8 bytes; before a
// channel sample it is within the stream, and its two codes (74 bits at
// most) and refills then stay within the zeros.
func unpackDeltas(out, p []byte, total int, chs []packedChan, count int) (int, error) {
	var (
		win uint64 // the stream's next bits, most significant first
		nb  uint   // bits of win loaded (the bits below are the stream's, or 0)
		i   int    // next byte of p to load
	)
	last := total/8 - 8 // while i ≤ last, the position is ≤ total − 64
	for k := 1; k < count; k++ {
		o := k * len(chs) * 5
		for j := range chs {
			c := &chs[j]
			if nb < riceMaxBits {
				win |= be.Uint64(p[i:]) >> nb
				i += int((63 - nb) >> 3)
				nb |= 56 // nb + 8 × the whole bytes just added: 56…63
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
			// One test for the rare cases: bus outside 0…65535, current
			// outside ±2¹⁹, or near the stream's end.
			if uint32(bus)|uint32(cur+1<<19)>>4 > 0xFFFF || i > last {
				if err := checkSample(8*i-int(nb), total, k, count, j, bus, cur); err != nil {
					return 0, err
				}
			}
			c.bus, c.cur = bus, cur
			le.PutUint64(out[o+5*j:], uint64(uint16(bus))|uint64(uint32(cur)&0xFFFFFF)<<16)
		}
	}
	return 8*i - int(nb), nil
}

// riceMaxBits bounds a code: a quotient of at most 15, its 1 and a
// parameter of at most 20 bits, or the escape's 16 zeros and 21 bits. With
// as many loaded, a code needs no check of its own.
const riceMaxBits = packedEscape + packedCurRaw

// riceNext reads one Rice code of parameter k (escape width raw) from the
// front of win, which holds at least riceMaxBits of the stream, and
// returns its value, win past it, and its length.
func riceNext(win uint64, k, raw uint) (u uint32, rest uint64, used uint) {
	l := uint(bits.Len64(win)) // 64 − the quotient
	if l > 64-packedEscape {
		// win >> (l−1−k) is the code's 1 and its k low bits: 1<<k + low.
		q := 64 - l
		used = q + 1 + k
		return uint32(win>>((l-1-k)&63)) + uint32(q-1)<<(k&31), win << (used & 63), used
	}
	return uint32(win << packedEscape >> (64 - raw)), win << (packedEscape + raw), packedEscape + raw
}
