package capture

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// Reader streams a capture chunk by chunk. Its memory is bounded by the
// largest chunk (at most MaxPayload); buffers are reused from record to
// record — see Record for what that means for callers.
//
// Reading stops at the first chunk that is cut short, fails its CRC, is out
// of sequence or cannot be decoded: Next returns a *DamageError (matching
// ErrTruncated) after every record before it, and keeps returning it.
type Reader struct {
	br     *bufio.Reader
	file   *os.File // set by Open: lets SkipSamples seek
	closer io.Closer
	h      Header
	nch    int
	off    int64 // offset of the next chunk
	seq    uint64
	hdr    [chunkHdrLen]byte
	buf    []byte // payload + CRC of the current chunk
	block  meter.Block
	sum    Summary
	ios    []IOEvent
	skip   bool
	done   bool
	err    error
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
	n, err := io.ReadFull(r.br, pre[:])
	if m := min(n, len(fileMagic)); string(pre[:m]) != string(fileMagic[:m]) {
		return nil, fmt.Errorf("%w: file magic % x, want % x", ErrNotCapture, pre[:m], fileMagic[:m])
	}
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, &DamageError{Offset: int64(n), Reason: fmt.Sprintf("file is %d bytes, shorter than its %d-byte preamble", n, preambleLen), Cut: true}
		}
		return nil, fmt.Errorf("capture: reading preamble: %w", err)
	}
	if major, minor := le.Uint16(pre[8:]), le.Uint16(pre[10:]); major != VersionMajor {
		return nil, fmt.Errorf("%w: file is version %d.%d, this reader knows %d.x", ErrVersion, major, minor, VersionMajor)
	}
	r.off = preambleLen
	typ, p, err := r.chunk()
	if err != nil {
		return nil, err
	}
	if typ != chunkHeader {
		return nil, r.corrupt(r.off, fmt.Sprintf("first chunk has type 0x%02x, want the header (0x%02x)", typ, chunkHeader))
	}
	if err := json.Unmarshal(p, &r.h); err != nil {
		return nil, r.corrupt(r.off, "header JSON: "+err.Error())
	}
	if len(r.h.Channels) > 0xFFFF {
		return nil, r.corrupt(r.off, fmt.Sprintf("header lists %d channels, at most 65535", len(r.h.Channels)))
	}
	r.nch = len(r.h.Channels)
	r.advance(len(p))
	return r, nil
}

// Header returns the capture's metadata.
func (r *Reader) Header() Header { return r.h }

// Complete reports whether the end chunk was seen: the writer closed the
// capture cleanly.
func (r *Reader) Complete() bool { return r.done }

// Offset returns the byte offset of the next chunk.
func (r *Reader) Offset() int64 { return r.off }

// SkipSamples makes Next pass over sample chunks without reading, checking
// or decoding them (seeking when the Reader came from Open), for scans that
// need only summaries and events. Damage inside a skipped chunk goes
// unnoticed; a cut inside one is still reported.
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
// capture stops being readable, including a capture that ends without its
// end chunk.
func (r *Reader) Next() (Record, error) {
	for {
		if r.err != nil {
			return Record{}, r.err
		}
		if r.done {
			return Record{}, io.EOF
		}
		off := r.off
		if r.skip {
			skipped, err := r.skipSamples()
			if err != nil {
				r.err = err
				continue
			}
			if skipped {
				continue
			}
		}
		typ, p, err := r.chunk()
		if err != nil {
			r.err = err
			continue
		}
		rec, ok, err := r.decode(typ, p)
		if errors.Is(err, ErrVersion) {
			r.err = fmt.Errorf("capture chunk %d at byte %d: %w", r.seq, off, err)
			continue
		}
		if err != nil {
			r.err = r.corrupt(off, err.Error())
			continue
		}
		r.advance(len(p))
		if typ == chunkEnd {
			r.done = true
			return Record{}, io.EOF
		}
		if ok {
			rec.Offset = off
			return rec, nil
		}
	}
}

// chunk reads the chunk at r.off and checks its framing, CRC and sequence
// number. p aliases r.buf. It does not advance r.off (see advance).
func (r *Reader) chunk() (typ byte, p []byte, err error) {
	n, err := io.ReadFull(r.br, r.hdr[:])
	if err != nil {
		if n == 0 && errors.Is(err, io.EOF) {
			return 0, nil, r.cut(r.off, fmt.Sprintf("file ends after chunk %d without an end chunk", int64(r.seq)-1))
		}
		return 0, nil, r.readErr(r.off, n, "chunk header", err)
	}
	if err := r.checkHeader(); err != nil {
		return 0, nil, err
	}
	plen := int(le.Uint32(r.hdr[4:]))
	if err := r.readPayload(plen + crcLen); err != nil {
		return 0, nil, err
	}
	crc := crc32.Update(crc32.Checksum(r.hdr[:], castagnoli), castagnoli, r.buf[:plen])
	if got := le.Uint32(r.buf[plen:]); got != crc {
		return 0, nil, r.corrupt(r.off, fmt.Sprintf("CRC-32C 0x%08x, computed 0x%08x", got, crc))
	}
	if s := le.Uint64(r.hdr[8:]); s != r.seq {
		return 0, nil, r.corrupt(r.off, fmt.Sprintf("sequence number %d, want %d", s, r.seq))
	}
	return r.hdr[2], r.buf[:plen], nil
}

// readPayload reads need bytes into r.buf. It grows the buffer as bytes
// arrive, so a corrupt length costs memory only for data actually present.
func (r *Reader) readPayload(need int) error {
	r.buf = r.buf[:0]
	for len(r.buf) < need {
		step := min(need-len(r.buf), 1<<20)
		r.buf = slices.Grow(r.buf, step)
		n, err := io.ReadFull(r.br, r.buf[len(r.buf):len(r.buf)+step])
		r.buf = r.buf[:len(r.buf)+n]
		if err != nil {
			return r.readErr(r.off, chunkHdrLen+len(r.buf), "chunk payload", err)
		}
	}
	return nil
}

// checkHeader validates the chunk header in r.hdr before its payload is read.
func (r *Reader) checkHeader() error {
	if r.hdr[0] != chunkMagic[0] || r.hdr[1] != chunkMagic[1] {
		return r.corrupt(r.off, fmt.Sprintf("chunk magic % x, want % x", r.hdr[:2], chunkMagic[:]))
	}
	if plen := le.Uint32(r.hdr[4:]); plen > MaxPayload {
		return r.corrupt(r.off, fmt.Sprintf("payload length %d exceeds the %d maximum", plen, MaxPayload))
	}
	return nil
}

// advance moves past the chunk just read, whose payload had plen bytes.
func (r *Reader) advance(plen int) {
	r.off += int64(chunkHdrLen + plen + crcLen)
	r.seq++
}

// skipSamples passes over the next chunk if it holds samples.
func (r *Reader) skipSamples() (bool, error) {
	h, err := r.br.Peek(chunkHdrLen)
	if err != nil || h[2] != chunkSamples {
		return false, nil // chunk() reports the cut or reads the chunk
	}
	copy(r.hdr[:], h)
	if err := r.checkHeader(); err != nil {
		return false, err
	}
	if s := le.Uint64(r.hdr[8:]); s != r.seq {
		return false, r.corrupt(r.off, fmt.Sprintf("sequence number %d, want %d", s, r.seq))
	}
	plen := int(le.Uint32(r.hdr[4:]))
	total := chunkHdrLen + plen + crcLen
	if buffered := r.br.Buffered(); r.file != nil && total > buffered {
		// Seek past what bufio has not read yet, then check the file is
		// long enough to hold what was skipped.
		r.br.Discard(buffered)
		pos, err := r.file.Seek(int64(total-buffered), io.SeekCurrent)
		if err == nil {
			var fi os.FileInfo
			if fi, err = r.file.Stat(); err == nil && pos > fi.Size() {
				return false, r.cut(r.off, fmt.Sprintf("samples chunk of %d bytes runs past the end of the file (%d bytes)", total, fi.Size()))
			}
		}
		if err != nil {
			return false, fmt.Errorf("capture: skipping samples at byte %d: %w", r.off, err)
		}
		r.br.Reset(r.file)
	} else if n, err := r.br.Discard(total); err != nil {
		return false, r.readErr(r.off, n, "samples chunk", err)
	}
	r.advance(plen)
	return true, nil
}

func (r *Reader) cut(off int64, reason string) error {
	return &DamageError{Offset: off, Chunk: r.seq, Reason: reason, Cut: true}
}

func (r *Reader) corrupt(off int64, reason string) error {
	return &DamageError{Offset: off, Chunk: r.seq, Reason: reason}
}

// readErr turns a short read of what into a cut; other I/O errors pass
// through with the offset.
func (r *Reader) readErr(off int64, got int, what string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return r.cut(off, fmt.Sprintf("file ends %d bytes into the %s", got, what))
	}
	return fmt.Errorf("capture: reading chunk %d at byte %d: %w", r.seq, off, err)
}

// decode turns a verified payload into a record. ok is false for chunks
// that carry no record (end, unknown non-critical types).
func (r *Reader) decode(typ byte, p []byte) (rec Record, ok bool, err error) {
	switch typ {
	case chunkSamples:
		return Record{Kind: KindSamples, Block: &r.block}, true, r.decodeSamples(p)
	case chunkSummary:
		return Record{Kind: KindSummary, Summary: &r.sum}, true, r.decodeSummary(p)
	case chunkGap:
		rec.Kind = KindGap
		if len(p) < gapFixed || len(p) != gapFixed+int(le.Uint16(p[4:])) {
			return rec, false, fmt.Errorf("gap payload of %d bytes", len(p))
		}
		g := &rec.Gap
		g.Channel = int(int32(le.Uint32(p)))
		if g.Channel < -1 || g.Channel >= r.nch {
			return rec, false, fmt.Errorf("gap for channel %d, header has %d", g.Channel, r.nch)
		}
		g.Start, g.Count, g.Reason = le.Uint64(p[8:]), le.Uint64(p[16:]), string(p[gapFixed:])
		return rec, true, nil
	case chunkMark:
		if len(p) != markLen {
			return rec, false, fmt.Errorf("mark payload of %d bytes, want %d", len(p), markLen)
		}
		rec.Kind = KindMark
		rec.Mark = meter.MarkEcho{ID: le.Uint32(p), Synthetic: le.Uint32(p[4:])&1 != 0,
			HostSent: int64(le.Uint64(p[8:])), HostRecv: int64(le.Uint64(p[16:])), MeterIndex: le.Uint64(p[24:])}
		return rec, true, nil
	case chunkEvent:
		if len(p) != eventLen {
			return rec, false, fmt.Errorf("event payload of %d bytes, want %d", len(p), eventLen)
		}
		rec.Kind = KindEvent
		rec.Event = meter.Event{Kind: meter.EventKind(p[0]), Port: int(int32(le.Uint32(p[4:]))),
			Index: le.Uint64(p[8:]), Value: int64(le.Uint64(p[16:])), HostRecv: int64(le.Uint64(p[24:]))}
		return rec, true, nil
	case chunkStats:
		if len(p) != statsLen {
			return rec, false, fmt.Errorf("stats payload of %d bytes, want %d", len(p), statsLen)
		}
		rec.Kind = KindStats
		rec.Host = int64(le.Uint64(p))
		rec.Stats = meter.Stats{Frames: le.Uint64(p[8:]), CRCErrors: le.Uint64(p[16:]), Resyncs: le.Uint64(p[24:]),
			BytesDiscarded: le.Uint64(p[32:]), SamplesLost: le.Uint64(p[40:])}
		return rec, true, nil
	case chunkStatsX:
		if len(p) < statsXMin || len(p)%8 != 0 {
			return rec, false, fmt.Errorf("stats-extended payload of %d bytes, want %d or more, a multiple of 8", len(p), statsXMin)
		}
		rec.Kind = KindStats
		rec.Host = int64(le.Uint64(p))
		for i, x := range statsCounters(&rec.Stats) {
			*x = le.Uint64(p[8+8*i:])
		}
		return rec, true, nil
	case chunkIO:
		ios, err := r.decodeIO(p)
		return Record{Kind: KindIO, IO: ios}, true, err
	case chunkState:
		if len(p) < stateFixed || len(p) != stateFixed+int(le.Uint16(p[14:])) {
			return rec, false, fmt.Errorf("state payload of %d bytes", len(p))
		}
		rec.Kind = KindState
		rec.State = StateEvent{Host: int64(le.Uint64(p)), Port: int(int32(le.Uint32(p[8:]))),
			Kind: StateKind(p[12]), Value: string(p[stateFixed:])}
		return rec, true, nil
	case chunkEnd:
		if len(p) != endLen {
			return rec, false, fmt.Errorf("end payload of %d bytes, want %d", len(p), endLen)
		}
		return rec, false, nil
	case chunkHeader:
		return rec, false, fmt.Errorf("a second header chunk")
	}
	if r.hdr[3]&flagCritical != 0 {
		return rec, false, fmt.Errorf("%w: critical chunk type 0x%02x unknown to this reader", ErrVersion, typ)
	}
	return rec, false, nil
}

func (r *Reader) decodeSamples(p []byte) error {
	if len(p) < samplesFixed {
		return fmt.Errorf("samples payload of %d bytes", len(p))
	}
	ch, enc, n := int(le.Uint16(p)), p[2], int(le.Uint32(p[4:]))
	if ch >= r.nch {
		return fmt.Errorf("samples for channel %d, header has %d", ch, r.nch)
	}
	var want int
	switch enc {
	case encFloat32:
		want = samplesFixed + 8*n
	case encInt16:
		want = samplesFixed + 8 + 4*n
	default:
		return fmt.Errorf("%w: sample encoding %d", ErrVersion, enc)
	}
	if n > MaxPayload || len(p) != want {
		return fmt.Errorf("samples payload of %d bytes for %d samples in encoding %d, want %d", len(p), n, enc, want)
	}
	b := &r.block
	b.Channel, b.Start = ch, le.Uint64(p[8:])
	if cap(b.V) < n {
		b.V, b.I = make([]units.Volts, n), make([]units.Amps, n)
	}
	b.V, b.I = b.V[:n], b.I[:n]
	d := p[samplesFixed:]
	// The loops below walk fixed-size slices so the compiler can drop the
	// per-sample bounds checks: decoding is most of what reading costs.
	if enc == encFloat32 {
		decodeF32(b.V, d[:4*n])
		decodeF32(b.I, d[4*n:8*n])
		return nil
	}
	lv := float64(math.Float32frombits(le.Uint32(d)))
	li := float64(math.Float32frombits(le.Uint32(d[4:])))
	d = d[8:]
	decodeI16(b.V, d[:2*n], lv)
	decodeI16(b.I, d[2*n:4*n], li)
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
			Issue: int64(le.Uint64(e[24:])), Complete: int64(le.Uint64(e[32:]))})
	}
	return r.ios, nil
}
