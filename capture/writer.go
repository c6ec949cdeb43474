package capture

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/meter"
)

var le = binary.LittleEndian

// flushBytes makes a writer fed faster than real time (a file decoded
// unpaced) write before FlushEvery so its memory stays bounded.
const flushBytes = 1 << 20

// Writer appends records to a capture. It buffers in memory and writes a
// group of chunks at least every Options.FlushEvery, fsyncing at least every
// Options.SyncEvery, from a background goroutine; Close stops it.
//
// Locking: mu guards everything in memory (runs, summaries, pend); wmu
// serialises writes to out and owns wbuf. Lock order is wmu, then mu, so the
// sample path (mu only) never waits for a disk write or an fsync.
type Writer struct {
	mu      sync.Mutex
	nch     int
	per     uint64
	runs    []run
	sums    []summaryAcc // format 1
	levels  []chanLevels // format 2
	ver     int
	enc     countEncoder
	cnt32V  []int32 // scratch for encoding 2
	cnt32I  []int32
	cal     [1]Calibration
	gainV   []float64 // per channel, the header's LSBs (encoding 2)
	gainI   []float64
	lsbV    []float32 // per channel, 0 = unknown: no int16 encoding
	lsbI    []float32
	cntV    []int16 // scratch for the int16 encoding
	cntI    []int16
	ioPend  []IOEvent
	pend    []byte // encoded chunks not yet handed to the disk
	seq     uint64
	samples uint64
	// The index segment being gathered (format 2, index.go): pendBase is
	// the file offset of pend[0].
	pendBase     int64
	idx          []indexEntry
	idxFirst     int64
	idxSamples   uint64
	idxIrregular bool
	chanNext     []uint64
	lastIndex    int64
	retx         bool  // the meter's link retransmits: stats-extended always written
	err          error // sticky: the first write failure
	closed       bool

	wmu      sync.Mutex
	out      io.Writer
	file     *os.File // nil when writing to a plain io.Writer
	name     string
	wbuf     []byte
	off      int64 // bytes durably handed to out
	lastSync time.Time
	unsynced bool

	opt  Options
	now  func() hostclock.Time // hostclock.Now; tests pin it for byte-exact fixtures
	stop chan struct{}
	done chan struct{}
}

// run is the open, not yet encoded, stretch of consecutive samples of one
// channel. Its slices are reused from flush to flush.
type run struct {
	start uint64
	v, i  []float32
}

// ErrReplaced: the capture's name no longer names the file the Writer
// wrote (a program that ignores the capture's lock removed, renamed or
// replaced it while it was recorded). What was recorded is not where the
// caller will look for it.
var ErrReplaced = errors.New("capture removed or replaced while it was recorded")

// Create makes a new capture file at path and writes its header. It fails
// if path exists, unless opt.Overwrite is set, and never writes through a
// symbolic link or over one of opt.Inputs. The capture is written in place
// (no temporary file): it must be readable under its name after kill -9.
// It is locked while the Writer is open (outfile.CreateInPlace): another
// idlewatt that would write it — a second record, with or without
// --overwrite — is refused with outfile.ErrBusy, naming this process.
func Create(path string, h Header, opt Options) (*Writer, error) {
	f, err := outfile.CreateInPlace(path, outfile.Options{Overwrite: opt.Overwrite, Inputs: opt.Inputs})
	if err != nil {
		if errors.Is(err, outfile.ErrRefused) {
			return nil, fmt.Errorf("capture %w", err)
		}
		return nil, fmt.Errorf("capture: %w", err)
	}
	w, err := newWriter(f, f, path, h, opt)
	if err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// NewWriter writes a capture to out. If out has a Sync() error method it is
// called every SyncEvery and on Close. Close does not close out.
func NewWriter(out io.Writer, h Header, opt Options) (*Writer, error) {
	return newWriter(out, nil, "(stream)", h, opt)
}

func newWriter(out io.Writer, f *os.File, name string, h Header, opt Options) (*Writer, error) {
	opt = opt.withDefaults()
	if opt.Version != 1 && opt.Version != 2 {
		return nil, fmt.Errorf("capture: format version %d: this idlewatt writes 1 and 2", opt.Version)
	}
	if err := ValidateHeader(&h, nil, 0); err != nil {
		return nil, fmt.Errorf("capture: refusing to write an invalid header: %w", err)
	}
	hj, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("capture: encoding header: %w", err)
	}
	if len(hj) > MaxPayload {
		return nil, fmt.Errorf("capture: header is %d bytes, at most %d", len(hj), MaxPayload)
	}
	w := &Writer{
		nch:  len(h.Channels),
		retx: h.Meter.ProtocolVersion >= 2,
		per:  uint64(opt.SummaryPer),
		runs: make([]run, len(h.Channels)),
		ver:  opt.Version,
		lsbV: make([]float32, len(h.Channels)),
		lsbI: make([]float32, len(h.Channels)),
		out:  out, file: f, name: name,
		opt:      opt,
		now:      hostclock.Now,
		chanNext: make([]uint64, len(h.Channels)),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	if w.ver == 1 {
		w.sums = make([]summaryAcc, len(h.Channels))
	} else {
		w.levels = make([]chanLevels, len(h.Channels))
		for c := range w.levels {
			w.levels[c] = newChanLevels(w.per)
		}
	}
	w.gainV, w.gainI = make([]float64, len(h.Channels)), make([]float64, len(h.Channels))
	if !opt.Float32Only {
		for c, ch := range h.Channels {
			w.gainV[c], w.gainI[c] = float64(ch.VoltLSB), float64(ch.CurrentLSB)
			w.lsbV[c], w.lsbI[c] = float32(ch.VoltLSB), float32(ch.CurrentLSB)
		}
	}
	w.pend = append(w.pend, fileMagic[:]...)
	major, minor := uint16(VersionMajor), uint16(VersionMinor)
	if w.ver == 1 {
		major, minor = 1, 1
	}
	w.pend = le.AppendUint16(w.pend, major)
	w.pend = le.AppendUint16(w.pend, minor)
	w.pend = le.AppendUint32(w.pend, 0)
	s := w.begin(chunkHeader, 0)
	w.pend = append(w.pend, hj...)
	w.end(s)
	if err := w.flush(true, false); err != nil {
		return nil, err
	}
	go w.loop()
	return w, nil
}

// loop writes what is buffered every FlushEvery and fsyncs every SyncEvery.
func (w *Writer) loop() {
	defer close(w.done)
	t := time.NewTicker(w.opt.FlushEvery)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			if w.flush(false, false) != nil {
				return // sticky; the next caller sees it
			}
		}
	}
}

// begin starts a chunk of type t in pend and returns its offset there.
func (w *Writer) begin(t, flags byte) int {
	s := len(w.pend)
	w.pend = append(w.pend, chunkMagic[0], chunkMagic[1], t, flags, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	return s
}

// end completes the chunk begun at s: length, sequence number, CRC.
func (w *Writer) end(s int) {
	c := w.pend[s:]
	le.PutUint32(c[4:], uint32(len(c)-chunkHdrLen))
	le.PutUint64(c[8:], w.seq)
	w.seq++
	w.pend = le.AppendUint32(w.pend, crc32.Checksum(c, castagnoli))
	if w.ver >= 2 {
		w.noteChunk(s)
	}
}

// check returns the reason the writer cannot take records. Call with mu held.
func (w *Writer) check() error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return ErrClosed
	}
	return nil
}

// Samples buffers a block; it copies b, so the driver may reuse it. It does
// not allocate once the per-channel buffers have grown to a flush's worth.
func (w *Writer) Samples(b *meter.Block) error {
	w.mu.Lock()
	if err := w.check(); err != nil {
		w.mu.Unlock()
		return err
	}
	if b.Channel < 0 || b.Channel >= w.nch {
		w.mu.Unlock()
		return fmt.Errorf("capture: samples for channel %d, header has %d channels", b.Channel, w.nch)
	}
	if len(b.V) != len(b.I) {
		w.mu.Unlock()
		return fmt.Errorf("capture: block of channel %d has %d voltages but %d currents", b.Channel, len(b.V), len(b.I))
	}
	r := &w.runs[b.Channel]
	if len(r.v) > 0 && b.Start != r.start+uint64(len(r.v)) {
		w.closeRun(b.Channel)
	}
	// A run's worth at a time: append the values, then feed their powers
	// to the summaries (format 2: a window's stretch at a time).
	for k := 0; k < len(b.V); {
		if len(r.v) == 0 {
			r.start = b.Start + uint64(k)
		}
		m := min(len(b.V)-k, maxRunSamples-len(r.v))
		at := len(r.v)
		for _, x := range b.V[k : k+m] {
			r.v = append(r.v, float32(x))
		}
		for _, x := range b.I[k : k+m] {
			r.i = append(r.i, float32(x))
		}
		if w.ver == 1 {
			for j, v := range r.v[at:] {
				w.addPower(b.Channel, b.Start+uint64(k+j), v*r.i[at+j])
			}
		} else {
			w.addPowers2(b.Channel, b.Start+uint64(k), r.v[at:], r.i[at:])
		}
		k += m
		if len(r.v) >= maxRunSamples {
			w.closeRun(b.Channel)
		}
	}
	w.samples += uint64(len(b.V))
	big := len(w.pend) >= flushBytes
	w.mu.Unlock()
	if big {
		return w.flush(false, false)
	}
	return nil
}

// closeRun encodes channel c's open run into pend. Call with mu held.
func (w *Writer) closeRun(c int) {
	r := &w.runs[c]
	n := len(r.v)
	if n == 0 {
		return
	}
	if w.ver >= 2 && w.gainV[c] > 0 && w.gainI[c] > 0 {
		// The LSB in double precision (as the hub driver multiplies), else
		// rounded to float32 (as format 1 stored it).
		var okV, okI bool
		gv, gi := w.gainV[c], w.gainI[c]
		if w.cnt32V, okV = toCounts32(w.cnt32V, r.v, gv); !okV {
			gv = float64(float32(gv))
			w.cnt32V, okV = toCounts32(w.cnt32V, r.v, gv)
		}
		if okV {
			if w.cnt32I, okI = toCounts32(w.cnt32I, r.i, gi); !okI {
				gi = float64(float32(gi))
				w.cnt32I, okI = toCounts32(w.cnt32I, r.i, gi)
			}
		}
		if okV && okI {
			w.cal[0] = Calibration{VGain: gv, IGain: gi}
			s := w.begin(chunkSamples, flagCritical)
			w.pend = w.enc.appendCountsChunk(w.pend, c, r.start, w.cal[:], w.cnt32V, w.cnt32I, nil)
			w.end(s)
			r.v, r.i = r.v[:0], r.i[:0]
			return
		}
	}
	enc := byte(encFloat32)
	if w.ver == 1 && w.lsbV[c] > 0 && w.lsbI[c] > 0 {
		var okV, okI bool
		w.cntV, okV = toCounts(w.cntV, r.v, w.lsbV[c])
		if okV {
			w.cntI, okI = toCounts(w.cntI, r.i, w.lsbI[c])
		}
		if okV && okI {
			enc = encInt16
		}
	}
	s := w.begin(chunkSamples, flagCritical)
	w.pend = le.AppendUint16(w.pend, uint16(c))
	w.pend = append(w.pend, enc, 0)
	w.pend = le.AppendUint32(w.pend, uint32(n))
	w.pend = le.AppendUint64(w.pend, r.start)
	if enc == encInt16 {
		w.pend = appendF32(w.pend, w.lsbV[c])
		w.pend = appendF32(w.pend, w.lsbI[c])
		w.pend = appendCounts(w.pend, w.cntV)
		w.pend = appendCounts(w.pend, w.cntI)
	} else {
		for _, x := range r.v {
			w.pend = appendF32(w.pend, x)
		}
		for _, x := range r.i {
			w.pend = appendF32(w.pend, x)
		}
	}
	w.end(s)
	r.v, r.i = r.v[:0], r.i[:0]
}

// Gap records missing samples. It closes the channel's open run first so a
// reader sees samples, gap and later samples in order.
func (w *Writer) Gap(g meter.Gap) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.check(); err != nil {
		return err
	}
	if g.Channel < -1 || g.Channel >= w.nch {
		return fmt.Errorf("capture: gap for channel %d, header has %d channels", g.Channel, w.nch)
	}
	if g.Channel == -1 {
		for c := range w.runs {
			w.closeRun(c)
		}
	} else {
		w.closeRun(g.Channel)
	}
	reason := g.Reason
	if len(reason) > 0xFFFF {
		reason = reason[:0xFFFF]
	}
	s := w.begin(chunkGap, 0)
	w.pend = le.AppendUint32(w.pend, uint32(int32(g.Channel)))
	w.pend = le.AppendUint16(w.pend, uint16(len(reason)))
	w.pend = le.AppendUint16(w.pend, 0)
	w.pend = le.AppendUint64(w.pend, g.Start)
	w.pend = le.AppendUint64(w.pend, g.Count)
	w.pend = append(w.pend, reason...)
	w.end(s)
	return nil
}

// Mark records a clock mark echo.
func (w *Writer) Mark(m meter.MarkEcho) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.check(); err != nil {
		return err
	}
	var flags uint32
	if m.Synthetic {
		flags = 1
	}
	s := w.begin(chunkMark, 0)
	w.pend = le.AppendUint32(w.pend, m.ID)
	w.pend = le.AppendUint32(w.pend, flags)
	w.pend = le.AppendUint64(w.pend, uint64(m.HostSent))
	w.pend = le.AppendUint64(w.pend, uint64(m.HostRecv))
	w.pend = le.AppendUint64(w.pend, m.MeterIndex)
	w.end(s)
	return nil
}

// Event records a meter event.
func (w *Writer) Event(e meter.Event) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.check(); err != nil {
		return err
	}
	s := w.begin(chunkEvent, 0)
	w.pend = append(w.pend, byte(e.Kind), 0, 0, 0)
	w.pend = le.AppendUint32(w.pend, uint32(int32(e.Port)))
	w.pend = le.AppendUint64(w.pend, e.Index)
	w.pend = le.AppendUint64(w.pend, uint64(e.Value))
	w.pend = le.AppendUint64(w.pend, uint64(e.HostRecv))
	w.end(s)
	return nil
}

// IO buffers completed I/O events; they are written in batches.
func (w *Writer) IO(evs ...IOEvent) error {
	w.mu.Lock()
	if err := w.check(); err != nil {
		w.mu.Unlock()
		return err
	}
	for _, e := range evs {
		w.ioPend = append(w.ioPend, e)
		if len(w.ioPend) >= maxIOBatch {
			w.closeIO()
		}
	}
	big := len(w.pend) >= flushBytes
	w.mu.Unlock()
	if big {
		return w.flush(false, false)
	}
	return nil
}

// closeIO encodes the buffered I/O events as one chunk. Call with mu held.
func (w *Writer) closeIO() {
	if len(w.ioPend) == 0 {
		return
	}
	s := w.begin(chunkIO, 0)
	w.pend = le.AppendUint32(w.pend, uint32(len(w.ioPend)))
	w.pend = le.AppendUint32(w.pend, 0)
	for _, e := range w.ioPend {
		var flags byte
		if e.Err {
			flags = 1
		}
		w.pend = le.AppendUint32(w.pend, uint32(int32(e.Port)))
		w.pend = append(w.pend, byte(e.Op), flags, 0, 0)
		w.pend = le.AppendUint64(w.pend, uint64(e.Offset))
		w.pend = le.AppendUint32(w.pend, uint32(e.Size))
		w.pend = le.AppendUint32(w.pend, 0)
		w.pend = le.AppendUint64(w.pend, uint64(e.Issue))
		w.pend = le.AppendUint64(w.pend, uint64(e.Complete))
	}
	w.end(s)
	w.ioPend = w.ioPend[:0]
}

// State records a host state event.
func (w *Writer) State(e StateEvent) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.check(); err != nil {
		return err
	}
	// The I/O completed before this event precedes it in the file: a
	// reader taking records in file order sees a DevSlp probe read before
	// the note or pin edge the rig recorded after it (the batch would
	// otherwise wait for the next flush, behind every state record of the
	// interval).
	w.closeIO()
	v := e.Value
	if len(v) > 0xFFFF {
		v = v[:0xFFFF]
	}
	s := w.begin(chunkState, 0)
	w.pend = le.AppendUint64(w.pend, uint64(e.Host))
	w.pend = le.AppendUint32(w.pend, uint32(int32(e.Port)))
	w.pend = append(w.pend, byte(e.Kind), 0)
	w.pend = le.AppendUint16(w.pend, uint16(len(v)))
	w.pend = append(w.pend, v...)
	w.end(s)
	return nil
}

// Stats records the meter's cumulative link counters, stamped with the
// host clock.
func (w *Writer) Stats(st meter.Stats) error { return w.StatsAt(w.now(), st) }

// StatsAt is Stats stamped with host (ns) instead of the clock: for tools
// that rewrite a capture (idlewatt repair).
func (w *Writer) StatsAt(host hostclock.Time, st meter.Stats) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.check(); err != nil {
		return err
	}
	now := uint64(host)
	s := w.begin(chunkStats, 0)
	w.pend = le.AppendUint64(w.pend, now)
	for _, x := range [...]uint64{st.Frames, st.CRCErrors, st.Resyncs, st.BytesDiscarded, st.SamplesLost} {
		w.pend = le.AppendUint64(w.pend, x)
	}
	w.end(s)
	// The counters added later go in a chunk of their own, which readers
	// of 1.0 skip; only when one of them is non-zero, so a clean capture
	// is byte for byte what 1.0 wrote — or when the meter's link
	// retransmits (hub protocol v2), so its recovered and refused
	// counters read 0, not unknown.
	if st.Duplicates|st.Restarts|st.BadLines|st.FirstBadLine|st.FirstBadByte|st.Recovered|st.Refused != 0 || w.retx {
		s := w.begin(chunkStatsX, 0)
		w.pend = le.AppendUint64(w.pend, now)
		for _, x := range statsCounters(&st) {
			w.pend = le.AppendUint64(w.pend, *x)
		}
		w.end(s)
	}
	return nil
}

// statsCounters lists meter.Stats' counters in stats-extended order
// (docs/capture-format.md); new ones are appended, never inserted.
func statsCounters(st *meter.Stats) []*uint64 {
	return []*uint64{&st.Frames, &st.CRCErrors, &st.Resyncs, &st.BytesDiscarded, &st.SamplesLost,
		&st.Duplicates, &st.Restarts, &st.BadLines, &st.FirstBadLine, &st.FirstBadByte,
		&st.Recovered, &st.Refused}
}

// Counts of meter.Stats counters a stats record carries (Record.StatsCounters).
const (
	StatsCountersV10  = 5  // a stats chunk
	StatsCountersV11  = 10 // stats-extended as 1.1 wrote it
	StatsCountersRetx = 12 // since recovered and refused (hub protocol v2 retransmission)
)

// Flush writes everything buffered and fsyncs it.
func (w *Writer) Flush() error { return w.flush(true, false) }

// flush encodes open runs, summaries and I/O batches, hands pend to the
// disk, and fsyncs if sync is set or SyncEvery has passed. final also closes
// the summaries' last partial points and appends the end chunk.
func (w *Writer) flush(sync, final bool) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	w.mu.Lock()
	if w.err != nil {
		w.mu.Unlock()
		return w.err
	}
	for c := range w.runs {
		w.closeRun(c)
	}
	for c := range w.sums {
		if final {
			w.sums[c].finish()
		}
		w.writeSummary(c)
	}
	for c := range w.levels {
		for l := range levels {
			if final {
				w.finishLevel(c, l)
			}
			w.writeLevel(c, l)
		}
	}
	w.closeIO()
	if w.indexDue(final) {
		w.writeIndex()
	}
	if final {
		s := w.begin(chunkEnd, 0)
		w.pend = le.AppendUint64(w.pend, uint64(w.now()))
		w.pend = le.AppendUint64(w.pend, w.samples)
		w.end(s)
	}
	w.pendBase += int64(len(w.pend))
	w.pend, w.wbuf = w.wbuf[:0], w.pend
	w.mu.Unlock()

	err := w.write(w.wbuf)
	if err == nil && w.unsynced && (sync || time.Since(w.lastSync) >= w.opt.SyncEvery) {
		err = w.sync()
	}
	if err != nil {
		w.mu.Lock()
		w.err = err
		w.mu.Unlock()
	}
	return err
}

// write hands b to out. Call with wmu held. On failure it cuts a file back to
// the last whole chunk group, so the capture ends cleanly even on a full
// disk, and says what happened.
func (w *Writer) write(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	n, err := w.out.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		if w.file != nil {
			_ = w.file.Truncate(w.off) // best effort; the reader copes either way
		}
		if errors.Is(err, syscall.ENOSPC) {
			return fmt.Errorf("%w: capture %s at byte %d (everything before is readable): %w", ErrDiskFull, w.name, w.off, err)
		}
		return fmt.Errorf("capture %s: writing at byte %d: %w", w.name, w.off, err)
	}
	w.off += int64(n)
	w.unsynced = true
	return nil
}

func (w *Writer) sync() error {
	w.lastSync = time.Now()
	w.unsynced = false
	s, ok := w.out.(interface{ Sync() error })
	if !ok {
		return nil
	}
	if err := s.Sync(); err != nil {
		if errors.Is(err, syscall.ENOSPC) {
			return fmt.Errorf("%w: capture %s: fsync: %w", ErrDiskFull, w.name, err)
		}
		return fmt.Errorf("capture %s: fsync: %w", w.name, err)
	}
	return nil
}

// Close writes what is buffered and the end chunk, fsyncs, and closes the
// file. After a write failure it still closes the file and returns that
// failure. Close is idempotent.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	close(w.stop)
	<-w.done
	err := w.flush(true, true)
	if w.file != nil {
		if err == nil {
			err = w.stillNamed()
		}
		if cerr := w.file.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("capture %s: %w", w.name, cerr)
		}
	}
	return err
}

// stillNamed checks that the capture's name still names the file written.
func (w *Writer) stillNamed() error {
	fi, err := w.file.Stat()
	if err != nil {
		return nil // cannot tell; the close will say if the file is bad
	}
	li, err := os.Lstat(w.name)
	if err == nil && os.SameFile(fi, li) {
		return nil
	}
	what := "removed"
	if err == nil {
		what = "replaced by another file"
	}
	return fmt.Errorf("%w: capture %s was %s while it was being recorded (by a program that ignores its lock); the %d samples recorded are not under that name",
		ErrReplaced, w.name, what, w.samples)
}

// Written returns the number of bytes handed to the file so far.
func (w *Writer) Written() int64 {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	return w.off
}
