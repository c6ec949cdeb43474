package pqexport

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"sync"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
)

// Layout of samples.parquet. Rows go in lanes, each lane its own row
// groups. With up to maxLanes drives a lane is one drive: a row group
// holds one drive's rows for a span of sample indices (the drives of a
// span in port order), a query on one port skips the others' row groups by
// their statistics, and a chunk's dictionary holds one drive's readings.
// With more drives one lane holds them all, interleaved at each index as
// the rows come: one drive's row groups would be under 128 Ki rows, and
// engines scan a row group at a time. Pages and spans are bounded in rows
// of all lanes, so memory does not grow with the drive count.
const (
	maxLanes     = 32      // 4 Mi rows a span ÷ 32: row groups of 128 Ki rows
	maxPageRows  = 1 << 16 // rows of a lane in a page: ≤ 512 KiB of time_s doubles (Arrow's page limit is 1 MiB)
	pageSetRows  = 1 << 17 // rows of all lanes decoded before they are encoded
	groupSetRows = 1 << 22 // rows of all lanes in one span of row groups
)

// layout is layoutFor; tests make pages and row groups small.
var layout = layoutFor

// layoutFor returns the lanes of drives drives (indices into drivesOf),
// and the sample indices in a page and in a span of row groups: powers of
// two, the second a multiple of the first.
func layoutFor(drives int) (lanes [][]int, pageIdx, groupIdx int) {
	if drives <= maxLanes {
		for d := range drives {
			lanes = append(lanes, []int{d})
		}
	} else {
		all := make([]int, drives)
		for d := range all {
			all[d] = d
		}
		lanes = [][]int{all}
	}
	rows := max(drives, 1) // rows a sample index gives, in all lanes
	perLane := rows / len(lanes)
	pageIdx = maxPageRows
	for pageIdx > 1 && (pageIdx*rows > pageSetRows || pageIdx*perLane > maxPageRows) {
		pageIdx /= 2
	}
	groupIdx = RowGroupRows
	for groupIdx > pageIdx && (groupIdx*rows > groupSetRows || groupIdx*perLane > RowGroupRows) {
		groupIdx /= 2
	}
	return lanes, pageIdx, groupIdx
}

// driveCols is where one drive's readings come from: the capture's
// channels on its port, in header order.
type driveCols struct {
	port  int
	chans []int
	rails []meter.Rail
}

func drivesOf(h *capture.Header) []driveCols {
	var ds []driveCols
	at := map[int]int{}
	for c, ch := range h.Channels {
		i, ok := at[ch.Port]
		if !ok {
			i = len(ds)
			at[ch.Port] = i
			ds = append(ds, driveCols{port: ch.Port})
		}
		ds[i].chans = append(ds[i].chans, c)
		ds[i].rails = append(ds[i].rails, ch.Rail)
	}
	return ds
}

// lanePage is one lane's rows in a page set, as columns: index, gap and
// port per row; lv[s] is rail s's definition levels (its V and A share
// them) and lv[3] power_w's; v[s], a[s] and power hold the present values
// as the file stores them (float32: the capture's V and A exactly, power
// rounded from its double sum). time_s is computed by the encoder.
type lanePage struct {
	index []int64
	gap   []int64
	port  []int32
	lv    [4][]uint8
	v, a  [3][]float32
	power []float32
}

func (p *lanePage) reset() {
	p.index, p.gap, p.port = p.index[:0], p.gap[:0], p.port[:0]
	for s := range p.lv {
		p.lv[s] = p.lv[s][:0]
	}
	for s := range p.v {
		p.v[s], p.a[s] = p.v[s][:0], p.a[s][:0]
	}
	p.power = p.power[:0]
}

// pageSet is every lane's next page, n sample indices; it is filled by the
// decoder while the previous one is encoded.
type pageSet struct {
	n     int
	lanes []lanePage
	wg    sync.WaitGroup
	// last: the set ends its span of row groups, and a reading's task
	// finishes its chunk (orders the dictionary, encodes the pages).
	last bool
}

func (ps *pageSet) reset() {
	ps.n, ps.last = 0, false
	for l := range ps.lanes {
		ps.lanes[l].reset()
	}
}

// runDrive is where a drive's readings come from in the current run:
// channel + 1 of each rail's (0: none), and whether power_w is present.
type runDrive struct {
	src   [3]int
	power bool
}

// sampleWriter writes samples.parquet: the capture is decoded into page
// sets on the caller's goroutine while GOMAXPROCS workers encode the
// previous set, one (lane, column) page per task.
type sampleWriter struct {
	out      *offsetWriter
	meta     *sampleMeta
	run      string
	rate     float64
	drives   []driveCols
	lanes    [][]int
	pageIdx  int
	groupIdx int
	runs     []runDrive
	cols     [][numCols]column // per lane
	groups   []format.RowGroup
	tasks    chan task
	workers  sync.WaitGroup
	errMu    sync.Mutex
	err      error
	mainScr  *scratch
	kv       []format.KeyValue // the footer's key-value metadata
}

type task struct {
	set     *pageSet
	lane, c int
}

// offsetWriter counts the bytes written: the footer gives offsets.
type offsetWriter struct {
	w   *bufio.Writer
	off int64
}

func (o *offsetWriter) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	o.off += int64(n)
	return n, err
}

func writeSamples(w io.Writer, r *capture.Reader, h *capture.Header, run string, stop func() error) error {
	meta, err := sampleMetaOnce()
	if err != nil {
		return err
	}
	scr, err := newScratch()
	if err != nil {
		return err
	}
	kv, err := footerKV(h)
	if err != nil {
		return err
	}
	sw := &sampleWriter{out: &offsetWriter{w: bufio.NewWriterSize(w, 1<<20)}, meta: meta, run: run,
		rate: float64(h.RateHz), drives: drivesOf(h), mainScr: scr, kv: kv}
	sw.lanes, sw.pageIdx, sw.groupIdx = layout(len(sw.drives))
	sw.runs = make([]runDrive, len(sw.drives))
	sw.cols = make([][numCols]column, len(sw.lanes))
	for d := range sw.cols {
		for c := range numCols {
			sw.cols[d][c].kind = colKinds[c]
			sw.cols[d][c].rows = sw.groupIdx * len(sw.lanes[d])
		}
	}
	if _, err := sw.out.Write([]byte("PAR1")); err != nil {
		return err
	}
	sw.start()
	err = sw.decode(capture.NewRows(r), stop)
	sw.stopWorkers()
	if err == nil {
		err = sw.failed()
	}
	if err == nil {
		err = sw.footer()
	}
	return err
}

func (sw *sampleWriter) start() {
	n := runtime.GOMAXPROCS(0)
	sw.tasks = make(chan task, n*numCols)
	for range n {
		sw.workers.Add(1)
		go func() {
			defer sw.workers.Done()
			s, err := newScratch()
			if err != nil {
				sw.fail(err)
			}
			for t := range sw.tasks {
				if sw.failed() == nil {
					if err := sw.encode(s, t); err != nil {
						sw.fail(err)
					}
				}
				t.set.wg.Done()
			}
		}()
	}
}

func (sw *sampleWriter) stopWorkers() {
	close(sw.tasks)
	sw.workers.Wait()
}

func (sw *sampleWriter) fail(err error) {
	sw.errMu.Lock()
	if sw.err == nil {
		sw.err = err
	}
	sw.errMu.Unlock()
}

func (sw *sampleWriter) failed() error {
	sw.errMu.Lock()
	defer sw.errMu.Unlock()
	return sw.err
}

// decode reads the capture's rows into page sets, hands each full one to
// the workers and writes the row groups as their spans complete.
func (sw *sampleWriter) decode(rows *capture.Rows, stop func() error) error {
	sets := [2]*pageSet{sw.newSet(), sw.newSet()}
	cur, inGroup := 0, 0
	// flush hands the current set to the workers once the other one's
	// tasks are done (a column's pages are encoded in order, by one
	// worker at a time), then writes the row groups if their span is full.
	flush := func(last bool) error {
		set := sets[cur]
		sets[1-cur].wg.Wait()
		if set.n > 0 {
			if err := stop(); err != nil {
				return err
			}
			if err := sw.failed(); err != nil {
				return err
			}
			inGroup += set.n
			set.last = inGroup == sw.groupIdx || last
			sw.dispatch(set)
		}
		if inGroup == sw.groupIdx || (last && inGroup > 0) {
			set.wg.Wait()
			if err := sw.failed(); err != nil {
				return err
			}
			if err := sw.writeGroups(); err != nil {
				return err
			}
			inGroup = 0
		}
		cur = 1 - cur
		sets[cur].wg.Wait()
		sets[cur].reset()
		return nil
	}
	for {
		run, err := rows.NextRun()
		if err == io.EOF || errors.Is(err, capture.ErrTruncated) {
			break
		}
		if err != nil {
			sets[1-cur].wg.Wait()
			return err
		}
		n := run.N
		if run.Gap > 0 {
			n = 1
		}
		for k := 0; k < n; {
			set := sets[cur]
			m := min(n-k, sw.pageIdx-set.n, sw.groupIdx-inGroup-set.n)
			sw.fill(set, run, k, m)
			k += m
			if set.n == sw.pageIdx || inGroup+set.n == sw.groupIdx {
				if err := flush(false); err != nil {
					return err
				}
			}
		}
	}
	return flush(true)
}

func (sw *sampleWriter) newSet() *pageSet {
	return &pageSet{lanes: make([]lanePage, len(sw.lanes))}
}

func (sw *sampleWriter) dispatch(set *pageSet) {
	set.wg.Add(len(sw.lanes) * numCols)
	// The readings first: they are the long tasks.
	for c := numCols - 1; c >= 0; c-- {
		for l := range sw.lanes {
			sw.tasks <- task{set: set, lane: l, c: c}
		}
	}
}

// fill appends sample indices k … k+m-1 of run to the page set, a row per
// drive each: a gap row (all readings null) or samples. A drive's rail
// readings are its last present channel's on that rail, and power_w the
// sum of V × A over its present channels in header order, null unless all
// are present.
func (sw *sampleWriter) fill(set *pageSet, run *capture.Run, k, m int) {
	set.n += m
	for d := range sw.drives {
		sw.runs[d] = sw.runOf(d, run)
	}
	for l, lane := range sw.lanes {
		p, rows := &set.lanes[l], sw.pageIdx*len(lane)
		p.index, p.gap, p.port = reserve(p.index, rows), reserve(p.gap, rows), reserve(p.port, rows)
		for s := range p.lv {
			p.lv[s] = reserve(p.lv[s], rows)
		}
		for _, d := range lane {
			for s, c := range sw.runs[d].src {
				if c > 0 {
					p.v[s], p.a[s] = reserve(p.v[s], rows), reserve(p.a[s], rows)
				}
			}
			if sw.runs[d].power {
				p.power = reserve(p.power, rows)
			}
		}
		if len(lane) == 1 {
			sw.rows(p, run, k, m, lane[0])
			continue
		}
		for j := k; j < k+m; j++ {
			for _, d := range lane {
				sw.row(p, run, j, d)
			}
		}
	}
}

// rows appends drive d's rows at run's indices k … k+m-1 to p, a column
// at a time: what row does for each, in a lane of one drive.
func (sw *sampleWriter) rows(p *lanePage, run *capture.Run, k, m, d int) {
	port, rd := int32(sw.drives[d].port), &sw.runs[d]
	for j := k; j < k+m; j++ {
		p.index = append(p.index, int64(run.Index+uint64(j)))
		p.gap = append(p.gap, int64(run.Gap))
		p.port = append(p.port, port)
	}
	for s, c := range rd.src {
		p.lv[s] = appendLevels(p.lv[s], c > 0, m)
		if c > 0 {
			p.v[s] = appendFloat32s(p.v[s], run.V[c-1][k:k+m])
			p.a[s] = appendFloat32s(p.a[s], run.I[c-1][k:k+m])
		}
	}
	p.lv[3] = appendLevels(p.lv[3], rd.power, m)
	if rd.power {
		for j := k; j < k+m; j++ {
			p.power = append(p.power, sw.power(run, j, d))
		}
	}
}

// power is drive d's power at run's j-th index: the sum of V × A over its
// channels in header order, in double, rounded to float32 once.
func (sw *sampleWriter) power(run *capture.Run, j, d int) float32 {
	var sum float64
	for _, c := range sw.drives[d].chans {
		sum += float64(run.V[c][j]) * float64(run.I[c][j])
	}
	return float32(sum)
}

func appendLevels(lv []uint8, present bool, m int) []uint8 {
	var b uint8
	if present {
		b = 1
	}
	for range m {
		lv = append(lv, b)
	}
	return lv
}

// appendFloat32s appends a capture's readings as float32: every reading
// the capture holds is a float32 widened (capture-format.md), so nothing
// is rounded here.
func appendFloat32s[T ~float64](dst []float32, src []T) []float32 {
	for _, x := range src {
		dst = append(dst, float32(x))
	}
	return dst
}

// runOf is where drive d's readings come from in run.
func (sw *sampleWriter) runOf(d int, run *capture.Run) runDrive {
	var rd runDrive
	dc := &sw.drives[d]
	all, any := true, false
	for i, c := range dc.chans {
		if run.Gap > 0 || !run.Present[c] {
			all = false
			continue
		}
		any = true
		if s := railSlot(dc.rails[i]); s >= 0 {
			rd.src[s] = c + 1
		}
	}
	rd.power = all && any
	return rd
}

// row appends drive d's row at run's j-th index to p.
func (sw *sampleWriter) row(p *lanePage, run *capture.Run, j, d int) {
	p.index = append(p.index, int64(run.Index+uint64(j)))
	p.gap = append(p.gap, int64(run.Gap))
	p.port = append(p.port, int32(sw.drives[d].port))
	rd := &sw.runs[d]
	for s, c := range rd.src {
		if c == 0 {
			p.lv[s] = append(p.lv[s], 0)
			continue
		}
		p.lv[s] = append(p.lv[s], 1)
		p.v[s] = append(p.v[s], float32(run.V[c-1][j]))
		p.a[s] = append(p.a[s], float32(run.I[c-1][j]))
	}
	if !rd.power {
		p.lv[3] = append(p.lv[3], 0)
		return
	}
	p.lv[3] = append(p.lv[3], 1)
	p.power = append(p.power, sw.power(run, j, d))
}

// SchemaKey is the key-value metadata entry of samples.parquet that names
// its layout, SamplesSchema, as report.json's "schema" names its own.
// Files without it are v1: they also had rail5_w, rail12_w and rail3v3_w
// (each rail's V × A, which v2 leaves to the reader: SampleRow).
const (
	SchemaKey     = "idlewatt.schema"
	SamplesSchema = "idlewatt.samples/v2"
)

// ChannelsKey is samples.parquet's key-value metadata entry that lists
// the capture's channels, in header order, with the LSBs its header
// states: a JSON array of ChannelLSB. A reading that the capture stored as
// a meter count (encodings 1 and 2: the hub's) is that count × its
// channel's LSB rounded to float32, so round(value / lsb) gives the count
// back for any count below 2²² in magnitude.
const ChannelsKey = "idlewatt.channels"

// ChannelLSB is one entry of ChannelsKey.
type ChannelLSB struct {
	Port int `json:"port"`
	// Rail is the prefix of the columns its readings go to (rail5,
	// rail12, rail3v3), or "other": a channel on no named rail, which
	// counts only in power_w.
	Rail       string  `json:"rail"`
	VoltLSB    float64 `json:"volt_lsb_v"`    // 0: not stated (readings that are no counts)
	CurrentLSB float64 `json:"current_lsb_a"` // likewise
}

var railPrefix = [3]string{"rail5", "rail12", "rail3v3"}

// footerKV is samples.parquet's key-value metadata: its schema and the
// capture's channels.
func footerKV(h *capture.Header) ([]format.KeyValue, error) {
	chs := make([]ChannelLSB, 0, len(h.Channels))
	for _, c := range h.Channels {
		rail := "other"
		if s := railSlot(c.Rail); s >= 0 {
			rail = railPrefix[s]
		}
		chs = append(chs, ChannelLSB{Port: c.Port, Rail: rail, VoltLSB: float64(c.VoltLSB), CurrentLSB: float64(c.CurrentLSB)})
	}
	b, err := json.Marshal(chs)
	if err != nil {
		return nil, err
	}
	return []format.KeyValue{{Key: SchemaKey, Value: SamplesSchema}, {Key: ChannelsKey, Value: string(b)}}, nil
}

func railSlot(r meter.Rail) int {
	switch r {
	case meter.Rail5V:
		return 0
	case meter.Rail12V:
		return 1
	case meter.Rail3V3:
		return 2
	}
	return -1
}

// reserve allocates a page's column whole on its first rows: it is never
// grown, and the next page set reuses it.
func reserve[T any](x []T, n int) []T {
	if cap(x) == 0 {
		return make([]T, 0, n)
	}
	return x
}

// encode appends one page of column t.c of lane t.lane.
func (sw *sampleWriter) encode(s *scratch, t task) error {
	p, col := &t.set.lanes[t.lane], &sw.cols[t.lane][t.c]
	switch t.c {
	case colRunID:
		return col.runID(s, sw.run, len(p.index))
	case colTime:
		if err := col.addTimes(s, p.index, sw.rate); err != nil || !t.set.last {
			return err
		}
		return col.flushTimes(s)
	case colIndex:
		return col.int64s(s, p.index)
	case colPort:
		return col.int32s(s, p.port)
	case colGap:
		return col.int64s(s, p.gap)
	}
	var lv []uint8
	var v []float32
	switch k := t.c - colReadings; {
	case k == 6:
		lv, v = p.lv[3], p.power
	case k%2 == 0:
		lv, v = p.lv[k/2], p.v[k/2]
	default:
		lv, v = p.lv[k/2], p.a[k/2]
	}
	if err := col.reading(s, lv, v); err != nil {
		return err
	}
	if t.set.last {
		return col.finish(s)
	}
	return nil
}

// writeGroups writes every lane's row group of the span just encoded and
// resets the columns.
func (sw *sampleWriter) writeGroups() error {
	for l := range sw.lanes {
		start := sw.out.off
		rg := format.RowGroup{NumRows: sw.cols[l][colIndex].numValues, FileOffset: start, Ordinal: int16(len(sw.groups))}
		// A span whose last page set came before the capture's end was
		// known has readings still to finish.
		for c := colReadings; c < numCols; c++ {
			if err := sw.cols[l][c].finish(sw.mainScr); err != nil {
				return err
			}
		}
		if err := sw.cols[l][colTime].flushTimes(sw.mainScr); err != nil {
			return err
		}
		for c := range numCols {
			cc, err := sw.writeChunk(&sw.cols[l][c], c)
			if err != nil {
				return err
			}
			rg.Columns = append(rg.Columns, cc)
			rg.TotalByteSize += cc.MetaData.TotalUncompressedSize
			rg.TotalCompressedSize += cc.MetaData.TotalCompressedSize
			sw.cols[l][c].reset()
		}
		sw.groups = append(sw.groups, rg)
	}
	return nil
}

func (sw *sampleWriter) writeChunk(col *column, c int) (format.ColumnChunk, error) {
	start := sw.out.off
	md := format.ColumnMetaData{Type: sw.meta.types[c], PathInSchema: sw.meta.paths[c], Codec: format.Zstd,
		NumValues: col.numValues, TotalUncompressedSize: col.unc, TotalCompressedSize: col.comp}
	dict, dictUnc := col.dictPg, col.dictUnc
	if col.kind == kindRunID {
		var err error
		if dict, dictUnc, err = runIDPage(sw.mainScr, sw.run); err != nil {
			return format.ColumnChunk{}, err
		}
	}
	encs := map[format.Encoding]bool{}
	if col.kind == kindReading {
		encs[format.RLE] = true // definition levels
	}
	if dict != nil {
		md.DictionaryPageOffset = sw.out.off
		md.TotalUncompressedSize += int64(dictUnc)
		md.TotalCompressedSize += int64(len(dict))
		md.EncodingStats = append(md.EncodingStats, format.PageEncodingStats{PageType: format.DictionaryPage, Encoding: format.Plain, Count: 1})
		encs[format.Plain] = true
		if _, err := sw.out.Write(dict); err != nil {
			return format.ColumnChunk{}, err
		}
	}
	md.DataPageOffset = sw.out.off
	for _, pg := range col.pages {
		if _, err := sw.out.Write(pg); err != nil {
			return format.ColumnChunk{}, err
		}
	}
	for _, e := range []format.Encoding{format.Plain, format.RLEDictionary, format.DeltaBinaryPacked, format.ByteStreamSplit} {
		if n := col.pageStats[e]; n > 0 {
			encs[e] = true
			md.EncodingStats = append(md.EncodingStats, format.PageEncodingStats{PageType: format.DataPage, Encoding: e, Count: n})
		}
	}
	for _, e := range []format.Encoding{format.Plain, format.RLE, format.RLEDictionary, format.DeltaBinaryPacked, format.ByteStreamSplit} {
		if encs[e] {
			md.Encoding = append(md.Encoding, e)
		}
	}
	md.Statistics = sw.chunkStats(col)
	// file_offset: where the chunk starts (readers that split files by
	// row group once took the first chunk's).
	return format.ColumnChunk{FileOffset: start, MetaData: md}, nil
}

func (sw *sampleWriter) chunkStats(col *column) format.Statistics {
	st := format.Statistics{NullCount: col.nulls}
	switch {
	case col.kind == kindRunID:
		st.MinValue, st.MaxValue = []byte(sw.run), []byte(sw.run)
	case !col.hasMinMax:
	case col.kind == kindTime:
		st.MinValue, st.MaxValue = plainDouble(col.minF, true), plainDouble(col.maxF, false)
	case col.kind == kindReading:
		st.MinValue, st.MaxValue = plainFloat(float32(col.minF), true), plainFloat(float32(col.maxF), false)
	case col.kind == kindInt32:
		st.MinValue = binary.LittleEndian.AppendUint32(nil, uint32(col.minI))
		st.MaxValue = binary.LittleEndian.AppendUint32(nil, uint32(col.maxI))
	default:
		st.MinValue = binary.LittleEndian.AppendUint64(nil, uint64(col.minI))
		st.MaxValue = binary.LittleEndian.AppendUint64(nil, uint64(col.maxI))
	}
	return st
}

// footer writes the file metadata after the row groups; an empty capture
// gives a file with the schema and no row group.
func (sw *sampleWriter) footer() error {
	var rows int64
	for _, g := range sw.groups {
		rows += g.NumRows
	}
	md := format.FileMetaData{Version: 2, Schema: sw.meta.schema, NumRows: rows, RowGroups: sw.groups,
		KeyValueMetadata: sw.kv, CreatedBy: "idlewatt samples.parquet (parquet-go v0.32 encoders)", ColumnOrders: sw.meta.orders}
	start := sw.out.off
	if err := thrift.NewEncoder(new(thrift.CompactProtocol).NewWriter(sw.out)).Encode(&md); err != nil {
		return err
	}
	tail := binary.LittleEndian.AppendUint32(nil, uint32(sw.out.off-start))
	if _, err := sw.out.Write(append(tail, "PAR1"...)); err != nil {
		return err
	}
	return sw.out.w.Flush()
}
