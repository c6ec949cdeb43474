package capture

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"
	"os"
	"slices"
)

// Errors chunk returns for intact chunks that are out of place.
var (
	errStale    = errors.New("chunk out of sequence")
	errAppended = errors.New("another capture begins here")
)

// chunk reads the chunk at r.pos and checks its framing, CRC and sequence
// number. p aliases r.buf. On damage it returns a *DamageError and leaves
// the reader one byte past the chunk's start, with the rest of what it read
// pushed back, so resync can hunt from there.
func (r *Reader) chunk() (typ byte, p []byte, err error) {
	start := r.pos
	n, err := r.read(r.hdr[:])
	if err != nil {
		if n == 0 && errors.Is(err, io.EOF) {
			return 0, nil, r.cut(start, fmt.Sprintf("file ends after chunk %d without an end chunk", int64(r.seq)-1))
		}
		if !isEOF(err) {
			return 0, nil, fmt.Errorf("capture: reading chunk %d at byte %d: %w", r.seq, start, err)
		}
		r.unread(r.hdr[1:n])
		return 0, nil, r.cut(start, fmt.Sprintf("file ends %d bytes into the chunk header", n))
	}
	fixedMagic := -1 // bit of the magic corrected, pending the CRC's word
	if r.hdr[0] != chunkMagic[0] || r.hdr[1] != chunkMagic[1] {
		if r.seq > 0 && string(r.hdr[:len(fileMagic)]) == string(fileMagic[:]) {
			r.unread(r.hdr[:])
			return 0, nil, errAppended
		}
		d := uint16(r.hdr[0]^chunkMagic[0]) | uint16(r.hdr[1]^chunkMagic[1])<<8
		if bits.OnesCount16(d) != 1 {
			r.unread(r.hdr[1:])
			return 0, nil, r.corrupt(start, fmt.Sprintf("chunk magic % x, want % x", r.hdr[:2], chunkMagic[:]))
		}
		// One flipped bit: read on as if it were "IW"; the CRC decides.
		fixedMagic = bits.TrailingZeros16(d)
		r.hdr[fixedMagic/8] ^= 1 << (fixedMagic % 8)
	}
	undoMagic := func() {
		if fixedMagic >= 0 {
			r.hdr[fixedMagic/8] ^= 1 << (fixedMagic % 8)
		}
	}
	plen := int(le.Uint32(r.hdr[4:]))
	if plen > MaxPayload {
		undoMagic()
		r.unread(r.hdr[1:])
		return 0, nil, r.corrupt(start, fmt.Sprintf("payload length %d exceeds the %d maximum", plen, MaxPayload))
	}
	if got, err := r.readPayload(plen + crcLen); err != nil {
		if !isEOF(err) {
			return 0, nil, fmt.Errorf("capture: reading chunk %d at byte %d: %w", r.seq, start, err)
		}
		undoMagic()
		r.unread(r.buf[:got])
		r.unread(r.hdr[1:])
		return 0, nil, r.cut(start, fmt.Sprintf("file ends %d bytes into the chunk payload", chunkHdrLen+got))
	}
	crc := crc32.Update(crc32.Checksum(r.hdr[:], castagnoli), castagnoli, r.buf[:plen])
	if got := le.Uint32(r.buf[plen:]); got != crc {
		at, ok := -1, false
		if fixedMagic < 0 {
			at, ok = r.correct(plen, got^crc)
		}
		if !ok {
			undoMagic()
			r.unread(r.buf[:plen+crcLen])
			r.unread(r.hdr[1:])
			return 0, nil, r.corrupt(start, fmt.Sprintf("CRC-32C 0x%08x, computed 0x%08x", got, crc))
		}
		r.acc.Corrected = append(r.acc.Corrected, start+int64(at))
	} else if fixedMagic >= 0 {
		r.acc.Corrected = append(r.acc.Corrected, start+int64(fixedMagic/8))
	}
	switch s := le.Uint64(r.hdr[8:]); {
	case s < r.seq:
		return 0, nil, fmt.Errorf("%w: sequence number %d, want %d (a repeated chunk)", errStale, s, r.seq)
	case s > r.seq:
		// Intact, but chunks before it are missing: a zero-byte hole.
		r.damaged(start, start, s-r.seq, fmt.Sprintf("sequence number %d, want %d: chunks missing", s, r.seq), false)
		r.seq = s
	}
	return r.hdr[2], r.buf[:plen], nil
}

// correctMax bounds the chunks correct tries to mend. CRC-32C's Hamming
// distance of 4 means damage of two or three bits is never taken for one;
// damage of more bits (a garbled sector) is wrongly "mended" with a chance
// of about B/2³² for a chunk of B bits: 3·10⁻⁵ for the live writer's usual
// 16 KiB samples chunks, 10⁻³ for its largest (512 KiB). The mended offsets
// are in the Account and the notes either way.
const correctMax = 1 << 20

// correct mends a single flipped bit in the chunk in r.hdr and r.buf[:plen]
// whose computed CRC differs from the stored one by syn. CRC-32C's Hamming
// distance of at least 4 at these lengths makes every single-bit error's
// syndrome unique, so the bit is found by stepping a one-bit error from the
// chunk's last bit backwards until its syndrome is syn. A flip in the length
// field cannot be mended this way (the length chose what was read) and is
// left to resync. It returns the offset in the chunk of the mended byte.
func (r *Reader) correct(plen int, syn uint32) (int, bool) {
	if plen > correctMax {
		return 0, false
	}
	if bits.OnesCount32(syn) == 1 {
		// The stored CRC itself took the hit; the data is intact.
		return chunkHdrLen + plen + bits.TrailingZeros32(syn)/8, true
	}
	const poly = 0x82F63B78 // CRC-32C, reflected
	nbits := 8 * (chunkHdrLen + plen)
	s := uint32(poly) // syndrome of the chunk's last bit
	for m := 0; m < nbits; m++ {
		if s == syn {
			k := nbits - 1 - m // bit index, LSB first within each byte
			at, bit := k/8, byte(1)<<(k%8)
			if at >= 4 && at < 8 {
				return 0, false
			}
			if at < chunkHdrLen {
				r.hdr[at] ^= bit
			} else {
				r.buf[at-chunkHdrLen] ^= bit
			}
			return at, true
		}
		if s&1 != 0 {
			s = s>>1 ^ poly
		} else {
			s >>= 1
		}
	}
	return 0, false
}

// resync hunts from just past the damaged chunk at off for the next intact
// chunk. On success it records the damage, leaves that chunk unread and
// returns true. When nothing intact follows it records tail damage (unless
// first is a plain cut: a crash, not damage) and returns false.
func (r *Reader) resync(off int64, first *DamageError) bool {
	var h [chunkHdrLen]byte
	for {
		b, err := r.readByte()
		if err != nil {
			if !isEOF(err) {
				r.err = fmt.Errorf("capture: resynchronising after byte %d: %w", off, err)
				return false
			}
			if !first.Cut {
				r.damaged(off, r.pos, 0, first.Reason, true)
			}
			return false
		}
		c := r.pos - 1
		if b == fileMagic[0] {
			h[0] = b
			n, _ := r.read(h[1:len(fileMagic)])
			if string(h[:1+n]) == string(fileMagic[:]) {
				// Another capture begins: this one's intact chunks are over.
				r.unread(h[:1+n])
				r.damaged(off, c, 0, first.Reason, true)
				r.trailing(c, true)
				return false
			}
			r.unread(h[1 : 1+n])
			continue
		}
		if b != chunkMagic[0] {
			continue
		}
		h[0] = b
		n, err := r.read(h[1:])
		if err != nil {
			r.unread(h[1 : 1+n])
			continue
		}
		if !r.plausible(&h, c-off) {
			r.unread(h[1:])
			continue
		}
		plen := int(le.Uint32(h[4:]))
		got, err := r.readPayload(plen + crcLen)
		if err == nil {
			crc := crc32.Update(crc32.Checksum(h[:], castagnoli), castagnoli, r.buf[:plen])
			if le.Uint32(r.buf[plen:]) == crc {
				s := le.Uint64(h[8:])
				r.unread(r.buf[:got])
				r.unread(h[:])
				r.damaged(off, c, s-r.seq, first.Reason, false)
				r.seq = s
				return true
			}
		} else if !isEOF(err) {
			r.err = fmt.Errorf("capture: resynchronising after byte %d: %w", off, err)
			return false
		}
		r.unread(r.buf[:got])
		r.unread(h[1:])
	}
}

// plausible says whether the 16 bytes in h, found skipped bytes after the
// damage began, can be the header of the next intact chunk: known flags, a
// length that fits its type, and a sequence number no further ahead than
// the skipped bytes could hold chunks (each is at least 20 bytes). Only
// candidates that pass are CRC-checked, so hunting costs a scan.
func (r *Reader) plausible(h *[chunkHdrLen]byte, skipped int64) bool {
	if h[1] != chunkMagic[1] || h[3]&^flagCritical != 0 {
		return false
	}
	plen := le.Uint32(h[4:])
	if plen > MaxPayload {
		return false
	}
	s := le.Uint64(h[8:])
	if s < r.seq || s-r.seq > uint64(skipped)/(chunkHdrLen+crcLen) {
		return false
	}
	switch h[2] {
	case chunkMark, chunkEvent:
		return plen == markLen
	case chunkStats:
		return plen == statsLen
	case chunkEnd:
		return plen == endLen
	case chunkHeader:
		return false
	case chunkSamples:
		return h[3]&flagCritical != 0 && plen >= samplesFixed
	}
	return true
}

// damaged records a skipped stretch [off, end) and makes every channel's
// next jump forward a gap of it.
func (r *Reader) damaged(off, end int64, chunks uint64, reason string, tail bool) {
	a := &r.acc
	a.DamageRegions++
	a.DamagedBytes += end - off
	a.ChunksLost += chunks
	idx := -1
	if len(a.Damage) < maxDamage {
		idx = len(a.Damage)
		a.Damage = append(a.Damage, Damage{Offset: off, End: end, Chunk: r.seq, Chunks: chunks, Reason: reason, Tail: tail})
	}
	for c := range r.chans {
		r.chans[c].hole, r.chans[c].holeIdx = true, idx
	}
}

// trailing records the bytes from off to the end of the file as trailing.
func (r *Reader) trailing(off int64, capture bool) {
	var head [len(fileMagic)]byte
	n, _ := r.read(head[:])
	if n == 0 {
		return
	}
	t := Trailing{Offset: off, Capture: capture || (n == len(head) && head == fileMagic)}
	if fi, err := r.stat(); err == nil && fi.Size() >= off {
		t.Bytes = fi.Size() - off
	} else {
		rest := int64(len(r.back) - r.bpos)
		r.back, r.bpos = r.back[:0], 0
		m, _ := io.Copy(io.Discard, r.br)
		t.Bytes = int64(n) + rest + m
	}
	r.acc.Trailing = t
}

func (r *Reader) stat() (os.FileInfo, error) {
	if r.file == nil {
		return nil, os.ErrInvalid
	}
	return r.file.Stat()
}

// read fills p from the pushed-back bytes, then the file. Like io.ReadFull
// it returns io.EOF only when nothing was read.
func (r *Reader) read(p []byte) (int, error) {
	n := 0
	if r.bpos < len(r.back) {
		n = copy(p, r.back[r.bpos:])
		r.bpos += n
		if r.bpos == len(r.back) {
			r.back, r.bpos = r.back[:0], 0
		}
	}
	var err error
	if n < len(p) {
		var m int
		m, err = io.ReadFull(r.br, p[n:])
		if n > 0 && errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		n += m
	}
	r.pos += int64(n)
	return n, err
}

func (r *Reader) readByte() (byte, error) {
	if r.bpos < len(r.back) {
		b := r.back[r.bpos]
		r.bpos++
		r.pos++
		return b, nil
	}
	b, err := r.br.ReadByte()
	if err == nil {
		r.pos++
	}
	return b, err
}

// unread pushes x back in front of what is still to be read.
func (r *Reader) unread(x []byte) {
	if len(x) == 0 {
		return
	}
	r.pos -= int64(len(x))
	if len(x) <= r.bpos {
		r.bpos -= len(x)
		copy(r.back[r.bpos:], x)
		return
	}
	nb := make([]byte, 0, len(x)+len(r.back)-r.bpos)
	nb = append(append(nb, x...), r.back[r.bpos:]...)
	r.back, r.bpos = nb, 0
}

// readPayload reads need bytes into r.buf and returns how many it got. It
// grows the buffer as bytes arrive, so a corrupt length costs memory only
// for data actually present.
func (r *Reader) readPayload(need int) (int, error) {
	r.buf = r.buf[:0]
	for len(r.buf) < need {
		step := min(need-len(r.buf), 1<<20)
		r.buf = slices.Grow(r.buf, step)
		n, err := r.read(r.buf[len(r.buf) : len(r.buf)+step])
		r.buf = r.buf[:len(r.buf)+n]
		if err != nil {
			if errors.Is(err, io.EOF) && len(r.buf) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return len(r.buf), err
		}
	}
	return len(r.buf), nil
}

func isEOF(err error) bool { return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) }

func (r *Reader) cut(off int64, reason string) error {
	return &DamageError{Offset: off, Chunk: r.seq, Reason: reason, Cut: true}
}

func (r *Reader) corrupt(off int64, reason string) error {
	return &DamageError{Offset: off, Chunk: r.seq, Reason: reason}
}
