package hub

import (
	"bytes"
	"math/bits"
	"math/rand"
	"testing"

	"github.com/idlewatt/idlewatt/units"
)

// The reference decoder of format 3: clear rather than fast. Kept here
// so unpack, the fast one, is checked against it.

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

// unpackRef is the packed decoder as it was before unpack read codes from
// a refilled 64-bit window: a Rice code at a time through packReader,
// each range checked as it decodes. unpack must agree with it on every
// payload — samples, and the error's text — (TestUnpackMatchesReference,
// FuzzUnpackMatchesReference).
func (s *Samples) unpackRef(q []byte) error {
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

// The 64-bit window read of a Rice code and the bit-by-bit one agree on
// every code of random streams, at every bit position and parameter:
// value, success and where they leave the reader.
func TestRiceWindowMatchesBitwise(t *testing.T) {
	rng := rand.New(rand.NewSource(25))
	for trial := range 300 {
		p := make([]byte, rng.Intn(24))
		for i := range p {
			p[i] = byte(rng.Uint32())
			// Long zero runs reach the escape code.
			if rng.Intn(3) == 0 {
				p[i] = 0
			}
		}
		for pos := 0; pos <= 8*len(p); pos++ {
			for k := uint(0); k <= packedMaxKCur; k++ {
				for _, raw := range []int{packedBusRaw, packedCurRaw} {
					fast, slow := packReader{p: p, pos: pos}, packReader{p: p, pos: pos}
					vf, okf := fast.rice(k, raw)
					vs, oks := slow.riceSlow(k, raw)
					if vf != vs || okf != oks || (oks && fast.pos != slow.pos) {
						t.Fatalf("trial %d, %d bytes, bit %d, k %d, raw %d: window read %d %v at bit %d, bitwise %d %v at bit %d",
							trial, len(p), pos, k, raw, vf, okf, fast.pos, vs, oks, slow.pos)
					}
				}
			}
		}
	}
}

// sameUnpack decodes the packed payload p with DecodeV2 (unpack), with
// unpackFloats (the stream decoder's) and with the reference, and fails
// unless all refuse it with the same message or all accept it with the
// same samples (unpackFloats': each count times its channel's LSB). A
// header DecodeV2 refuses before it unpacks is not compared.
func sameUnpack(t *testing.T, p []byte) {
	t.Helper()
	if len(p) < samples2Hdr || p[13] != FormatPacked {
		return
	}
	var fast, ref Samples
	errF := fast.DecodeV2(p)
	ref.Mask, ref.Count = le.Uint16(p[8:]), int(le.Uint16(p[10:]))
	ref.Chans = bits.OnesCount16(ref.Mask)
	if ref.Chans == 0 || ref.Count == 0 {
		return
	}
	errR := ref.unpackRef(p[samples2Hdr:])
	switch {
	case (errF == nil) != (errR == nil):
		t.Fatalf("unpack %v, reference %v", errF, errR)
	case errF != nil && errF.Error() != errR.Error():
		t.Fatalf("unpack %q, reference %q", errF, errR)
	case errF == nil && !bytes.Equal(fast.Data, ref.Data):
		t.Fatalf("unpack and reference decode %d samples differently", fast.Count)
	}
	var fl Samples
	var f packedFloats
	for j := range f.lv {
		f.lv[j], f.li[j] = 1.25e-3+float64(j)*1e-6, 8e-6*(1+float64(j)/7)
	}
	if fl.header2(p) != nil {
		t.Fatalf("DecodeV2 decoded the header, header2 refused it")
	}
	// The buffers hold another block's values: each is written, or the
	// block is refused.
	f.v, f.i = make([]units.Volts, fl.Count*fl.Chans+3), make([]units.Amps, fl.Count*fl.Chans+3)
	for k := range f.v {
		f.v[k], f.i[k] = -1, -1
	}
	errL := fl.unpackFloats(fl.Data, &f)
	switch {
	case (errL == nil) != (errR == nil):
		t.Fatalf("unpackFloats %v, reference %v", errL, errR)
	case errL != nil && errL.Error() != errR.Error():
		t.Fatalf("unpackFloats %q, reference %q", errL, errR)
	case errL != nil:
		return
	}
	for k := range ref.Count {
		for j := range ref.Chans {
			q := ref.Data[(k*ref.Chans+j)*5:]
			v, i := units.Volts(float64(le.Uint16(q))*f.lv[j]), units.Amps(float64(cur20(q[2:]))*f.li[j])
			if o := j*ref.Count + k; f.v[o] != v || f.i[o] != i {
				t.Fatalf("sample %d channel %d: unpackFloats %v, %v; reference %v, %v", k, j, f.v[o], f.i[o], v, i)
			}
		}
	}
}

// unpack and unpackFloats agree with the reference on packed blocks of
// every shape — 1 to 16 channels, quiet to full-range noise, runs of sets
// in which nothing moved, frames small and large — and on each of them
// damaged: cut short at every length, a byte flipped, a byte appended.
func TestUnpackMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewSource(31))
	var pk Packer
	n := 0
	for _, chans := range []int{1, 2, 3, 8, 16} {
		for _, sigma := range []float64{0, 2, 60, 400, 200000, -1} {
			for _, maxPayload := range []int{48, 248, 1016, MaxPayload} {
				sets := randomSets(rng, 120, chans, sigma)
				if sigma < 0 {
					sets = refSets(rng, 120, chans) // still segments among noisy ones
				}
				p, _ := pk.Append(nil, Samples{First: 5, Mask: uint16(1<<chans - 1)}, sets, 120, maxPayload)
				sameUnpack(t, p)
				for cut := samples2Hdr; cut < len(p); cut += 1 + len(p)/64 {
					sameUnpack(t, p[:cut])
				}
				for range 20 {
					q := bytes.Clone(p)
					q[samples2Hdr+rng.Intn(len(q)-samples2Hdr)] ^= byte(1 << rng.Intn(8))
					sameUnpack(t, q)
				}
				sameUnpack(t, append(bytes.Clone(p), byte(rng.Intn(256))))
				n++
			}
		}
	}
	if n != 120 {
		t.Fatalf("%d blocks compared", n)
	}
}

// FuzzUnpackMatchesReference: on any payload, unpack and the reference
// refuse with the same message or decode the same samples.
func FuzzUnpackMatchesReference(f *testing.F) {
	f.Add(sampleBlockPacked())
	quiet := bytes.Repeat(AppendCur20(le.AppendUint16(nil, 4000), -3), 8*50)
	var pk Packer
	p, _ := pk.Append(nil, Samples{Mask: 0xFF}, quiet, 50, 248) // every set after the first a zero delta
	f.Add(p)
	f.Add(packedFrame(7, 12, SamplesResent)[HeaderLen : len(packedFrame(7, 12, SamplesResent))-TrailerLen])
	f.Fuzz(func(t *testing.T, p []byte) {
		if len(p) >= samples2Hdr {
			p[13] = FormatPacked
		}
		sameUnpack(t, p)
	})
}

// BenchmarkUnpackRef is BenchmarkUnpack's frame through the reference
// decoder: what unpack is measured against.
func BenchmarkUnpackRef(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	sets := randomSets(rng, 100, 8, 60)
	for k := range 100 {
		for j := range 8 {
			q := sets[(k*8+j)*5:]
			copy(q, AppendCur20(le.AppendUint16(nil, uint16(4000+int(rng.NormFloat64()*2))), int32(3000+int(rng.NormFloat64()*60))))
		}
	}
	var pk Packer
	p, m := pk.Append(nil, Samples{Mask: 0xFF}, sets, 100, 248)
	var s Samples
	s.Mask, s.Count, s.Chans = 0xFF, m, 8
	b.SetBytes(int64(m * 8))
	for b.Loop() {
		if err := s.unpackRef(p[samples2Hdr:]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(m), "sets/frame")
}
