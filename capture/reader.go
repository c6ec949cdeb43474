package capture

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/bits"
	"os"
	"slices"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// Reader streams a capture chunk by chunk. Its memory is bounded by the
// largest chunk (at most MaxPayload); buffers are reused from record to
// record — see Record for what that means for callers.
//
// A damaged chunk costs that chunk only: the Reader skips it, hunts for the
// next intact chunk (chunk magic, a plausible header, a matching CRC and a
// sequence number that fits the bytes skipped), records the stretch in its
// Account and delivers the samples it hid as gaps with reason GapDamaged.
// Samples chunks whose indices overlap, run backwards or restart are not
// delivered as samples (KindRejected) and are counted. Next returns a
// *DamageError (matching ErrTruncated) only where nothing intact follows:
// a file cut short, or damage that runs to its end.
type Reader struct {
	br     *bufio.Reader
	file   *os.File // set by Open: sizes trailing bytes without reading them
	closer io.Closer
	h      Header
	nch    int
	pos    int64  // offset of the next byte to read (back first, then br)
	back   []byte // bytes pushed back by a resynchronisation, read before br
	bpos   int
	seq    uint64 // sequence number the next chunk should have
	hdr    [chunkHdrLen]byte
	buf    []byte // payload + CRC of the current chunk
	vbuf   []units.Volts
	ibuf   []units.Amps
	block  meter.Block
	rblock meter.Block // the rejected part of an overlapping chunk
	sum    Summary
	ios    []IOEvent
	skip   bool
	major  int // the file's format major version (1 or 2)
	counts countsDecoder
	done   bool
	err    error
	queue  []Record // records of the current chunk not yet returned
	qi     int
	chans  []chanState
	acc    Account
	// firstChunk is the offset of the chunk after the header; ix is set by
	// UseIndex (index.go).
	firstChunk int64
	ix         *readerIndex
	// ver checks summaries against the samples decoded (verify.go); nil
	// until the first samples are decoded.
	ver *verifier
	cal []Calibration // scratch of the calibration check
}

// chanState is what the Reader knows of one channel's timeline.
type chanState struct {
	seen    bool
	next    uint64 // index after the last delivered sample or gap
	restart bool   // the index restarted at 0: later chunks are another run
	hole    bool   // damage since this channel's last chunk: a jump forward is a damaged gap
	holeIdx int    // the Damage entry it belongs to (-1: past maxDamage)
}

// Open opens the capture at path and reads its header.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	r, err := newReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r.file, r.closer = f, f
	return r, nil
}

// NewReader reads a capture from src, starting with its header.
func NewReader(src io.Reader) (*Reader, error) { return newReader(src) }

func newReader(src io.Reader) (*Reader, error) {
	r := &Reader{br: bufio.NewReaderSize(src, 64<<10)}
	var pre [preambleLen]byte
	n, err := r.read(pre[:])
	if m := min(n, len(fileMagic)); string(pre[:m]) != string(fileMagic[:m]) {
		return nil, fmt.Errorf("%w: file magic % x, want % x", ErrNotCapture, pre[:m], fileMagic[:m])
	}
	if err != nil {
		if isEOF(err) {
			return nil, &DamageError{Offset: int64(n), Reason: fmt.Sprintf("file is %d bytes, shorter than its %d-byte preamble", n, preambleLen), Cut: true}
		}
		return nil, fmt.Errorf("capture: reading preamble: %w", err)
	}
	major := le.Uint16(pre[8:])
	if major < 1 || int(major) > readMajor {
		return nil, &VersionError{Major: int(major), Minor: int(le.Uint16(pre[10:])), Reads: readMajor}
	}
	r.major = int(major)
	off := r.pos
	typ, p, err := r.chunk()
	if err != nil {
		var de *DamageError
		if errors.As(err, &de) && !de.Cut {
			de.Reason = "the header chunk is damaged, so nothing in the file can be interpreted: " + de.Reason
		}
		return nil, err
	}
	if typ != chunkHeader {
		return nil, r.corrupt(off, fmt.Sprintf("first chunk has type 0x%02x, want the header (0x%02x)", typ, chunkHeader))
	}
	base := off + chunkHdrLen
	if err := DuplicateKey(p, base); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(p, &r.h); err != nil {
		return nil, &HeaderError{Field: "(header JSON)", Offset: base, Reason: err.Error()}
	}
	legacyCurrentSense(&r.h.Meter)
	if err := ValidateHeader(&r.h, p, base); err != nil {
		return nil, err
	}
	r.nch = len(r.h.Channels)
	r.chans = make([]chanState, r.nch)
	r.seq++
	r.firstChunk = r.pos
	return r, nil
}

// Header returns the capture's metadata.
func (r *Reader) Header() Header { return r.h }

// Version returns the file's format major version: 1 or 2.
func (r *Reader) Version() int { return r.major }

// Complete reports whether the end chunk was seen: the writer closed the
// capture cleanly.
func (r *Reader) Complete() bool { return r.done }

// Offset returns the byte offset of the next chunk.
func (r *Reader) Offset() int64 { return r.pos }

// Account returns what the Reader found wrong so far: damaged stretches
// skipped, samples rejected, bytes after the end chunk. It is final once
// Next has returned an error (io.EOF included).
func (r *Reader) Account() Account {
	a := r.acc
	a.Damage = slices.Clone(a.Damage)
	return a
}

// SkipSamples makes Next pass over sample chunks without decoding their
// values, for scans that need only summaries and events. The chunks are
// still read and checked, so a skipping scan finds the same damage, gaps and
// rejections as a full one; only KindSamples and KindRejected records are
// left out.
func (r *Reader) SkipSamples(skip bool) { r.skip = skip }

// Close closes the file opened by Open; it does nothing for NewReader.
func (r *Reader) Close() error {
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}

// Next returns the next record: io.EOF after the end chunk, a *DamageError
// (matching ErrTruncated, and ErrCorrupt unless it is a plain cut) where the
// capture stops being readable with nothing intact after it, including a
// capture that ends without its end chunk.
func (r *Reader) Next() (Record, error) {
	for {
		if r.qi < len(r.queue) {
			rec := r.queue[r.qi]
			r.qi++
			return rec, nil
		}
		r.queue, r.qi = r.queue[:0], 0
		if r.err != nil {
			return Record{}, r.err
		}
		if r.done {
			return Record{}, io.EOF
		}
		if r.ix != nil && !r.ix.done {
			rec, ok, err := r.nextIndexed()
			if err != nil {
				r.err = err
				return Record{}, err
			}
			if ok {
				return rec, nil
			}
			continue
		}
		off := r.pos
		typ, p, err := r.chunk()
		if err != nil {
			var de *DamageError
			switch {
			case errors.Is(err, errStale):
				// Intact but already read (a repeated stretch): skip it.
				r.damaged(off, r.pos, 0, err.Error(), false)
			case errors.Is(err, errAppended):
				r.err = r.cut(off, fmt.Sprintf("file ends after chunk %d without an end chunk, and another capture begins at byte %d", int64(r.seq)-1, off))
				r.trailing(off, true)
			case !errors.As(err, &de):
				r.err = err // an I/O error
			case !r.resync(off, de):
				if r.err == nil {
					r.err = de
				}
			}
			continue
		}
		rec, ok, err := r.decode(off, typ, p)
		if errors.Is(err, ErrVersion) {
			r.err = fmt.Errorf("capture chunk %d at byte %d: %w", r.seq, off, err)
			continue
		}
		r.seq++
		if err != nil {
			// The CRC matched, so the chunk is what was written, and what was
			// written is impossible: skip it and say so.
			r.acc.Invalid++
			r.damaged(off, r.pos, 1, fmt.Sprintf("invalid chunk (CRC intact): %v", err), false)
			continue
		}
		if typ == chunkEnd {
			r.done = true
			r.acc.EndSeen, r.acc.Written = true, le.Uint64(p[8:])
			r.trailing(r.pos, false)
			return Record{}, io.EOF
		}
		if ok && r.ix != nil && rec.Kind == KindSummary && rec.Summary.Level < r.ix.minLevel {
			continue // an indexed reader hands out the levels its index lists, after it too
		}
		if ok {
			rec.Offset = off
			return rec, nil
		}
		for i := range r.queue {
			r.queue[i].Offset = off
		}
	}
}

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

// decode turns a verified payload into a record. ok is false for chunks
// that carry no record of their own (end, unknown non-critical types) or
// whose records went to r.queue (samples, gaps).
func (r *Reader) decode(off int64, typ byte, p []byte) (rec Record, ok bool, err error) {
	switch typ {
	case chunkSamples:
		return rec, false, r.samples(p)
	case chunkSummary:
		if err := r.decodeSummary(p); err != nil {
			return rec, false, err
		}
		return Record{Kind: KindSummary, Summary: &r.sum}, r.verified(off), nil
	case chunkLevels:
		if r.major < 2 {
			break // not part of format 1: an unknown chunk there
		}
		if err := r.decodeLevels(p); err != nil {
			return rec, false, err
		}
		return Record{Kind: KindSummary, Summary: &r.sum}, r.verified(off), nil
	case chunkGap:
		if len(p) < gapFixed || len(p) != gapFixed+int(le.Uint16(p[4:])) {
			return rec, false, fmt.Errorf("gap payload of %d bytes", len(p))
		}
		g := meter.Gap{Channel: int(int32(le.Uint32(p))), Start: le.Uint64(p[8:]), Count: le.Uint64(p[16:]), Reason: string(p[gapFixed:])}
		if g.Channel < -1 || g.Channel >= r.nch {
			return rec, false, fmt.Errorf("gap for channel %d, header has %d", g.Channel, r.nch)
		}
		if g.Start > math.MaxUint64-g.Count {
			return rec, false, fmt.Errorf("gap of %d samples from index %d runs past the largest sample index", g.Count, g.Start)
		}
		for c := range r.chans {
			if g.Channel == -1 || g.Channel == c {
				r.hole(c, g.Start)
				r.chans[c].next = max(r.chans[c].next, g.Start+g.Count)
				r.chans[c].seen = true
			}
		}
		r.queue = append(r.queue, Record{Kind: KindGap, Gap: g})
		return rec, false, nil
	case chunkMark:
		if len(p) != markLen {
			return rec, false, fmt.Errorf("mark payload of %d bytes, want %d", len(p), markLen)
		}
		rec.Kind = KindMark
		rec.Mark = meter.MarkEcho{ID: le.Uint32(p), Synthetic: le.Uint32(p[4:])&1 != 0,
			HostSent: hostclock.Time(le.Uint64(p[8:])), HostRecv: hostclock.Time(le.Uint64(p[16:])), MeterIndex: le.Uint64(p[24:])}
		return rec, true, nil
	case chunkEvent:
		if len(p) != eventLen {
			return rec, false, fmt.Errorf("event payload of %d bytes, want %d", len(p), eventLen)
		}
		rec.Kind = KindEvent
		rec.Event = meter.Event{Kind: meter.EventKind(p[0]), Port: int(int32(le.Uint32(p[4:]))),
			Index: le.Uint64(p[8:]), Value: int64(le.Uint64(p[16:])), HostRecv: hostclock.Time(le.Uint64(p[24:]))}
		return rec, true, nil
	case chunkStats:
		if len(p) != statsLen {
			return rec, false, fmt.Errorf("stats payload of %d bytes, want %d", len(p), statsLen)
		}
		rec.Kind = KindStats
		rec.Host = hostclock.Time(le.Uint64(p))
		rec.Stats = meter.Stats{Frames: le.Uint64(p[8:]), CRCErrors: le.Uint64(p[16:]), Resyncs: le.Uint64(p[24:]),
			BytesDiscarded: le.Uint64(p[32:]), SamplesLost: le.Uint64(p[40:])}
		rec.StatsCounters = StatsCountersV10
		return rec, true, nil
	case chunkStatsX:
		if len(p) < statsXMin || len(p)%8 != 0 {
			return rec, false, fmt.Errorf("stats-extended payload of %d bytes, want %d or more, a multiple of 8", len(p), statsXMin)
		}
		rec.Kind = KindStats
		rec.Host = hostclock.Time(le.Uint64(p))
		// An older writer's chunk carries fewer counters: the rest stay
		// 0 and StatsCounters says they are unknown.
		n := (len(p) - 8) / 8
		for i, x := range statsCounters(&rec.Stats) {
			if i < n {
				*x = le.Uint64(p[8+8*i:])
			}
		}
		rec.StatsCounters = min(n, len(statsCounters(&rec.Stats)))
		return rec, true, nil
	case chunkIO:
		ios, err := r.decodeIO(p)
		return Record{Kind: KindIO, IO: ios}, true, err
	case chunkState:
		if len(p) < stateFixed || len(p) != stateFixed+int(le.Uint16(p[14:])) {
			return rec, false, fmt.Errorf("state payload of %d bytes", len(p))
		}
		rec.Kind = KindState
		rec.State = StateEvent{Host: hostclock.Time(le.Uint64(p)), Port: int(int32(le.Uint32(p[8:]))),
			Kind: StateKind(p[12]), Value: string(p[stateFixed:])}
		return rec, true, nil
	case chunkEnd:
		if len(p) != endLen {
			return rec, false, fmt.Errorf("end payload of %d bytes, want %d", len(p), endLen)
		}
		return rec, false, nil
	case chunkHeader:
		return rec, false, fmt.Errorf("a second header chunk")
	case chunkIndex:
		if r.major >= 2 {
			return rec, false, nil // for seeking readers (UseIndex); a scan has no use for it
		}
	}
	if r.hdr[3]&flagCritical != 0 {
		return rec, false, fmt.Errorf("%w: critical chunk type 0x%02x unknown to this reader", ErrVersion, typ)
	}
	return rec, false, nil
}

// verified checks the summary just decoded (chunk at off) against the
// samples decoded so far and says whether to hand it out: not when it
// disagrees (the samples win; the Account names the chunk).
func (r *Reader) verified(off int64) bool {
	if r.ver == nil {
		return true
	}
	m, bad := r.ver.check(&r.sum, off, r.seq)
	if !bad {
		return true
	}
	if m.Channel < len(r.h.Channels) {
		m.Name = r.h.Channels[m.Channel].Name()
	}
	if r.acc.Mismatches++; len(r.acc.Mismatched) < maxMismatches {
		r.acc.Mismatched = append(r.acc.Mismatched, m)
	}
	return false
}

// hole queues a damaged gap for channel c if damage came between its last
// chunk and this one, which starts at index start.
func (r *Reader) hole(c int, start uint64) {
	cs := &r.chans[c]
	if !cs.hole {
		return
	}
	cs.hole = false
	if !cs.seen || start <= cs.next {
		return
	}
	n := start - cs.next
	r.queue = append(r.queue, Record{Kind: KindGap, Gap: meter.Gap{Channel: c, Start: cs.next, Count: n, Reason: GapDamaged}})
	r.acc.SamplesLost += n
	if cs.holeIdx >= 0 {
		r.acc.Damage[cs.holeIdx].Samples += n
	}
}

// samples checks a samples chunk against its channel's timeline and queues
// what it yields: a damaged gap before it, the rejected part, the samples.
func (r *Reader) samples(p []byte) error {
	if len(p) < samplesFixed {
		return fmt.Errorf("samples payload of %d bytes", len(p))
	}
	ch, enc, n, start := int(le.Uint16(p)), p[2], int(le.Uint32(p[4:])), le.Uint64(p[8:])
	if ch >= r.nch {
		return fmt.Errorf("samples for channel %d, header has %d", ch, r.nch)
	}
	var want int
	switch enc {
	case encFloat32:
		want = samplesFixed + 8*n
	case encInt16:
		want = samplesFixed + 8 + 4*n
		if len(p) >= samplesFixed+8 {
			d := p[samplesFixed:]
			c := Calibration{VGain: float64(math.Float32frombits(le.Uint32(d))), IGain: float64(math.Float32frombits(le.Uint32(d[4:])))}
			if err := checkCalibration([]Calibration{c}, r.h.Channels[ch]); err != nil {
				return err
			}
		}
	case encCounts:
		if r.major < 2 {
			return fmt.Errorf("%w: sample encoding %d in a format 1 file", ErrVersion, enc)
		}
		var err error
		if r.cal, _, _, _, err = parseCounts(p, n, r.cal); err != nil {
			return err
		}
		if err := checkCalibration(r.cal, r.h.Channels[ch]); err != nil {
			return err
		}
		want = len(p)
	default:
		return fmt.Errorf("%w: sample encoding %d", ErrVersion, enc)
	}
	if n > MaxPayload || len(p) != want {
		return fmt.Errorf("samples payload of %d bytes for %d samples in encoding %d, want %d", len(p), n, enc, want)
	}
	if start > math.MaxUint64-uint64(n) {
		return fmt.Errorf("%d samples from index %d run past the largest sample index", n, start)
	}
	// Decode before touching the channel's timeline: an encoding-2 chunk
	// whose streams do not decode is invalid and must leave it as it was.
	var v []units.Volts
	var i []units.Amps
	if !r.skip && n > 0 {
		if cap(r.vbuf) < n {
			r.vbuf, r.ibuf = make([]units.Volts, n), make([]units.Amps, n)
		}
		v, i = r.vbuf[:n], r.ibuf[:n]
		d := p[samplesFixed:]
		// The loops below walk fixed-size slices so the compiler can drop the
		// per-sample bounds checks: decoding is most of what reading costs.
		switch enc {
		case encCounts:
			if err := decodeCounts(&r.counts, p, n, v, i); err != nil {
				return err
			}
		case encFloat32:
			decodeF32(v, d[:4*n])
			decodeF32(i, d[4*n:8*n])
		default:
			lv := float64(math.Float32frombits(le.Uint32(d)))
			li := float64(math.Float32frombits(le.Uint32(d[4:])))
			d = d[8:]
			decodeI16(v, d[:2*n], lv)
			decodeI16(i, d[2*n:4*n], li)
		}
	}
	end := start + uint64(n)
	r.acc.Read += uint64(n)
	cs := &r.chans[ch]
	var rej Reject
	var k0 uint64 // samples of the chunk rejected from its start
	switch {
	case !cs.seen:
	case cs.restart:
		rej = RejectRestart
	case start >= cs.next:
	case start == 0:
		rej, cs.restart = RejectRestart, true
	case end <= cs.next:
		rej = RejectBackward
	default:
		rej, k0 = RejectOverlap, cs.next-start
	}
	if rej != 0 && rej != RejectOverlap {
		k0 = uint64(n)
	}
	if rej != 0 {
		r.acc.Rejected[rej].Chunks++
		r.acc.Rejected[rej].Samples += k0
	}
	if rej == 0 {
		r.hole(ch, start)
	}
	if rej == 0 || rej == RejectOverlap {
		cs.seen, cs.hole, cs.next = true, false, end
	}
	if r.skip || n == 0 {
		return nil
	}
	if r.ver == nil {
		r.ver = newVerifier(r.nch)
	}
	if rej == RejectRestart || rej == RejectBackward {
		r.ver.spoil(ch) // the same indices, other samples: summaries cannot be matched
	} else {
		verifyAdd(r.ver, ch, start+k0, v[k0:], i[k0:])
	}
	if k0 > 0 {
		r.rblock = meter.Block{Channel: ch, Start: start, V: v[:k0], I: i[:k0]}
		r.queue = append(r.queue, Record{Kind: KindRejected, Block: &r.rblock, Rejected: rej})
	}
	if k0 < uint64(n) {
		r.block = meter.Block{Channel: ch, Start: start + k0, V: v[k0:], I: i[k0:]}
		r.queue = append(r.queue, Record{Kind: KindSamples, Block: &r.block})
	}
	return nil
}

// decodeF32 fills dst with the little-endian float32s in src (4 B each).
func decodeF32[T ~float64](dst []T, src []byte) {
	src = src[:4*len(dst)]
	for k := range dst {
		s := src[4*k : 4*k+4 : 4*k+4]
		dst[k] = T(math.Float32frombits(uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24))
	}
}

// decodeI16 fills dst with the little-endian int16 counts in src (2 B each)
// times lsb, rounded to float32 as the float32 encoding would store them.
func decodeI16[T ~float64](dst []T, src []byte, lsb float64) {
	src = src[:2*len(dst)]
	for k := range dst {
		s := src[2*k : 2*k+2 : 2*k+2]
		dst[k] = T(float32(float64(int16(uint16(s[0])|uint16(s[1])<<8)) * lsb))
	}
}

func (r *Reader) decodeSummary(p []byte) error {
	if len(p) < summaryFixed {
		return fmt.Errorf("summary payload of %d bytes", len(p))
	}
	s := &r.sum
	s.Channel, s.Per, s.Start = int(le.Uint16(p)), le.Uint32(p[4:]), le.Uint64(p[8:])
	s.Level, s.StdW, s.Count = 0, s.StdW[:0:0], s.Count[:0:0]
	n := int(le.Uint32(p[16:]))
	if s.Channel >= r.nch {
		return fmt.Errorf("summary for channel %d, header has %d", s.Channel, r.nch)
	}
	if s.Per == 0 {
		return fmt.Errorf("summary with 0 samples per point")
	}
	if n > MaxPayload || len(p) != summaryFixed+12*n {
		return fmt.Errorf("summary payload of %d bytes for %d points", len(p), n)
	}
	if cap(s.MinW) < n {
		s.MinW, s.MaxW, s.MeanW = make([]float32, n), make([]float32, n), make([]float32, n)
	}
	s.MinW, s.MaxW, s.MeanW = s.MinW[:n], s.MaxW[:n], s.MeanW[:n]
	d := p[summaryFixed:]
	for k := range n {
		s.MinW[k] = math.Float32frombits(le.Uint32(d[4*k:]))
		s.MaxW[k] = math.Float32frombits(le.Uint32(d[4*(n+k):]))
		s.MeanW[k] = math.Float32frombits(le.Uint32(d[4*(2*n+k):]))
	}
	return nil
}

func (r *Reader) decodeIO(p []byte) ([]IOEvent, error) {
	if len(p) < ioFixed {
		return nil, fmt.Errorf("I/O payload of %d bytes", len(p))
	}
	n := int(le.Uint32(p))
	if n > MaxPayload || len(p) != ioFixed+ioEventLen*n {
		return nil, fmt.Errorf("I/O payload of %d bytes for %d events", len(p), n)
	}
	r.ios = r.ios[:0]
	for k := range n {
		e := p[ioFixed+ioEventLen*k:]
		r.ios = append(r.ios, IOEvent{Port: int(int32(le.Uint32(e))), Op: Op(e[4]), Err: e[5]&1 != 0,
			Offset: int64(le.Uint64(e[8:])), Size: int32(le.Uint32(e[16:])),
			Issue: hostclock.Time(le.Uint64(e[24:])), Complete: hostclock.Time(le.Uint64(e[32:]))})
	}
	return r.ios, nil
}
