package pqexport

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"math/bits"
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
}

func (c *column) reset() {
	clear(c.pages)
	*c = column{kind: c.kind, pages: c.pages[:0], dict: c.dict, pageStats: c.pageStats}
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
	f    []float64 // computed time_s
	hdr  bytes.Buffer
	thr  *thrift.Encoder
}

// zstd at its fastest level, as the other tables: with dictionary, delta
// and byte-stream-split encodings doing most of the work, slower levels
// buy little. Its window is one page: a page is compressed on its own, and
// the default 8 MiB window cost every encoder that much memory.
func newScratch() (*scratch, error) {
	zw, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(1<<20), zstd.WithZeroFrames(true), zstd.WithEncoderCRC(false))
	if err != nil {
		return nil, err
	}
	s := &scratch{zw: zw}
	s.thr = thrift.NewEncoder(new(thrift.CompactProtocol).NewWriter(&s.hdr))
	return s, nil
}

// page compresses s.body and appends it to c with its header.
func (c *column) page(s *scratch, numValues, nulls int, enc format.Encoding, st format.Statistics) error {
	s.z = s.zw.EncodeAll(s.body, s.z[:0])
	h := format.PageHeader{Type: format.DataPage, UncompressedPageSize: int32(len(s.body)),
		CompressedPageSize: int32(len(s.z)), CRC: int32(crc32.ChecksumIEEE(s.z)),
		DataPageHeader: thrift.New(format.DataPageHeader{NumValues: int32(numValues), Encoding: enc,
			DefinitionLevelEncoding: format.RLE, RepetitionLevelEncoding: format.RLE, Statistics: st})}
	s.hdr.Reset()
	if err := s.thr.Encode(&h); err != nil {
		return err
	}
	pg := make([]byte, 0, s.hdr.Len()+len(s.z))
	c.pages = append(c.pages, append(append(pg, s.hdr.Bytes()...), s.z...))
	c.unc += int64(s.hdr.Len() + len(s.body))
	c.comp += int64(s.hdr.Len() + len(s.z))
	c.numValues += int64(numValues)
	c.nulls += int64(nulls)
	if c.pageStats == nil {
		c.pageStats = map[format.Encoding]int32{}
	}
	c.pageStats[enc]++
	return nil
}

// doubles appends a page of required doubles (time_s), BYTE_STREAM_SPLIT.
func (c *column) doubles(s *scratch, v []float64) error {
	var err error
	if s.body, err = new(bytestreamsplit.Encoding).EncodeDouble(s.body[:0], v); err != nil {
		return err
	}
	return c.page(s, len(v), 0, format.ByteStreamSplit, c.floatStats(v, 0))
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

// floatStats is a page's statistics of doubles (time_s); it widens the
// chunk's.
func (c *column) floatStats(v []float64, nulls int) format.Statistics {
	st := format.Statistics{NullCount: int64(nulls)}
	if lo, hi, ok := bounds(c, v); ok {
		st.MinValue, st.MaxValue = plainDouble(lo, true), plainDouble(hi, false)
	}
	return st
}

// float32Stats is floatStats for a page of floats (the readings); the
// chunk's bounds are kept widened to double, which holds them exactly.
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
func bounds[T float32 | float64](c *column, v []T) (lo, hi float64, ok bool) {
	// Comparisons with NaN are false: NaN never becomes a bound.
	l, h := T(math.Inf(1)), T(math.Inf(-1))
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
	if !c.hasMinMax {
		c.minF, c.maxF, c.hasMinMax = lo, hi, true
	}
	c.minF, c.maxF = min(c.minF, lo), max(c.maxF, hi)
	return lo, hi, true
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

// reading appends a page of an optional float: def levels lv (0 null,
// 1 present) and the present values v, dictionary-coded (a page without
// values is PLAIN: there is nothing to code).
func (c *column) reading(s *scratch, lv []uint8, v []float32) error {
	nulls := len(lv) - len(v)
	s.body = append(s.body[:0], 0, 0, 0, 0)
	var err error
	if s.enc, err = (&rle.Encoding{BitWidth: 1}).EncodeLevels(s.enc[:0], lv); err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(s.body, uint32(len(s.enc)))
	s.body = append(s.body, s.enc...)
	st := c.float32Stats(v, nulls)
	enc := format.Plain
	if len(v) > 0 {
		if enc, err = c.values(s, v); err != nil {
			return err
		}
	}
	return c.page(s, len(lv), nulls, enc, st)
}

// values appends v to s.body as dictionary indices, or BYTE_STREAM_SPLIT
// once the dictionary is full.
func (c *column) values(s *scratch, v []float32) (format.Encoding, error) {
	if !c.fallback {
		if c.dict == nil {
			c.dict = newF32Dict()
		}
		s.idx = s.idx[:0]
		// Consecutive readings repeat (a quiet rail, a constant voltage):
		// the previous index serves without a probe.
		prev, pi := math.Float32bits(v[0]), c.dict.index(v[0])
		for _, x := range v {
			if b := math.Float32bits(x); b != prev {
				prev, pi = b, c.dict.index(x)
			}
			s.idx = append(s.idx, pi)
		}
		if len(c.dict.vals) <= maxDict {
			var err error
			s.enc, err = new(rle.DictionaryEncoding).EncodeInt32(s.enc[:0], s.idx)
			s.body = append(s.body, s.enc...)
			return format.RLEDictionary, err
		}
		c.fallback = true
	}
	var err error
	s.enc, err = new(bytestreamsplit.Encoding).EncodeFloat(s.enc[:0], v)
	s.body = append(s.body, s.enc...)
	return format.ByteStreamSplit, err
}

// dictPage is the chunk's dictionary page (header and compressed PLAIN
// values), or nil without one.
func (c *column) dictPage(s *scratch, runID string) ([]byte, int, error) {
	s.body = s.body[:0]
	n := 0
	switch {
	case c.kind == kindRunID:
		s.body = binary.LittleEndian.AppendUint32(s.body, uint32(len(runID)))
		s.body = append(s.body, runID...)
		n = 1
	case c.dict != nil && len(c.dict.vals) > 0:
		for _, x := range c.dict.vals {
			s.body = binary.LittleEndian.AppendUint32(s.body, math.Float32bits(x))
		}
		n = len(c.dict.vals)
	default:
		return nil, 0, nil
	}
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
