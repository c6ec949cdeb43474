package capture

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

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
	// memo shares the summary check's verdicts with the other passes of
	// a Passes (memo.go); its zero value does nothing.
	memo readerMemo
	cal  []Calibration // scratch of the calibration check
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
//
// A Reader of Passes that skips samples after its first Next no longer
// leaves its summary verdicts for the later passes (memo.go).
func (r *Reader) SkipSamples(skip bool) {
	r.skip = skip
	if skip && r.memo.mode == memoWrite {
		r.memo.mode = memoOff
	}
}

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
	if r.memo.m == nil {
		return r.next()
	}
	if r.memo.mode == memoUndecided {
		r.decideMemo()
	}
	rec, err := r.next()
	if err != nil {
		r.finishMemo(err)
	}
	return rec, err
}

func (r *Reader) next() (Record, error) {
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
