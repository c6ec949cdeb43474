package pqexport

import (
	"bytes"
	"io"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/rle"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// noisyCapture writes one drive (5 V and 12 V) at 1 kHz for n samples:
// the 5 V current a level that moves every 50 000 samples plus Gaussian
// noise of sigma counts (a hub's 0.5 mA noise is about 60 of its counts), the
// 12 V current 40 counts of uniform noise, the voltages constant; samples
// 1000-1999 are a gap.
func noisyCapture(t *testing.T, path string, n int, sigma float64) {
	t.Helper()
	h := capture.Header{Created: "2026-01-01T00:00:00Z", Meter: meter.Info{Kind: "hub", Model: "emu"}, RateHz: 1000, StartHost: 1e12, Tool: "idlewatt test",
		Channels: []meter.Channel{{Port: 1, Rail: meter.Rail5V, VoltLSB: 0.00125, CurrentLSB: 0.0001}, {Port: 1, Rail: meter.Rail12V, VoltLSB: 0.00125, CurrentLSB: 0.0001}},
		Drives:   []capture.DriveInfo{{Port: 1}}}
	w, err := capture.Create(path, h, capture.Options{FlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for start := 0; start < n; start += 1000 {
		if start == 1000 {
			if err := w.Gap(meter.Gap{Channel: -1, Start: uint64(start), Count: 1000, Reason: "crc"}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		m := min(1000, n-start)
		for c := range h.Channels {
			b := &meter.Block{Channel: c, Start: uint64(start), V: make([]units.Volts, m), I: make([]units.Amps, m)}
			for k := range m {
				var ic int
				if c == 0 {
					level := 5000 + 1500*((start+k)/50000%3)
					ic = level + int(math.Round(rng.NormFloat64()*sigma))
				} else {
					ic = 2000 + rng.IntN(40)
				}
				b.V[k] = units.Volts(float32(float64(4000+400*c) * 0.00125))
				b.I[k] = units.Amps(float32(float64(ic) * 0.0001))
			}
			if err := w.Samples(b); err != nil {
				t.Fatal(err)
			}
		}
		_ = w.Flush()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// dataPage is one data page of a column chunk as its bytes say: its
// encoding, rows, and for RLE_DICTIONARY its bit width and indices.
type dataPage struct {
	enc   format.Encoding
	rows  int
	width int
	idx   []int32
}

// chunkPages reads column col of row group g of the samples.parquet at
// path page by page from its bytes (headers with parquet-go's thrift
// decoder, values with its RLE decoder, zstd with klauspost's): the
// dictionary of a FLOAT column and its data pages, and the bytes of the
// data pages (with their headers).
func chunkPages(t *testing.T, path string, g int, col string) (dict []float32, pages []dataPage, dataBytes int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := pq.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var md *format.ColumnMetaData
	for _, cc := range f.Metadata().RowGroups[g].Columns {
		if cc.MetaData.PathInSchema[0] == col {
			md = &cc.MetaData
		}
	}
	if md == nil {
		t.Fatalf("%s: no column %s", path, col)
	}
	start := md.DataPageOffset
	if md.DictionaryPageOffset > 0 {
		start = md.DictionaryPageOffset
	}
	return parsePages(t, data[start:start+md.TotalCompressedSize])
}

// parsePages reads a FLOAT column chunk's pages (chunkPages).
func parsePages(t *testing.T, chunk []byte) (dict []float32, pages []dataPage, dataBytes int) {
	t.Helper()
	zr, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	r := bytes.NewReader(chunk)
	dec := thrift.NewDecoder(new(thrift.CompactProtocol).NewReader(r))
	for r.Len() > 0 {
		at := r.Len()
		var h format.PageHeader
		if err := dec.Decode(&h); err != nil {
			t.Fatal(err)
		}
		z := make([]byte, h.CompressedPageSize)
		if _, err := io.ReadFull(r, z); err != nil {
			t.Fatal(err)
		}
		body, err := zr.DecodeAll(z, nil)
		if err != nil {
			t.Fatal(err)
		}
		if h.Type == format.DictionaryPage {
			for i := 0; i+4 <= len(body); i += 4 {
				dict = append(dict, math.Float32frombits(uint32(body[i])|uint32(body[i+1])<<8|uint32(body[i+2])<<16|uint32(body[i+3])<<24))
			}
			continue
		}
		dataBytes += at - r.Len()
		dp := h.DataPageHeader.V
		p := dataPage{enc: dp.Encoding, rows: int(dp.NumValues)}
		if p.enc == format.RLEDictionary {
			// Definition levels first (4-byte length, RLE), then the width
			// byte and the indices.
			n := int(uint32(body[0]) | uint32(body[1])<<8 | uint32(body[2])<<16 | uint32(body[3])<<24)
			vals := body[4+n:]
			p.width = int(vals[0])
			if p.idx, err = new(rle.DictionaryEncoding).DecodeInt32(nil, vals); err != nil {
				t.Fatal(err)
			}
		}
		pages = append(pages, p)
	}
	return dict, pages, dataBytes
}

// TestSamplesNoisy: a noisy capture's samples.parquet reads back bit for
// bit with parquet-go and Arrow (checkSamples), and is coded as
// testNoisyDictionary and testTimePages say.
func TestSamplesNoisy(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "noisy.iwcap")
	noisyCapture(t, path, 300_000, 60)
	out := filepath.Join(dir, "pq")
	if err := Write(path, &analysis.Report{}, out, Options{}); err != nil {
		t.Fatal(err)
	}
	smp := filepath.Join(out, "samples.parquet")
	checkSamples(t, path, smp, false)
	t.Run("dictionary", func(t *testing.T) { testNoisyDictionary(t, smp) })
	t.Run("time pages", func(t *testing.T) { testTimePages(t, smp) })
}

// testNoisyDictionary: a noisy reading's dictionary is ordered by its
// entries' counts in the chunk, index 0 the most frequent, and its
// indices are two bytes whose zstd coding is within a quarter bit a value
// of the readings' entropy (packed at their fewest bits in first-seen
// order, 11 or 14 bits here, they took 0.7 and 1.25 bits more); a reading
// with at most 256 entries has them in frequency order.
func testNoisyDictionary(t *testing.T, smp string) {
	for _, col := range []string{"rail5_a", "power_w", "rail12_a"} {
		dict, pages, size := chunkPages(t, smp, 0, col)
		counts := map[uint32]int{}
		perIdx := make([]int, len(dict))
		n := 0
		for _, p := range pages {
			if p.enc != format.RLEDictionary {
				continue
			}
			for _, i := range p.idx {
				perIdx[i]++
				counts[math.Float32bits(dict[i])]++
				n++
			}
		}
		if n != 299_000 {
			t.Fatalf("%s: %d values in RLE_DICTIONARY pages, want 299000", col, n)
		}
		var h float64
		most := 0
		for _, c := range counts {
			p := float64(c) / float64(n)
			h -= p * math.Log2(p)
			most = max(most, c)
		}
		if perIdx[0] != most {
			t.Errorf("%s: index 0 has %d values, the most frequent entry %d", col, perIdx[0], most)
		}
		if col == "rail12_a" {
			if len(counts) > byteDict {
				t.Fatalf("%s: %d entries", col, len(counts))
			}
			for i := 1; i < len(perIdx); i++ {
				if perIdx[i] > perIdx[i-1] {
					t.Errorf("%s: index %d has %d values, index %d %d: not in frequency order", col, i, perIdx[i], i-1, perIdx[i-1])
				}
			}
			for _, p := range pages {
				or := int32(0)
				for _, i := range p.idx {
					or |= i
				}
				if p.width != bits.Len32(uint32(or)) {
					t.Errorf("%s: a page's bit width %d, its indices need %d", col, p.width, bits.Len32(uint32(or)))
				}
			}
			continue
		}
		if len(counts) <= byteDict || len(counts) > pairDict {
			t.Fatalf("%s: %d distinct readings: the test wants two-byte indices", col, len(counts))
		}
		for _, p := range pages {
			if p.width != 16 {
				t.Errorf("%s: a page's bit width %d, want 16", col, p.width)
			}
		}
		bitsPer := float64(size) * 8 / float64(n)
		t.Logf("%s: %d distinct, entropy %.2f bits, chunk %.2f bits a value", col, len(counts), h, bitsPer)
		if bitsPer > h+0.25 {
			t.Errorf("%s: the chunk takes %.2f bits a value, the readings' entropy is %.2f", col, bitsPer, h)
		}
	}
}

// testTimePages: time_s's pages hold timePageRows rows, where the other
// columns' hold a page set's.
func testTimePages(t *testing.T, smp string) {
	rows := 299_001 // the gap is one row
	_, pages, _ := chunkPages(t, smp, 0, "time_s")
	if len(pages) != 2 || pages[0].rows != timePageRows || pages[1].rows != rows-timePageRows {
		var got []int
		for _, p := range pages {
			got = append(got, p.rows)
		}
		t.Errorf("time_s pages of %v rows, want %d and %d", got, timePageRows, rows-timePageRows)
	}
	_, ipages, _ := chunkPages(t, smp, 0, "sample_index")
	if want := (rows + maxPageRows - 1) / maxPageRows; len(ipages) != want {
		t.Errorf("sample_index: %d pages, want %d", len(ipages), want)
	}
}

// TestReadingDictionaryGrows: a chunk whose dictionary grows from one
// entry to past 64 Ki over its pages (held meanwhile at 0 to 17 bits an
// index) has every value back from the encoded pages, the dictionary in
// frequency order (past pairDict entries) and each page at its fewest
// bits.
func TestReadingDictionaryGrows(t *testing.T) {
	s, err := newScratch()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	page := func(n, distinct, from int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(from+rng.IntN(distinct)) * 0.0001
		}
		return v
	}
	wide := make([]float32, 80_000) // 70 000 entries more
	for i := range wide {
		wide[i] = float32(1101+i%70_000) * 0.0001
	}
	in := [][]float32{page(1000, 1, 0), page(1000, 100, 1), page(3000, 1000, 101), wide, page(500, 3, 0)}
	rows := 0
	for _, v := range in {
		rows += len(v)
	}
	c := &column{kind: kindReading, rows: rows}
	for k, v := range in {
		lv := make([]uint8, len(v))
		for i := range lv {
			lv[i] = 1
		}
		if err := c.reading(s, lv, v); err != nil {
			t.Fatal(err)
		}
		if len(c.pend) != k+1 {
			t.Fatalf("after page %d: %d pages waiting", k, len(c.pend))
		}
	}
	if err := c.finish(s); err != nil {
		t.Fatal(err)
	}
	dict, pages, _ := parsePages(t, slices.Concat(append([][]byte{c.dictPg}, c.pages...)...))
	if len(pages) != len(in) {
		t.Fatalf("%d pages, want %d", len(pages), len(in))
	}
	count := map[uint32]int{}
	for k, p := range pages {
		if p.enc != format.RLEDictionary || len(p.idx) != len(in[k]) {
			t.Fatalf("page %d: %v, %d indices; want RLE_DICTIONARY, %d", k, p.enc, len(p.idx), len(in[k]))
		}
		or := int32(0)
		for i, x := range p.idx {
			if math.Float32bits(dict[x]) != math.Float32bits(in[k][i]) {
				t.Fatalf("page %d value %d: %v, want %v", k, i, dict[x], in[k][i])
			}
			count[math.Float32bits(dict[x])]++
			or |= x
		}
		if p.width != bits.Len32(uint32(or)) {
			t.Errorf("page %d: bit width %d, its indices need %d", k, p.width, bits.Len32(uint32(or)))
		}
	}
	for i := 1; i < len(dict); i++ {
		if count[math.Float32bits(dict[i])] > count[math.Float32bits(dict[i-1])] {
			t.Fatalf("entry %d has %d values, entry %d %d: not in frequency order", i, count[math.Float32bits(dict[i])], i-1, count[math.Float32bits(dict[i-1])])
		}
	}
}
