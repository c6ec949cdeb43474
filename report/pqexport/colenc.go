package pqexport

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"math/bits"
	"slices"
	"sync"

	"github.com/klauspost/compress/zstd"
	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/bytestreamsplit"
	"github.com/parquet-go/parquet-go/encoding/delta"
	"github.com/parquet-go/parquet-go/encoding/rle"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// samples.parquet is framed here rather than by parquet-go's row writer:
// its dictionary insertions (a hash probe per value, 64 rows at a time)
// were most of the export's CPU. The pages use parquet-go's encoders
// (DELTA_BINARY_PACKED, BYTE_STREAM_SPLIT, the RLE/bit-packing hybrid),
// its zstd codec and its thrift structs; the schema is the one parquet-go
// derives from SampleRow, so the files stay what readers know.

// colKind is how a samples.parquet column is encoded.
type colKind uint8

const (
	kindRunID   colKind = iota // one string per file: a one-entry dictionary
	kindTime                   // double, BYTE_STREAM_SPLIT
	kindInt64                  // int64, DELTA_BINARY_PACKED
	kindInt32                  // int32, DELTA_BINARY_PACKED
	kindReading                // optional float: dictionary, BYTE_STREAM_SPLIT past maxDict entries
)

// The columns of samples.parquet in schema order (SampleRow's fields).
const (
	colRunID = iota
	colTime
	colIndex
	colPort
	colGap
	colReadings // 7 readings follow: rail5 v/a, rail12 v/a, rail3v3 v/a, power_w
	numReadings = 7
	numCols     = colReadings + numReadings
)

var colKinds = [numCols]colKind{kindRunID, kindTime, kindInt64, kindInt32, kindInt64,
	kindReading, kindReading, kindReading, kindReading, kindReading, kindReading, kindReading}

// colNames are SampleRow's column names: the encoder's columns are
// checked against them when the schema is derived.
var colNames = [numCols]string{"run_id", "time_s", "sample_index", "port", "gap_samples",
	"rail5_v", "rail5_a", "rail12_v", "rail12_a", "rail3v3_v", "rail3v3_a", "power_w"}

// maxDict is the most entries a reading's dictionary takes in a column
// chunk (512 KiB of floats: the doubles' 1 MiB limit, Arrow's default
// dictionary page size, kept in entries); past it the chunk's further
// pages are BYTE_STREAM_SPLIT. A meter's readings are counts × an LSB, so
// a chunk rarely holds more than a few thousand.
const maxDict = 1 << 17

// A reading's dictionary is ordered when its chunk is complete, by the
// entries' counts in the chunk (finish): zstd codes a page's bytes, not
// its indices, with one Huffman table of byte values and no context.
//   - Up to byteDict entries an index is at most a byte, and the most
//     frequent entry is index 0, the next 1, and so on.
//   - Up to pairDict entries an index is two bytes (bit width 16, byte
//     aligned), and the entries are placed at indices hi<<8 | lo so that
//     the hi and lo bytes have about the same distribution (pairCells):
//     one table then codes both near their entropy. Packed at their
//     fewest bits (10 for a 0.5 mA noise's ~800 readings), indices cut
//     across bytes and zstd's table saw nearly uniform bytes: 9.5 bits a
//     reading against an entropy of 8.1; paired, 8.2 (docs/lab.md). The
//     indices no entry takes are filled with index 0's value (a reader
//     never meets them), so the dictionary page holds up to 64 Ki floats.
//   - Past that, frequency order at the fewest bits.
const (
	byteDict = 1 << 8
	pairDict = 1 << 16
)

// sampleMeta is samples.parquet's schema and column orders, as parquet-go
// writes them for SampleRow (an empty file's footer), and each leaf's path
// and physical type.
type sampleMeta struct {
	schema []format.SchemaElement
	orders []format.ColumnOrder
	paths  [numCols][]string
	types  [numCols]format.Type
}

var sampleMetaOnce = sync.OnceValues(func() (*sampleMeta, error) {
	var buf bytes.Buffer
	w := pq.NewGenericWriter[SampleRow](&buf)
	if err := w.Close(); err != nil {
		return nil, err
	}
	f, err := pq.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		return nil, err
	}
	md := f.Metadata()
	m := &sampleMeta{schema: md.Schema, orders: md.ColumnOrders}
	leaves := f.Schema().Columns()
	if len(leaves) != numCols {
		return nil, fmt.Errorf("SampleRow has %d columns, the encoder %d", len(leaves), numCols)
	}
	for i, path := range leaves {
		if len(path) != 1 || path[0] != colNames[i] {
			return nil, fmt.Errorf("SampleRow's column %d is %v, the encoder's %s", i, path, colNames[i])
		}
		m.paths[i] = path
		for _, se := range md.Schema {
			if se.Name == path[0] && se.Type.Valid {
				m.types[i] = se.Type.V
			}
		}
	}
	return m, nil
})

// column is one column chunk being built: its encoded pages and what the
// footer says of them. Only one goroutine touches a column at a time.
type column struct {
	kind       colKind
	pages      [][]byte // each page with its header, in order
	numValues  int64    // rows, nulls included
	nulls      int64
	unc, comp  int64 // bytes of the data pages with their headers, before and after zstd
	minF, maxF float64
	minI, maxI int64
	hasMinMax  bool
	dict       *f32Dict
	fallback   bool // the dictionary is full: further pages are BYTE_STREAM_SPLIT
	pageStats  map[format.Encoding]int32
	// A reading's dictionary-coded pages wait in pend until the chunk is
	// complete, each as its definition levels and its values' indices in
	// the dictionary's first-seen order, RLE/bit-packed as a page holds
	// them (uncompressed: a quiet rail's take a few bytes, a noisy one's
	// 10-12 bits a row), one after another in held; finish orders the
	// dictionary by the entries' counts and encodes them again.
	pend []pendPage
	held []byte
	// time_s's page being built: its values' bytes in their
	// BYTE_STREAM_SPLIT streams (byte k of value i at k·tcap + i), tn of
	// them, within lo … hi.
	tbss     []byte
	tn, tcap int
	tlo, thi float64
	cnt      []int64 // per first-seen entry, its values in the pending pages
	rows     int     // the most rows a chunk has
	dictPg   []byte  // the finished dictionary page, with its header
	dictUnc  int     // its size before compression, with its header
}

// pendPage is a reading's data page waiting for its chunk's dictionary
// order: held[from:mid] are its definition levels as written (length
// prefix and runs), held[mid:to] its indices (width byte, RLE/bit-packed).
type pendPage struct {
	from, mid, to int
	rows, nulls   int
	st            format.Statistics
}

func (c *column) reset() {
	clear(c.pages)
	*c = column{kind: c.kind, pages: c.pages[:0], dict: c.dict, pageStats: c.pageStats,
		pend: c.pend[:0], held: c.held[:0], cnt: c.cnt[:0], tbss: c.tbss, tcap: c.tcap, rows: c.rows}
	if c.dict != nil {
		c.dict.reset()
	}
	clear(c.pageStats)
}

// scratch is one encoding goroutine's reused buffers and zstd encoder.
type scratch struct {
	zw   *zstd.Encoder
	body []byte // levels and values of a page, before compression
	enc  []byte
	z    []byte
	idx  []int32
	f    []float64 // time_s's values of a page set
	lvl  []byte    // a page's definition levels (levels)
	hdr  bytes.Buffer
	thr  *thrift.Encoder
	// finish's: the new index per first-seen entry, entries by rank
	pos   []int32
	order []int32
	dict  []float32
}

// zstd at its fastest level, as the other tables: with dictionary, delta
// and byte-stream-split encodings doing most of the work, slower levels
// buy little. Its window is one page: a page is compressed on its own, and
// the default 8 MiB window cost every encoder that much memory. Literals
// are Huffman-coded even in a block where no match is found (the fastest
// level's default leaves such a block raw): a noisy reading's index bytes
// find no matches, and their Huffman coding is what the dictionary's
// order is for (finish).
func newScratch() (*scratch, error) {
	zw, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(1<<20), zstd.WithZeroFrames(true), zstd.WithEncoderCRC(false),
		zstd.WithAllLitEntropyCompression(true))
	if err != nil {
		return nil, err
	}
	s := &scratch{zw: zw}
	s.thr = thrift.NewEncoder(new(thrift.CompactProtocol).NewWriter(&s.hdr))
	return s, nil
}

// page compresses s.body and appends it to c with its header.
func (c *column) page(s *scratch, numValues, nulls int, enc format.Encoding, st format.Statistics) error {
	return c.pageOf(s, s.body, numValues, nulls, enc, st)
}

// pageOf is page of body.
func (c *column) pageOf(s *scratch, body []byte, numValues, nulls int, enc format.Encoding, st format.Statistics) error {
	s.z = s.zw.EncodeAll(body, s.z[:0])
	h := format.PageHeader{Type: format.DataPage, UncompressedPageSize: int32(len(body)),
		CompressedPageSize: int32(len(s.z)), CRC: int32(crc32.ChecksumIEEE(s.z)),
		DataPageHeader: thrift.New(format.DataPageHeader{NumValues: int32(numValues), Encoding: enc,
			DefinitionLevelEncoding: format.RLE, RepetitionLevelEncoding: format.RLE, Statistics: st})}
	s.hdr.Reset()
	if err := s.thr.Encode(&h); err != nil {
		return err
	}
	pg := make([]byte, 0, s.hdr.Len()+len(s.z))
	c.pages = append(c.pages, append(append(pg, s.hdr.Bytes()...), s.z...))
	c.unc += int64(s.hdr.Len() + len(body))
	c.comp += int64(s.hdr.Len() + len(s.z))
	c.numValues += int64(numValues)
	c.nulls += int64(nulls)
	if c.pageStats == nil {
		c.pageStats = map[format.Encoding]int32{}
	}
	c.pageStats[enc]++
	return nil
}

// timePageRows is the most rows of a time_s page. Its pages are longer
// than the others': time_s is index ÷ rate, and within a power of two of
// seconds its five low bytes repeat every rate ÷ gcd(rate, 2ᵏ) rows (625 at
// 10 kS/s), so a page costs zstd about one period as literals; with pages
// of 64 Ki rows that was 87 % of a noise-free capture's samples.parquet.
const timePageRows = 1 << 18

// addTimes adds the time_s values of rows at sample indices index
// (index ÷ rate) to the page being built, their streams each appended to
// its own (the page is held encoded, not as doubles), and writes the page
// once it has timePageRows rows (or the chunk's rows, if fewer).
func (c *column) addTimes(s *scratch, index []int64, rate float64) error {
	if c.tcap == 0 {
		c.tcap = max(1, min(timePageRows, c.rows))
		c.tbss = make([]byte, 8*c.tcap)
	}
	for len(index) > 0 {
		m := min(len(index), c.tcap-c.tn)
		if c.tn == 0 {
			c.tlo, c.thi = math.Inf(1), math.Inf(-1)
		}
		s.f = s.f[:0]
		for _, i := range index[:m] {
			x := float64(i) / rate
			if x < c.tlo {
				c.tlo = x
			}
			if x > c.thi {
				c.thi = x
			}
			s.f = append(s.f, x)
		}
		var err error
		if s.enc, err = new(bytestreamsplit.Encoding).EncodeDouble(s.enc[:0], s.f); err != nil {
			return err
		}
		for k := range 8 {
			copy(c.tbss[k*c.tcap+c.tn:], s.enc[k*m:(k+1)*m])
		}
		c.tn += m
		index = index[m:]
		if c.tn == c.tcap {
			if err := c.flushTimes(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// flushTimes writes the time_s page being built, if it has a row: a page
// of required doubles, BYTE_STREAM_SPLIT.
func (c *column) flushTimes(s *scratch) error {
	n := c.tn
	if n == 0 {
		return nil
	}
	for k := 1; k < 8 && n < c.tcap; k++ { // the streams of a short page close up
		copy(c.tbss[k*n:(k+1)*n], c.tbss[k*c.tcap:k*c.tcap+n])
	}
	c.tn = 0
	c.widenF(c.tlo, c.thi)
	st := format.Statistics{MinValue: plainDouble(c.tlo, true), MaxValue: plainDouble(c.thi, false)}
	return c.pageOf(s, c.tbss[:8*n], n, 0, format.ByteStreamSplit, st)
}

func (c *column) int64s(s *scratch, v []int64) error {
	var err error
	if s.body, err = new(delta.BinaryPackedEncoding).EncodeInt64(s.body[:0], v); err != nil {
		return err
	}
	lo, hi := v[0], v[0]
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	return c.page(s, len(v), 0, format.DeltaBinaryPacked, c.intStats(lo, hi, binary.LittleEndian.AppendUint64(nil, uint64(lo)), binary.LittleEndian.AppendUint64(nil, uint64(hi))))
}

func (c *column) int32s(s *scratch, v []int32) error {
	var err error
	if s.body, err = new(delta.BinaryPackedEncoding).EncodeInt32(s.body[:0], v); err != nil {
		return err
	}
	lo, hi := v[0], v[0]
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	return c.page(s, len(v), 0, format.DeltaBinaryPacked, c.intStats(int64(lo), int64(hi), binary.LittleEndian.AppendUint32(nil, uint32(lo)), binary.LittleEndian.AppendUint32(nil, uint32(hi))))
}

// runID appends a page of n rows of the one run id: dictionary index 0,
// one RLE run (bit width 1, which every reader takes).
func (c *column) runID(s *scratch, id string, n int) error {
	s.body = append(s.body[:0], 1)
	s.body = binary.AppendUvarint(s.body, uint64(n)<<1)
	s.body = append(s.body, 0)
	return c.page(s, n, 0, format.RLEDictionary, format.Statistics{MinValue: []byte(id), MaxValue: []byte(id)})
}

func (c *column) intStats(lo, hi int64, blo, bhi []byte) format.Statistics {
	if !c.hasMinMax {
		c.minI, c.maxI, c.hasMinMax = lo, hi, true
	}
	c.minI, c.maxI = min(c.minI, lo), max(c.maxI, hi)
	return format.Statistics{MinValue: blo, MaxValue: bhi}
}

// float32Stats is a page's statistics of floats (the readings); it widens
// the chunk's, kept in double, which holds them exactly.
func (c *column) float32Stats(v []float32, nulls int) format.Statistics {
	st := format.Statistics{NullCount: int64(nulls)}
	if lo, hi, ok := bounds(c, v); ok {
		st.MinValue, st.MaxValue = plainFloat(float32(lo), true), plainFloat(float32(hi), false)
	}
	return st
}

// bounds are v's least and greatest values, and widens the chunk's to
// them; ok is false without a value other than NaN. NaN is left out of
// min and max.
func bounds(c *column, v []float32) (lo, hi float64, ok bool) {
	// Comparisons with NaN are false: NaN never becomes a bound.
	l, h := float32(math.Inf(1)), float32(math.Inf(-1))
	for _, x := range v {
		if x < l {
			l = x
		}
		if x > h {
			h = x
		}
	}
	if l > h {
		return 0, 0, false // no value, or only NaN
	}
	lo, hi = float64(l), float64(h)
	c.widenF(lo, hi)
	return lo, hi, true
}

// widenF widens the chunk's bounds to lo … hi.
func (c *column) widenF(lo, hi float64) {
	if !c.hasMinMax {
		c.minF, c.maxF, c.hasMinMax = lo, hi, true
	}
	c.minF, c.maxF = min(c.minF, lo), max(c.maxF, hi)
}

// plainDouble and plainFloat are a statistics bound as PLAIN bytes; a
// zero bound is written as the specification says (-0 as min, +0 as max).
func plainDouble(x float64, isMin bool) []byte {
	if x == 0 {
		x = 0
		if isMin {
			x = math.Copysign(0, -1)
		}
	}
	return binary.LittleEndian.AppendUint64(nil, math.Float64bits(x))
}

func plainFloat(x float32, isMin bool) []byte {
	if x == 0 {
		x = 0
		if isMin {
			x = float32(math.Copysign(0, -1))
		}
	}
	return binary.LittleEndian.AppendUint32(nil, math.Float32bits(x))
}

// reading adds a page of an optional float: def levels lv (0 null,
// 1 present) and the present values v. Their indices in the chunk's
// dictionary wait for the chunk's last page (finish); once the dictionary
// is full the page is BYTE_STREAM_SPLIT, written after the waiting ones,
// and so is a page without values (PLAIN: there is nothing to code).
func (c *column) reading(s *scratch, lv []uint8, v []float32) error {
	nulls := len(lv) - len(v)
	st := c.float32Stats(v, nulls)
	var err error
	if len(v) > 0 && !c.fallback {
		if c.add(s, v) {
			p := pendPage{from: len(c.held), rows: len(lv), nulls: nulls, st: st}
			if err := s.levels(lv); err != nil {
				return err
			}
			c.held = append(c.held, s.lvl...)
			p.mid = len(c.held)
			if s.enc, err = new(rle.DictionaryEncoding).EncodeInt32(s.enc[:0], s.idx); err != nil {
				return err
			}
			c.held = append(c.held, s.enc...)
			p.to = len(c.held)
			c.pend = append(c.pend, p)
			return nil
		}
		c.fallback = true
	}
	if err := c.finish(s); err != nil {
		return err
	}
	if err := s.levels(lv); err != nil {
		return err
	}
	s.body = append(s.body[:0], s.lvl...)
	enc := format.Plain
	if len(v) > 0 {
		if s.enc, err = new(bytestreamsplit.Encoding).EncodeFloat(s.enc[:0], v); err != nil {
			return err
		}
		s.body = append(s.body, s.enc...)
		enc = format.ByteStreamSplit
	}
	return c.page(s, len(lv), nulls, enc, st)
}

// levels sets s.lvl to definition levels lv as a data page holds them:
// their length, then the RLE/bit-packed runs (bit width 1).
func (s *scratch) levels(lv []uint8) error {
	var err error
	if s.enc, err = (&rle.Encoding{BitWidth: 1}).EncodeLevels(s.enc[:0], lv); err != nil {
		return err
	}
	s.lvl = binary.LittleEndian.AppendUint32(s.lvl[:0], uint32(len(s.enc)))
	s.lvl = append(s.lvl, s.enc...)
	return nil
}

// add sets s.idx to v's first-seen dictionary indices and counts them;
// false (and nothing added or counted) if they would take the dictionary
// past maxDict.
func (c *column) add(s *scratch, v []float32) bool {
	if c.dict == nil {
		c.dict = newF32Dict()
	}
	n0 := len(c.dict.vals)
	s.idx = s.idx[:0]
	// Consecutive readings repeat (a quiet rail, a constant voltage):
	// the previous index serves without a probe, and a run is counted at
	// its end.
	prev, pi, run := math.Float32bits(v[0]), c.entry(v[0]), 0
	for j, x := range v {
		if b := math.Float32bits(x); b != prev {
			c.cnt[pi] += int64(j - run)
			prev, pi, run = b, c.entry(x), j
		}
		s.idx = append(s.idx, pi)
	}
	c.cnt[pi] += int64(len(v) - run)
	if len(c.dict.vals) > maxDict {
		// The page goes, and the entries it added: no page refers to
		// them. The table keeps their keys, but it is not probed again
		// before reset.
		for _, i := range s.idx {
			c.cnt[i]--
		}
		c.dict.vals, c.cnt = c.dict.vals[:n0], c.cnt[:n0]
		return false
	}
	return true
}

// entry is x's index in the dictionary, added (with a count of 0) if new.
func (c *column) entry(x float32) int32 {
	i := c.dict.index(x)
	if int(i) == len(c.cnt) {
		c.cnt = append(c.cnt, 0)
	}
	return i
}

// finish orders the chunk's dictionary by its entries' counts (byteDict,
// pairDict), writes its page (dictPg) and encodes the pages waiting for
// it; the chunk's last page or its first BYTE_STREAM_SPLIT page calls it.
func (c *column) finish(s *scratch) error {
	if len(c.pend) == 0 {
		return nil
	}
	k := len(c.dict.vals)
	// Ranks: by count, most first; equal counts in first-seen order.
	s.order = s.order[:0]
	for i := range k {
		s.order = append(s.order, int32(i))
	}
	slices.SortFunc(s.order, func(a, b int32) int {
		switch ca, cb := c.cnt[a], c.cnt[b]; {
		case ca > cb:
			return -1
		case ca < cb:
			return 1
		}
		return int(a - b)
	})
	s.pos = append(s.pos[:0], make([]int32, k)...)
	pair := k > byteDict && k <= pairDict
	var cells []int32
	if pair {
		ranked := make([]int64, k)
		for r, i := range s.order {
			ranked[r] = c.cnt[i]
		}
		cells = pairCells(ranked)
	}
	size := k
	for r, i := range s.order {
		s.pos[i] = int32(r)
		if pair {
			s.pos[i] = cells[r]
			size = max(size, int(cells[r])+1)
		}
	}
	s.dict = s.dict[:0]
	for range size {
		s.dict = append(s.dict, c.dict.vals[s.order[0]])
	}
	for i, x := range c.dict.vals {
		s.dict[s.pos[i]] = x
	}
	if err := c.dictionary(s, s.dict); err != nil {
		return err
	}
	for _, p := range c.pend {
		var err error
		if s.idx, err = new(rle.DictionaryEncoding).DecodeInt32(s.idx[:0], c.held[p.mid:p.to]); err != nil {
			return err
		}
		var or int32 // the page's fewest bits are bits.Len of its indices' or
		for j, i := range s.idx {
			s.idx[j] = s.pos[i]
			or |= s.pos[i]
		}
		width := bits.Len32(uint32(or))
		if pair {
			width = 16
		}
		if s.enc, err = (&rle.Encoding{BitWidth: width}).EncodeInt32(s.enc[:0], s.idx); err != nil {
			return err
		}
		s.body = append(append(append(s.body[:0], c.held[p.from:p.mid]...), byte(width)), s.enc...)
		if err := c.page(s, p.rows, p.nulls, format.RLEDictionary, p.st); err != nil {
			return err
		}
	}
	c.pend, c.held = c.pend[:0], c.held[:0]
	return nil
}

// pairCells are the two-byte indices (hi<<8 | lo) of a dictionary's
// entries by rank, given their counts by rank (most first), placed so that
// the hi and lo bytes have about the same distribution q: the cells are
// taken in the order of q(hi)·q(lo), most first, and q is then the bytes'
// distribution that placement gives, a few times over. Rank 0 is index 0.
// With len(counts) ≤ pairDict every index fits in 16 bits.
func pairCells(counts []int64) []int32 {
	k := len(counts)
	side := 1 // bytes in use: side² cells, enough for k with room to shape q
	for side*side < k {
		side++
	}
	side = min(256, 2*side+4)
	var total float64
	for _, n := range counts {
		total += float64(n)
	}
	total = max(total, 1)
	q := make([]float64, side)
	for b := range q {
		q[b] = math.Pow(0.9, float64(b))
	}
	type cell struct {
		idx int32
		w   float64
	}
	cells := make([]cell, side*side)
	out := make([]int32, k)
	for range 4 {
		for hi := range side {
			for lo := range side {
				cells[hi*side+lo] = cell{int32(hi<<8 | lo), q[hi] * q[lo]}
			}
		}
		slices.SortFunc(cells, func(a, b cell) int {
			switch {
			case a.w > b.w:
				return -1
			case a.w < b.w:
				return 1
			}
			return int(a.idx - b.idx) // equal weights by index: the order is one
		})
		for b := range q {
			q[b] = 1e-12 // every cell stays in the running
		}
		for r := range k {
			out[r] = cells[r].idx
			p := float64(counts[r]) / total / 2
			q[out[r]>>8] += p
			q[out[r]&0xff] += p
		}
	}
	return out
}

// dictionary sets the chunk's dictionary page: vals, PLAIN, compressed.
func (c *column) dictionary(s *scratch, vals []float32) error {
	s.body = s.body[:0]
	for _, x := range vals {
		s.body = binary.LittleEndian.AppendUint32(s.body, math.Float32bits(x))
	}
	pg, unc, err := dictPageOf(s, len(vals))
	c.dictPg, c.dictUnc = pg, unc
	return err
}

// runIDPage is run_id's dictionary page: the one run id.
func runIDPage(s *scratch, runID string) ([]byte, int, error) {
	s.body = binary.LittleEndian.AppendUint32(s.body[:0], uint32(len(runID)))
	s.body = append(s.body, runID...)
	return dictPageOf(s, 1)
}

// dictPageOf compresses s.body, a dictionary page's n PLAIN values, and
// gives the page with its header and its size before compression.
func dictPageOf(s *scratch, n int) ([]byte, int, error) {
	s.z = s.zw.EncodeAll(s.body, s.z[:0])
	h := format.PageHeader{Type: format.DictionaryPage, UncompressedPageSize: int32(len(s.body)),
		CompressedPageSize: int32(len(s.z)), CRC: int32(crc32.ChecksumIEEE(s.z)),
		DictionaryPageHeader: thrift.New(format.DictionaryPageHeader{NumValues: int32(n), Encoding: format.Plain})}
	s.hdr.Reset()
	if err := s.thr.Encode(&h); err != nil {
		return nil, 0, err
	}
	out := append(append([]byte(nil), s.hdr.Bytes()...), s.z...)
	return out, s.hdr.Len() + len(s.body), nil
}

// f32Dict maps a float's bits to its index in insertion order (open
// addressing, linear probing, at most half full).
type f32Dict struct {
	keys  []uint32
	slots []int32 // index+1; 0 is empty
	vals  []float32
	shift uint
}

func newF32Dict() *f32Dict {
	d := &f32Dict{}
	d.alloc(64)
	return d
}

func (d *f32Dict) alloc(n int) {
	d.keys, d.slots, d.shift = make([]uint32, n), make([]int32, n), uint(64-bits.Len(uint(n-1)))
}

func (d *f32Dict) reset() {
	clear(d.slots)
	d.vals = d.vals[:0]
}

// hash spreads a float's bits over the table (Fibonacci hashing).
func (d *f32Dict) hash(k uint32) uint64 { return (uint64(k) * 0x9E3779B97F4A7C15) >> d.shift }

func (d *f32Dict) index(x float32) int32 {
	k := math.Float32bits(x)
	mask := uint64(len(d.keys) - 1)
	for h := d.hash(k); ; h = (h + 1) & mask {
		switch s := d.slots[h]; {
		case s == 0:
			d.vals = append(d.vals, x)
			d.keys[h], d.slots[h] = k, int32(len(d.vals))
			if 2*len(d.vals) > len(d.keys) {
				d.grow()
			}
			return int32(len(d.vals) - 1)
		case d.keys[h] == k:
			return s - 1
		}
	}
}

func (d *f32Dict) grow() {
	d.alloc(2 * len(d.keys))
	mask := uint64(len(d.keys) - 1)
	for i, x := range d.vals {
		k := math.Float32bits(x)
		h := d.hash(k)
		for d.slots[h] != 0 {
			h = (h + 1) & mask
		}
		d.keys[h], d.slots[h] = k, int32(i+1)
	}
}
