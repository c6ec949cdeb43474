package capture

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// The index chunk (format 2.1, docs/capture-format.md §Index): a directory of
// the chunks an overview needs — every chunk except samples chunks and summary
// levels below indexMinLevel — so that plot can seek to them instead of
// reading a whole day of samples. The writer appends one every IndexEvery
// bytes of file and one just before the end chunk; each names the one before
// it, so a reader finds the last one near the end of the file and walks back.

const (
	chunkIndex = 0x13

	indexFixed    = 32 // prev, first, samples (u64 each), flags, min level, channels (u16), entries (u32)
	indexEntryLen = 24 // offset, sequence (u64 each), type, level (u8 each), channel (u16), length (u32)

	// indexMinLevel: the writer lists summary levels from 2 on (windows of
	// 65 536 samples and more at the default SummaryPer): at 10 kS/s a day
	// of levels 2 and 3 is ~55 000 chunks for 4 channels, while levels 0 and
	// 1 would be millions — as slow to seek to one by one as a scan.
	indexMinLevel = 2

	// indexEvery is the default Options.IndexEvery: a capture cut by a
	// crash keeps an index of everything but its last few MiB.
	indexEvery = 4 << 20

	// maxIndexEntries makes the writer close a segment early (a payload of
	// at most ~3 MiB, far below MaxPayload).
	maxIndexEntries = 1 << 16

	// indexSearch bounds how far back from the end of the file a reader
	// looks for the last index chunk.
	indexSearch = 4*indexEvery + 8<<20

	// indexFlagIrregular (index flags bit 0): a samples chunk in or before
	// this segment did not advance its channel (a reader would reject it);
	// a reader must not use the index, since it cannot count the rejection.
	indexFlagIrregular = 0x01
)

// Errors UseIndex and an indexed Next return.
var (
	// ErrNoIndex: the capture has no index a reader can use (format 1 or
	// 2.0, a crash before the first index, not a regular file). Scan it.
	ErrNoIndex = errors.New("capture has no index")
	// ErrIndex: the capture's index is damaged or does not match the chunks
	// it lists. Nothing it says is used; scan the capture (and say so).
	ErrIndex = errors.New("capture index unusable")
)

// IndexError says what is wrong with an index. It matches ErrIndex.
type IndexError struct {
	Offset int64 // the index chunk (or listed chunk) at fault
	Reason string
}

func (e *IndexError) Error() string {
	return fmt.Sprintf("capture index at byte %d: %s", e.Offset, e.Reason)
}

// Is makes errors.Is(err, ErrIndex) true.
func (e *IndexError) Is(target error) bool { return target == ErrIndex }

// indexEntry locates one listed chunk.
type indexEntry struct {
	off     int64
	seq     uint64
	typ     byte
	level   byte
	channel uint16
	plen    uint32
}

// indexPayload is one decoded index chunk.
type indexPayload struct {
	prev, first int64
	samples     uint64
	flags       byte
	minLevel    int
	chanNext    []uint64
	entries     []indexEntry
}

// decodeIndex parses an index payload for a capture of nch channels. It
// checks the payload's own consistency — lengths, entry order, types, the
// channel count — not the chunks it lists.
func decodeIndex(p []byte, nch int) (indexPayload, error) {
	var x indexPayload
	if len(p) < indexFixed {
		return x, fmt.Errorf("index payload of %d bytes, at least %d", len(p), indexFixed)
	}
	prev, first := le.Uint64(p), le.Uint64(p[8:])
	if prev > 1<<62 || first > 1<<62 {
		return x, fmt.Errorf("index offsets %d, %d out of range", prev, first)
	}
	x.prev, x.first, x.samples = int64(prev), int64(first), le.Uint64(p[16:])
	x.flags, x.minLevel = p[24], int(p[25])
	if x.flags&^indexFlagIrregular != 0 {
		return x, fmt.Errorf("index flags 0x%02x", x.flags)
	}
	if n := int(le.Uint16(p[26:])); n != nch {
		return x, fmt.Errorf("index for %d channels, header has %d", n, nch)
	}
	ne := int(le.Uint32(p[28:]))
	if ne > MaxPayload/indexEntryLen || len(p) != indexFixed+8*nch+indexEntryLen*ne {
		return x, fmt.Errorf("index payload of %d bytes for %d channels and %d entries", len(p), nch, ne)
	}
	d := p[indexFixed:]
	x.chanNext = make([]uint64, nch)
	for c := range nch {
		x.chanNext[c] = le.Uint64(d[8*c:])
	}
	d = d[8*nch:]
	x.entries = make([]indexEntry, ne)
	for k := range ne {
		e := d[indexEntryLen*k:]
		en := indexEntry{off: int64(le.Uint64(e) & (1<<62 - 1)), seq: le.Uint64(e[8:]), typ: e[16], level: e[17],
			channel: le.Uint16(e[18:]), plen: le.Uint32(e[20:])}
		if le.Uint64(e) >= 1<<62 {
			return x, fmt.Errorf("index entry %d: offset %d out of range", k, le.Uint64(e))
		}
		switch en.typ {
		case chunkHeader, chunkSamples, chunkEnd, chunkIndex:
			return x, fmt.Errorf("index entry %d lists a chunk of type 0x%02x", k, en.typ)
		case chunkLevels:
			if int(en.channel) >= nch || int(en.level) < x.minLevel {
				return x, fmt.Errorf("index entry %d: summary level %d of channel %d", k, en.level, en.channel)
			}
		}
		if en.plen > MaxPayload {
			return x, fmt.Errorf("index entry %d: payload length %d", k, en.plen)
		}
		if en.off < x.first {
			return x, fmt.Errorf("index entry %d at byte %d, before the segment's first chunk at %d", k, en.off, x.first)
		}
		if k > 0 {
			p := x.entries[k-1]
			if en.off < p.off+chunkHdrLen+int64(p.plen)+crcLen || en.seq <= p.seq {
				return x, fmt.Errorf("index entry %d (byte %d, chunk %d) does not follow entry %d (byte %d, chunk %d)", k, en.off, en.seq, k-1, p.off, p.seq)
			}
		}
		x.entries[k] = en
	}
	return x, nil
}

// noteChunk records the chunk just completed at pend[s:] for the next index
// chunk. Call with mu held, from end.
func (w *Writer) noteChunk(s int) {
	c := w.pend[s:]
	typ := c[2]
	p := c[chunkHdrLen : len(c)-crcLen]
	off := w.pendBase + int64(s)
	switch typ {
	case chunkHeader:
		w.idxFirst = off + int64(len(c))
		return
	case chunkIndex, chunkEnd:
		return
	case chunkSamples:
		ch, n, start := int(le.Uint16(p)), uint64(le.Uint32(p[4:])), le.Uint64(p[8:])
		if start < w.chanNext[ch] {
			w.idxIrregular = true
		}
		w.chanNext[ch] = start + n
		w.idxSamples += n
		return
	}
	var level byte
	var ch uint16
	if typ == chunkLevels {
		ch, level = le.Uint16(p), p[2]
		if level < indexMinLevel {
			return
		}
	}
	w.idx = append(w.idx, indexEntry{off: off, seq: le.Uint64(c[8:]), typ: typ, level: level, channel: ch, plen: uint32(len(p))})
}

// indexDue says whether flush should close the index segment now. Call
// with mu held.
func (w *Writer) indexDue(final bool) bool {
	if w.ver < 2 || w.opt.IndexEvery < 0 {
		return false
	}
	return final || w.pendBase+int64(len(w.pend))-w.idxFirst >= w.opt.IndexEvery || len(w.idx) >= maxIndexEntries
}

// writeIndex appends an index chunk for the chunks since the last one.
// Call with mu held, with every run closed.
func (w *Writer) writeIndex() {
	s := w.begin(chunkIndex, 0)
	off := w.pendBase + int64(s)
	var flags byte
	if w.idxIrregular {
		flags = indexFlagIrregular
	}
	w.pend = appendIndex(w.pend, &indexPayload{prev: w.lastIndex, first: w.idxFirst, samples: w.idxSamples,
		flags: flags, minLevel: indexMinLevel, chanNext: w.chanNext, entries: w.idx})
	w.end(s)
	w.lastIndex = off
	w.idxFirst = w.pendBase + int64(len(w.pend))
	w.idx = w.idx[:0]
}

// appendIndex appends the payload of an index chunk.
func appendIndex(b []byte, x *indexPayload) []byte {
	b = le.AppendUint64(b, uint64(x.prev))
	b = le.AppendUint64(b, uint64(x.first))
	b = le.AppendUint64(b, x.samples)
	b = append(b, x.flags, byte(x.minLevel))
	b = le.AppendUint16(b, uint16(len(x.chanNext)))
	b = le.AppendUint32(b, uint32(len(x.entries)))
	for _, n := range x.chanNext {
		b = le.AppendUint64(b, n)
	}
	for _, e := range x.entries {
		b = le.AppendUint64(b, uint64(e.off))
		b = le.AppendUint64(b, e.seq)
		b = append(b, e.typ, e.level)
		b = le.AppendUint16(b, e.channel)
		b = le.AppendUint32(b, e.plen)
	}
	return b
}

// IndexKinds says which listed chunks an indexed Reader reads (UseIndexOf).
type IndexKinds uint8

// What an indexed Reader reads. Gaps are read with either: they place the
// channels' timelines for the reading after the index.
const (
	// IndexSummaries: the summary levels.
	IndexSummaries IndexKinds = 1 << iota
	// IndexRecords: everything else listed (marks, events, gaps, stats,
	// I/O, state).
	IndexRecords
	// IndexAll is both.
	IndexAll = IndexSummaries | IndexRecords
)

// readerIndex is an indexed Reader's plan: the listed chunks in file order,
// then a sequential read from tailOff on.
type readerIndex struct {
	entries  []indexEntry
	next     int
	last     indexPayload // the last index chunk
	tailOff  int64        // the byte after the last index chunk
	tailSeq  uint64       // its sequence number + 1
	minLevel int
	kinds    IndexKinds
	done     bool
}

// UseIndex makes the Reader read through the capture's index: Next hands
// out the records of the chunks the index lists (marks, events, gaps,
// stats, I/O, state, summary levels from IndexMinLevel on) by seeking to
// each, then reads the chunks after the last index chunk in sequence as
// usual (the end chunk, or whatever a crash left). Samples chunks are not
// read at all, so neither samples nor the damage a samples chunk might
// hold are seen: an overview reader, not a checking one (report scans).
//
// Call it on a Reader from Open before the first Next. It returns an error
// matching ErrNoIndex when there is no index (the Reader is then unchanged
// and scans as before) and one matching ErrIndex when the index is damaged
// or inconsistent; Next returns an error matching ErrIndex when a chunk the
// index lists is not there intact. Either way nothing from the index is
// trusted: reopen and scan.
func (r *Reader) UseIndex() error { return r.UseIndexOf(IndexAll) }

// UseIndexOf is UseIndex reading only the listed chunks of the kinds k (a
// pass that wants only summaries need not seek to every mark); the chunks
// after the last index chunk are all read, as by UseIndex.
func (r *Reader) UseIndexOf(k IndexKinds) error {
	if r.file == nil {
		return fmt.Errorf("%w: not reading a file", ErrNoIndex)
	}
	if r.major < 2 {
		return fmt.Errorf("%w: format %d has none", ErrNoIndex, r.major)
	}
	if r.seq != 1 || r.pos != r.firstChunk || len(r.queue) > 0 || len(r.back) > 0 {
		return errors.New("capture: UseIndex after Next")
	}
	fi, err := r.file.Stat()
	if err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	size := fi.Size()
	lastOff, last, lastSeq, err := r.findLastIndex(size)
	if err != nil {
		return err
	}
	if last.flags&indexFlagIrregular != 0 {
		return &IndexError{Offset: lastOff, Reason: "samples chunks that do not advance their channel: only a scan accounts for them"}
	}
	// Walk back to the first index chunk; every link is checked.
	segs := []indexPayload{last}
	off, seq := lastOff, lastSeq
	for cur := last; cur.prev != 0; {
		if cur.prev >= off || len(segs) > int(size/(chunkHdrLen+indexFixed+crcLen)) {
			return &IndexError{Offset: off, Reason: fmt.Sprintf("previous index at byte %d is not before it", cur.prev)}
		}
		pseq, p, perr := r.chunkAt(cur.prev, chunkIndex)
		if perr != nil {
			return &IndexError{Offset: off, Reason: fmt.Sprintf("previous index at byte %d: %v", cur.prev, perr)}
		}
		prev, derr := decodeIndex(p, r.nch)
		if derr != nil {
			return &IndexError{Offset: cur.prev, Reason: derr.Error()}
		}
		if pseq >= seq || cur.first != cur.prev+chunkHdrLen+int64(len(p))+crcLen {
			return &IndexError{Offset: off, Reason: fmt.Sprintf("segment starts at byte %d, not after the previous index at %d (chunk %d)", cur.first, cur.prev, pseq)}
		}
		if prev.samples > cur.samples {
			return &IndexError{Offset: off, Reason: "sample count goes down"}
		}
		if err := checkEntries(&cur, off, seq, pseq); err != nil {
			return err
		}
		segs = append(segs, prev)
		cur, off, seq = prev, cur.prev, pseq
	}
	first := segs[len(segs)-1]
	if first.first != r.firstChunk {
		return &IndexError{Offset: off, Reason: fmt.Sprintf("first segment starts at byte %d, the first chunk is at %d", first.first, r.firstChunk)}
	}
	if err := checkEntries(&first, off, seq, 0); err != nil {
		return err
	}
	ix := &readerIndex{last: last, tailOff: lastOff + chunkHdrLen + int64(indexFixed+8*r.nch+indexEntryLen*len(last.entries)) + crcLen,
		tailSeq: lastSeq + 1, minLevel: last.minLevel, kinds: k}
	for k := len(segs) - 1; k >= 0; k-- {
		ix.entries = append(ix.entries, segs[k].entries...)
	}
	r.ix, r.skip = ix, true
	return nil
}

// checkEntries checks that the entries of the index chunk at off (sequence
// seq) lie in its segment, after the previous index chunk (sequence pseq).
func checkEntries(x *indexPayload, off int64, seq, pseq uint64) error {
	for k, e := range x.entries {
		if e.off+chunkHdrLen+int64(e.plen)+crcLen > off || e.seq >= seq || e.seq <= pseq {
			return &IndexError{Offset: off, Reason: fmt.Sprintf("entry %d (byte %d, chunk %d) lies outside its segment", k, e.off, e.seq)}
		}
	}
	return nil
}

// Indexed reports whether the Reader reads through the capture's index.
func (r *Reader) Indexed() bool { return r.ix != nil }

// IndexMinLevel is the finest summary level an indexed Reader hands out.
func (r *Reader) IndexMinLevel() int {
	if r.ix == nil {
		return 0
	}
	return r.ix.minLevel
}

// findLastIndex finds the last intact index chunk in the final indexSearch
// bytes of the file.
func (r *Reader) findLastIndex(size int64) (int64, indexPayload, uint64, error) {
	const step = 1 << 20
	pat := []byte{chunkMagic[0], chunkMagic[1], chunkIndex, 0}
	buf := make([]byte, step+chunkHdrLen)
	hi := size
	for hi > r.firstChunk && size-hi < indexSearch {
		lo := max(r.firstChunk, hi-step)
		n := int(min(hi-lo+chunkHdrLen, size-lo))
		m, err := r.file.ReadAt(buf[:n], lo)
		if m < n && err != nil {
			return 0, indexPayload{}, 0, fmt.Errorf("capture: reading at byte %d: %w", lo, err)
		}
		b := buf[:n]
		for end := int(hi - lo); end > 0; {
			k := bytes.LastIndex(b[:min(end+len(pat)-1, len(b))], pat)
			if k < 0 {
				break
			}
			end = k
			at := lo + int64(k)
			seq, p, err := r.chunkAt(at, chunkIndex)
			if err != nil {
				continue
			}
			x, err := decodeIndex(p, r.nch)
			if err != nil {
				return 0, x, 0, &IndexError{Offset: at, Reason: err.Error()}
			}
			return at, x, seq, nil
		}
		hi = lo
	}
	return 0, indexPayload{}, 0, fmt.Errorf("%w: no index chunk in its last %d MiB", ErrNoIndex, indexSearch>>20)
}

// chunkAt reads the chunk at off, which must be intact and of type typ, into
// r.hdr and r.buf, and returns its sequence number and payload.
func (r *Reader) chunkAt(off int64, typ byte) (uint64, []byte, error) {
	if _, err := r.file.ReadAt(r.hdr[:], off); err != nil {
		return 0, nil, err
	}
	h := r.hdr[:]
	if h[0] != chunkMagic[0] || h[1] != chunkMagic[1] || h[2] != typ || h[3]&^flagCritical != 0 {
		return 0, nil, fmt.Errorf("chunk header % x, want type 0x%02x", h[:4], typ)
	}
	plen := int(le.Uint32(h[4:]))
	if plen > MaxPayload {
		return 0, nil, fmt.Errorf("payload length %d", plen)
	}
	if cap(r.buf) < plen+crcLen {
		r.buf = make([]byte, plen+crcLen)
	}
	r.buf = r.buf[:plen+crcLen]
	if _, err := r.file.ReadAt(r.buf, off+chunkHdrLen); err != nil {
		if errors.Is(err, io.EOF) {
			return 0, nil, fmt.Errorf("file ends inside the chunk")
		}
		return 0, nil, err
	}
	crc := crc32.Update(crc32.Checksum(h, castagnoli), castagnoli, r.buf[:plen])
	if le.Uint32(r.buf[plen:]) != crc {
		return 0, nil, fmt.Errorf("CRC-32C 0x%08x, computed 0x%08x", le.Uint32(r.buf[plen:]), crc)
	}
	return le.Uint64(h[8:]), r.buf[:plen], nil
}

// chunkAtLen is chunkAt for a chunk whose payload length the index gives:
// one read instead of two.
func (r *Reader) chunkAtLen(off int64, typ byte, plen int) (uint64, []byte, error) {
	n := chunkHdrLen + plen + crcLen
	if cap(r.buf) < n {
		r.buf = make([]byte, n)
	}
	b := r.buf[:n]
	if m, err := r.file.ReadAt(b, off); m < n {
		if err == nil || errors.Is(err, io.EOF) {
			err = errors.New("file ends inside the chunk")
		}
		return 0, nil, err
	}
	h := b[:chunkHdrLen]
	if h[0] != chunkMagic[0] || h[1] != chunkMagic[1] || h[2] != typ || h[3]&^flagCritical != 0 || int(le.Uint32(h[4:])) != plen {
		return 0, nil, fmt.Errorf("chunk header % x, want type 0x%02x and a %d-byte payload", h[:8], typ, plen)
	}
	copy(r.hdr[:], h)
	if crc := crc32.Checksum(b[:chunkHdrLen+plen], castagnoli); le.Uint32(b[chunkHdrLen+plen:]) != crc {
		return 0, nil, fmt.Errorf("CRC-32C 0x%08x, computed 0x%08x", le.Uint32(b[chunkHdrLen+plen:]), crc)
	}
	return le.Uint64(h[8:]), b[chunkHdrLen : chunkHdrLen+plen], nil
}

// nextIndexed reads the next listed chunk; ok is false once the list is
// done and the Reader has moved on to the chunks after the last index.
func (r *Reader) nextIndexed() (rec Record, ok bool, err error) {
	ix := r.ix
	for ix.next < len(ix.entries) {
		e := ix.entries[ix.next]
		ix.next++
		want := IndexRecords
		switch e.typ {
		case chunkLevels:
			want = IndexSummaries
		case chunkGap:
			want = IndexAll
		}
		if ix.kinds&want == 0 {
			continue
		}
		seq, p, err := r.chunkAtLen(e.off, e.typ, int(e.plen))
		if err == nil && (seq != e.seq || len(p) != int(e.plen)) {
			err = fmt.Errorf("chunk %d of %d bytes, the index says chunk %d of %d", seq, len(p), e.seq, e.plen)
		}
		if err != nil {
			return rec, false, &IndexError{Offset: e.off, Reason: "listed chunk: " + err.Error()}
		}
		rec, ok, err := r.decode(e.off, e.typ, p)
		if err != nil {
			return rec, false, &IndexError{Offset: e.off, Reason: "listed chunk: " + err.Error()}
		}
		if e.typ == chunkLevels && r.sum.Level < ix.minLevel {
			continue
		}
		if ok {
			rec.Offset = e.off
			return rec, true, nil
		}
		if len(r.queue) > 0 {
			for i := range r.queue {
				r.queue[i].Offset = e.off
			}
			return Record{}, false, nil
		}
	}
	// The listed chunks are done: the channels stand where the last index
	// says, and reading goes on in sequence after it.
	for c, n := range ix.last.chanNext {
		cs := &r.chans[c]
		if n > 0 {
			cs.seen, cs.next = true, max(cs.next, n)
		}
	}
	r.acc.Read = ix.last.samples
	if _, err := r.file.Seek(ix.tailOff, io.SeekStart); err != nil {
		return rec, false, fmt.Errorf("capture: %w", err)
	}
	r.br.Reset(r.file)
	r.back, r.bpos = r.back[:0], 0
	r.pos, r.seq, ix.done = ix.tailOff, ix.tailSeq, true
	return rec, false, nil
}
