package jls

import (
	"errors"
	"fmt"
	"io"
	"math"
)

// Readable reports whether FSR can decode s's samples: f32, f64, u1, u4 and
// u8 (what Joulescope files hold: current, voltage, power; current_range;
// the general-purpose inputs).
func (s *Signal) Readable() bool {
	switch s.Type() {
	case "f32", "f64", "u1", "u4", "u8":
		return true
	}
	return false
}

// FSR iterates over the samples of a fixed-rate signal in sample-id order,
// one data chunk at a time. It follows the level-1 index chunks, each of
// which lists the data chunks of a stretch of the signal (an omitted chunk
// — constant 1-, 4- or 8-bit data the writer did not store — is rebuilt
// from the summary that follows the index, as the upstream reader does),
// then the data chunks' own links past the last index (the tail a writer
// that did not close the file leaves unindexed).
type FSR struct {
	rd   *Reader
	s    *Signal
	err  error
	done bool

	idx      chunk   // the current level-1 index chunk
	offs     []int64 // its data chunk offsets
	idxStart int64   // sample id of its first data chunk
	k        int     // next entry of offs
	sum      []byte  // the summary payload after it
	tail     bool    // following data chunk links
	tailOff  int64   // next data chunk to read in the tail
	lastData int64   // the last data chunk read

	next    int64 // sample id after the last sample returned
	started bool
	// Cut is set when the samples ended because the file does: a link to
	// a chunk past its end (a writer that did not close it, a copy cut
	// short). Everything before was read.
	Cut  *Error
	buf  []byte
	ibuf []byte
	vals []float64
}

// FSR returns an iterator over s's samples.
func (rd *Reader) FSR(s *Signal) *FSR {
	it := &FSR{rd: rd, s: s}
	if !s.FSR || s.ID == 0 {
		it.err = fmt.Errorf("signal %d (%s) is not a fixed-rate signal", s.ID, s.Name)
	} else if !s.Readable() {
		it.err = fmt.Errorf("signal %d (%s): data type %s is not read", s.ID, s.Name, s.Type())
	}
	return it
}

// Next returns the next run of samples: the sample id of the first and
// the values (NaN where a floating-point file marks a missing sample). The
// slice is reused by the next call. Runs come in increasing sample-id
// order and never overlap; a run that starts after the end of the one
// before leaves a stretch the file does not have. io.EOF at the end.
func (it *FSR) Next() (int64, []float64, error) {
	if it.err != nil {
		return 0, nil, it.err
	}
	if it.done {
		return 0, nil, io.EOF
	}
	start, vals, err := it.next1()
	if err != nil {
		if err == io.EOF {
			it.done = true
		} else {
			it.err = err
		}
		return 0, nil, err
	}
	if it.started && start < it.next {
		it.err = errAt(it.lastData, "signal %d (%s): samples from id %d again, after %d", it.s.ID, it.s.Name, start, it.next)
		return 0, nil, it.err
	}
	it.started = true
	it.next = start + int64(len(vals))
	return start, vals, nil
}

func (it *FSR) next1() (int64, []float64, error) {
	s := it.s
	for !it.tail {
		if it.k < len(it.offs) {
			k := it.k
			it.k++
			start := it.idxStart + int64(k)*int64(s.SamplesPerData)
			if off := it.offs[k]; off != 0 {
				return it.data(off, start)
			}
			return it.omitted(start)
		}
		// The next level-1 index chunk.
		off := s.fsrHead[1]
		if it.idx.off != 0 {
			var err error
			if off, err = forward(it.idx); err != nil {
				return 0, nil, err
			}
		}
		if off == 0 {
			it.tail = true
			var err error
			if it.tailOff, err = it.tailStart(); err != nil {
				return 0, nil, it.cut(err)
			}
			break
		}
		if err := it.loadIndex(off); err != nil {
			var e *Error
			if errors.As(err, &e) && e.Cut {
				it.Cut = e // the index chain ends with the file: read on by the data links
				it.offs, it.k = nil, 0
				it.idx.off = 0
				it.tail = true
				if it.tailOff, err = it.tailStart(); err != nil {
					return 0, nil, it.cut(err)
				}
				break
			}
			return 0, nil, err
		}
	}
	if it.tailOff == 0 {
		return 0, nil, io.EOF
	}
	off := it.tailOff
	c, err := it.rd.header(off)
	if err != nil {
		return 0, nil, it.cut(err)
	}
	if it.tailOff, err = forward(c); err != nil {
		return 0, nil, err
	}
	return it.dataChunk(c, -1)
}

// tailStart is the data chunk after the last one read, by its link; with
// none read, the head of the data list.
func (it *FSR) tailStart() (int64, error) {
	if it.lastData == 0 {
		return it.s.fsrHead[0], nil
	}
	c, err := it.rd.header(it.lastData)
	if err != nil {
		return 0, err
	}
	return forward(c)
}

// cut turns an error that the file ends early into the end of the
// samples (Cut says so); other errors stand.
func (it *FSR) cut(err error) error {
	var e *Error
	if errors.As(err, &e) && e.Cut {
		it.Cut = e
		return io.EOF
	}
	return err
}

// loadIndex reads the level-1 index chunk at off and the summary chunk
// that must follow it.
func (it *FSR) loadIndex(off int64) error {
	s := it.s
	c, err := it.rd.header(off)
	if err != nil {
		return err
	}
	if c.tag != trackTag(trackFSR, chunkIndex) || c.meta != s.ID&0xff|1<<12 {
		return errAt(off, "signal %d: level-1 index link points at a chunk of tag 0x%02x, meta 0x%04x", s.ID, c.tag, c.meta)
	}
	p, err := it.rd.payload(c, it.ibuf)
	if err != nil {
		return err
	}
	it.ibuf = p
	if len(p) < 16 {
		return errAt(off, "index chunk of %d bytes", len(p))
	}
	n := int64(le.Uint32(p[8:]))
	if le.Uint16(p[12:]) != 64 || 16+8*n > int64(len(p)) {
		return errAt(off, "index chunk: %d entries of %d bits do not fit its %d bytes", n, le.Uint16(p[12:]), len(p))
	}
	it.idxStart = int64(le.Uint64(p))
	if it.started && it.idxStart < it.next {
		return errAt(off, "index chunk starts at sample id %d, before %d where the one before ended", it.idxStart, it.next)
	}
	it.offs = it.offs[:0]
	prev := it.lastData
	for k := int64(0); k < n; k++ {
		o := int64(le.Uint64(p[16+8*k:]))
		if o != 0 && (o <= prev || o >= off) {
			return errAt(off+chunkHeaderLen+16+8*k, "index entry %d points at byte %d: not after the data before it and before the index", k, o)
		}
		if o != 0 {
			prev = o
		}
		it.offs = append(it.offs, o)
	}
	it.idx, it.k = c, 0
	// The summary chunk comes right after its index.
	sc, err := it.rd.header(c.end())
	if err != nil {
		return err
	}
	if sc.tag != trackTag(trackFSR, chunkSummary) || sc.meta != c.meta {
		return errAt(sc.off, "index chunk at byte %d is not followed by its summary (tag 0x%02x)", off, sc.tag)
	}
	if it.sum, err = it.rd.payload(sc, it.sum); err != nil {
		return err
	}
	return nil
}

// data reads the data chunk at off, which the index says starts at start.
func (it *FSR) data(off, start int64) (int64, []float64, error) {
	c, err := it.rd.header(off)
	if err != nil {
		return 0, nil, err
	}
	return it.dataChunk(c, start)
}

func (it *FSR) dataChunk(c chunk, want int64) (int64, []float64, error) {
	s := it.s
	if c.tag != trackTag(trackFSR, chunkData) || c.meta != s.ID&0xff {
		return 0, nil, errAt(c.off, "signal %d: expected a data chunk, found tag 0x%02x meta 0x%04x", s.ID, c.tag, c.meta)
	}
	p, err := it.rd.payload(c, it.buf)
	if err != nil {
		return 0, nil, err
	}
	it.buf = p
	if len(p) < 16 {
		return 0, nil, errAt(c.off, "data chunk of %d bytes", len(p))
	}
	start := int64(le.Uint64(p))
	n := le.Uint32(p[8:])
	bits := le.Uint16(p[12:])
	switch {
	case want >= 0 && start != want:
		return 0, nil, errAt(c.off, "data chunk starts at sample id %d, its index says %d", start, want)
	case int(bits) != s.Bits():
		return 0, nil, errAt(c.off, "data chunk of %d-bit samples in a %s signal", bits, s.Type())
	case n > s.SamplesPerData:
		return 0, nil, errAt(c.off, "data chunk of %d samples, over the signal's %d per chunk", n, s.SamplesPerData)
	case 16+(int64(n)*int64(bits)+7)/8 > int64(len(p)):
		return 0, nil, errAt(c.off, "data chunk: %d samples of %d bits do not fit its %d bytes", n, bits, len(p))
	}
	it.lastData = c.off
	it.vals = decode(it.vals[:0], s.Type(), p[16:], int(n))
	return start, it.vals, nil
}

// omitted rebuilds a data chunk the writer left out because its samples
// were all one value: each level-1 summary entry's mean is that value.
func (it *FSR) omitted(start int64) (int64, []float64, error) {
	s := it.s
	if s.Bits() > 8 {
		return 0, nil, errAt(it.idx.off, "signal %d: index leaves out a data chunk of %s samples, which the format omits only for 1, 4 and 8 bits", s.ID, s.Type())
	}
	p := it.sum
	if len(p) < 16 || le.Uint16(p[12:]) != 128 {
		return 0, nil, errAt(it.idx.off, "signal %d: the summary after the index is not of f32 entries", s.ID)
	}
	sumStart := int64(le.Uint64(p))
	n := int64(le.Uint32(p[8:]))
	if 16+16*n > int64(len(p)) {
		return 0, nil, errAt(it.idx.off, "summary of %d entries does not fit its %d bytes", n, len(p))
	}
	per := int64(s.SampleDecimate)
	first := (start - sumStart) / per
	count := int64(s.SamplesPerData) / per
	if start < sumStart || (start-sumStart)%per != 0 || first+count > n {
		return 0, nil, errAt(it.idx.off, "signal %d: no summary entries for the omitted data chunk at sample id %d", s.ID, start)
	}
	it.vals = it.vals[:0]
	for e := first; e < first+count; e++ {
		mean := float64(math.Float32frombits(le.Uint32(p[16+16*e:])))
		v := math.Round(mean)
		for j := int64(0); j < per; j++ {
			it.vals = append(it.vals, v)
		}
	}
	return start, it.vals, nil
}

func decode(dst []float64, typ string, b []byte, n int) []float64 {
	switch typ {
	case "f32":
		for i := 0; i < n; i++ {
			dst = append(dst, float64(math.Float32frombits(le.Uint32(b[4*i:]))))
		}
	case "f64":
		for i := 0; i < n; i++ {
			dst = append(dst, math.Float64frombits(le.Uint64(b[8*i:])))
		}
	case "u1":
		for i := 0; i < n; i++ {
			dst = append(dst, float64(b[i>>3]>>(i&7)&1))
		}
	case "u4":
		for i := 0; i < n; i++ {
			dst = append(dst, float64(b[i>>1]>>(4*(i&1))&0x0f))
		}
	case "u8":
		for i := 0; i < n; i++ {
			dst = append(dst, float64(b[i]))
		}
	}
	return dst
}

// Summary is one summary chunk's entries: mean, σ, min and max of Per
// samples each, the first window starting at sample id Start.
type Summary struct {
	Start               int64
	Per                 int64
	Mean, Std, Min, Max []float64
}

// FirstSampleID returns the sample id of s's first sample from the header
// of its first level-1 index (or, with none, of its first data chunk)
// without reading sample data; ok is false for a signal without samples.
func (rd *Reader) FirstSampleID(s *Signal) (int64, bool, error) {
	off := s.fsrHead[1]
	tag := trackTag(trackFSR, chunkIndex)
	if off == 0 {
		off, tag = s.fsrHead[0], trackTag(trackFSR, chunkData)
	}
	if off == 0 {
		return 0, false, nil
	}
	c, err := rd.header(off)
	if err != nil {
		return 0, false, err
	}
	if c.tag != tag || c.meta&0xff != s.ID&0xff {
		return 0, false, errAt(off, "signal %d: head points at a chunk of tag 0x%02x", s.ID, c.tag)
	}
	p, err := rd.payload(c, nil)
	if err != nil {
		return 0, false, err
	}
	if len(p) < 16 {
		return 0, false, errAt(off, "chunk of %d bytes", len(p))
	}
	return int64(le.Uint64(p)), true, nil
}

// Per is how many samples one summary entry of level covers (level ≥ 1).
func (s *Signal) Per(level int) int64 {
	p := int64(s.SampleDecimate)
	for l := 2; l <= level; l++ {
		p *= int64(s.SummaryDecimate)
		if p > 1<<50 {
			return 0
		}
	}
	return p
}

// Levels is how many summary levels s has (0: none).
func (s *Signal) Levels() int {
	n := 0
	for l := 1; l < levels; l++ {
		if s.fsrHead[l] != 0 {
			n = l
		}
	}
	return n
}

// Summaries iterates over s's summary chunks of one level in order.
type Summaries struct {
	rd    *Reader
	s     *Signal
	level int
	off   int64
	buf   []byte
	sum   Summary
	err   error
}

// Summaries returns an iterator over s's summary entries of level.
func (rd *Reader) Summaries(s *Signal, level int) *Summaries {
	it := &Summaries{rd: rd, s: s, level: level}
	if level < 1 || level >= levels {
		it.err = fmt.Errorf("summary level %d: JLS has 1 … %d", level, levels-1)
	} else {
		it.off = s.fsrHead[level]
	}
	return it
}

// Next returns the next summary chunk's entries (reused by the next call),
// or io.EOF.
func (it *Summaries) Next() (*Summary, error) {
	if it.err != nil {
		return nil, it.err
	}
	if it.off == 0 {
		return nil, io.EOF
	}
	c, err := it.rd.header(it.off)
	if err != nil {
		it.err = err
		return nil, err
	}
	meta := uint16(it.s.ID&0xff) | uint16(it.level)<<12
	if c.tag != trackTag(trackFSR, chunkIndex) || c.meta != meta {
		it.err = errAt(c.off, "signal %d level %d: index link points at tag 0x%02x meta 0x%04x", it.s.ID, it.level, c.tag, c.meta)
		return nil, it.err
	}
	if it.off, err = forward(c); err != nil {
		it.err = err
		return nil, err
	}
	sc, err := it.rd.header(c.end())
	if err == nil && (sc.tag != trackTag(trackFSR, chunkSummary) || sc.meta != meta) {
		err = errAt(sc.off, "index chunk at byte %d is not followed by its summary", c.off)
	}
	if err == nil {
		it.buf, err = it.rd.payload(sc, it.buf)
	}
	if err != nil {
		it.err = err
		return nil, err
	}
	p := it.buf
	if len(p) < 16 {
		it.err = errAt(sc.off, "summary chunk of %d bytes", len(p))
		return nil, it.err
	}
	n := int64(le.Uint32(p[8:]))
	w := int64(le.Uint16(p[12:]))
	if (w != 128 && w != 256) || 16+n*w/8 > int64(len(p)) {
		it.err = errAt(sc.off, "summary chunk: %d entries of %d bits do not fit its %d bytes", n, w, len(p))
		return nil, it.err
	}
	s := &it.sum
	s.Start, s.Per = int64(le.Uint64(p)), it.s.Per(it.level)
	s.Mean, s.Std, s.Min, s.Max = s.Mean[:0], s.Std[:0], s.Min[:0], s.Max[:0]
	for e := int64(0); e < n; e++ {
		var x [4]float64
		for j := range x {
			if w == 128 {
				x[j] = float64(math.Float32frombits(le.Uint32(p[16+16*e+4*int64(j):])))
			} else {
				x[j] = math.Float64frombits(le.Uint64(p[16+32*e+8*int64(j):]))
			}
		}
		s.Mean, s.Std, s.Min, s.Max = append(s.Mean, x[0]), append(s.Std, x[1]), append(s.Min, x[2]), append(s.Max, x[3])
	}
	return s, nil
}
