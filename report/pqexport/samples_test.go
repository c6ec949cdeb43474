package pqexport

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	pq "github.com/parquet-go/parquet-go"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// railCapture writes a capture of drives at 1 kHz: ports[d]'s channels on
// rails[d], blocks of 1000 samples of random counts over counts values
// (vary: a new range every block); block 3 is a gap on every channel, and
// in block 5 the last channel has no samples.
func railCapture(t *testing.T, path string, ports []int, rails [][]meter.Rail, blocks, counts int) {
	t.Helper()
	h := capture.Header{Created: "2026-01-01T00:00:00Z", Meter: meter.Info{Kind: "hub", Model: "emu"}, RateHz: 1000, StartHost: 1e12, Tool: "idlewatt test"}
	for d, p := range ports {
		for _, r := range rails[d] {
			h.Channels = append(h.Channels, meter.Channel{Port: p, Rail: r, VoltLSB: 0.00125, CurrentLSB: 0.0001})
		}
		h.Drives = append(h.Drives, capture.DriveInfo{Port: p})
	}
	w, err := capture.Create(path, h, capture.Options{FlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for f := range blocks {
		idx := uint64(f * 1000)
		if f == 3 {
			if err := w.Gap(meter.Gap{Channel: -1, Start: idx, Count: 1000, Reason: "crc"}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		for c := range h.Channels {
			if f == 5 && c == len(h.Channels)-1 {
				continue
			}
			b := &meter.Block{Channel: c, Start: idx, V: make([]units.Volts, 1000), I: make([]units.Amps, 1000)}
			for k := range b.V {
				b.V[k] = units.Volts(float32(float64(4000+rng.IntN(3)) * 0.00125))
				b.I[k] = units.Amps(float32(float64(1000*(c+1)+rng.IntN(counts)) * 0.0001))
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

type rowKey struct {
	port  int32
	index int64
}

// wantRow is one row as the documentation defines it, and its readings
// in double as the capture and analysis have them: the capture's V and A
// and the drive's Σ V × A.
type wantRow struct {
	row   SampleRow
	exact [numReadings]*float64
}

// expectedRows are samples.parquet's rows as the documentation defines
// them, taken row by row from capture.Rows.
func expectedRows(t *testing.T, path string) map[rowKey]wantRow {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	h := r.Header()
	run := capture.RunID(h)
	ptr := func(x float64) *float64 { return &x }
	out := map[rowKey]wantRow{}
	rows := capture.NewRows(r)
	for {
		row, err := rows.Next()
		if err == io.EOF || errors.Is(err, capture.ErrTruncated) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range drivesOf(&h) {
			var w wantRow
			all, any := true, false
			var sum float64
			for i, c := range d.chans {
				if !row.Present[c] {
					all = false
					continue
				}
				v, a := float64(row.V[c]), float64(row.I[c])
				sum += v * a
				any = true
				if s := railSlot(d.rails[i]); s >= 0 {
					w.exact[2*s], w.exact[2*s+1] = ptr(v), ptr(a)
				}
			}
			if all && any {
				w.exact[6] = ptr(sum)
			}
			w.row = SampleRow{RunID: run, TimeS: float64(row.Index) / float64(h.RateHz), SampleIndex: int64(row.Index), Port: int32(d.port), GapSamples: int64(row.Gap)}
			for k, p := range readings(&w.row) {
				if x := w.exact[k]; x != nil {
					f := float32(*x)
					*p = &f
				}
			}
			out[rowKey{w.row.Port, w.row.SampleIndex}] = w
		}
	}
}

// readings are r's reading fields in column order (colNames').
func readings(r *SampleRow) [numReadings]**float32 {
	return [...]**float32{&r.V5, &r.A5, &r.V12, &r.A12, &r.V33, &r.A33, &r.PowerW}
}

// rowString shows r with its readings' values (%+v would show pointers).
func rowString(r SampleRow) string {
	s := fmt.Sprintf("{%s %v s, index %d, port %d, gap %d:", r.RunID, r.TimeS, r.SampleIndex, r.Port, r.GapSamples)
	for k, p := range readings(&r) {
		if *p != nil {
			s += fmt.Sprintf(" %s %v", colNames[colReadings+k], **p)
		}
	}
	return s + "}"
}

func sameOpt(a, b *float32) bool {
	return (a == nil) == (b == nil) && (a == nil || math.Float32bits(*a) == math.Float32bits(*b))
}

func sameRow(a, b SampleRow) bool {
	same := a.RunID == b.RunID && math.Float64bits(a.TimeS) == math.Float64bits(b.TimeS) && a.SampleIndex == b.SampleIndex &&
		a.Port == b.Port && a.GapSamples == b.GapSamples
	ra, rb := readings(&a), readings(&b)
	for k := range ra {
		same = same && sameOpt(*ra[k], *rb[k])
	}
	return same
}

// f32Rel is the most a double moves, relative to itself, when rounded to
// the nearest float32 (half its 24-bit significand's unit in the last place).
const f32Rel = 0x1p-24

// nearCapture says how row's readings differ from the capture's doubles:
// V and A not at all (a capture's readings are float32s), power_w by at
// most its rounding to float32.
func nearCapture(row SampleRow, exact [numReadings]*float64) error {
	for k, p := range readings(&row) {
		got, want := *p, exact[k]
		if (got == nil) != (want == nil) {
			return fmt.Errorf("%s: %v, capture %v", colNames[colReadings+k], got, want)
		}
		if got == nil {
			continue
		}
		g, w := float64(*got), *want
		computed := k == 6 // power_w
		if d := math.Abs(g - w); !computed && d != 0 || d > f32Rel*math.Abs(w) {
			return fmt.Errorf("%s: %v, capture %v (%.3g relative)", colNames[colReadings+k], g, w, d/math.Abs(w))
		}
	}
	// A rail's watts, which v1 stored as float32(V × A in double), are
	// the reader's float32 product of the columns bit for bit (docs/lab.md
	// gives it as rail5_v * rail5_a).
	r := readings(&row)
	for s := 0; s < 3; s++ {
		v, a := *r[2*s], *r[2*s+1]
		if v == nil || a == nil {
			continue
		}
		if p, v1 := *v**a, float32(float64(*v)*float64(*a)); math.Float32bits(p) != math.Float32bits(v1) {
			return fmt.Errorf("%s × %s: float32 product %v, v1's rail watts %v", colNames[colReadings+2*s], colNames[colReadings+2*s+1], p, v1)
		}
	}
	return nil
}

// checkSamples reads samples.parquet back with parquet-go's reader (not
// the code that framed it) and Arrow Go's, and checks every row against
// the capture's, bit for bit; each row group holds one drive in index
// order (interleaved: every drive at each index, in the header's order),
// and its statistics (Arrow's reading) bound its port, index and time.
func checkSamples(t *testing.T, capPath, pqPath string, interleaved bool) {
	t.Helper()
	want := expectedRows(t, capPath)
	got, err := pq.ReadFile[SampleRow](pqPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows, the capture gives %d", len(got), len(want))
	}
	for i, g := range got {
		w, ok := want[rowKey{g.Port, g.SampleIndex}]
		if !ok || !sameRow(g, w.row) {
			t.Fatalf("row %d (port %d, index %d): %s, want %s", i, g.Port, g.SampleIndex, rowString(g), rowString(w.row))
		}
		if err := nearCapture(g, w.exact); err != nil {
			t.Fatalf("row %d (port %d, index %d): %v", i, g.Port, g.SampleIndex, err)
		}
		delete(want, rowKey{g.Port, g.SampleIndex})
	}
	rdr, err := file.OpenParquetFile(pqPath, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	if rdr.NumRows() != int64(len(got)) {
		t.Errorf("Arrow: %d rows, parquet-go %d", rdr.NumRows(), len(got))
	}
	// The columns docs/lab.md lists for schema v2, and no rail watts.
	sc := rdr.MetaData().Schema
	var names []string
	for i := 0; i < sc.NumColumns(); i++ {
		names = append(names, sc.Column(i).Name())
	}
	if !slices.Equal(names, colNames[:]) || !slices.Equal(colNames[colReadings:], []string{"rail5_v", "rail5_a", "rail12_v", "rail12_a", "rail3v3_v", "rail3v3_a", "power_w"}) {
		t.Errorf("Arrow: columns %v", names)
	}
	// Interleaved, each index's rows go in the header's drive order.
	c, err := capture.Open(capPath)
	if err != nil {
		t.Fatal(err)
	}
	h := c.Header()
	c.Close()
	portOrder := map[int32]int{}
	var lastPort int32
	for i, d := range drivesOf(&h) {
		portOrder[int32(d.port)], lastPort = i, int32(d.port)
	}
	row := 0
	for g := 0; g < rdr.NumRowGroups(); g++ {
		n := int(rdr.MetaData().RowGroup(g).NumRows())
		rows := got[row : row+n]
		lo, hi := rows[0].Port, rows[0].Port
		for i := range rows {
			lo, hi = min(lo, rows[i].Port), max(hi, rows[i].Port)
			if i == 0 {
				continue
			}
			ok := rows[i].Port == rows[0].Port && rows[i].SampleIndex > rows[i-1].SampleIndex
			if interleaved {
				next := rows[i-1].SampleIndex + max(rows[i-1].GapSamples, 1)
				ok = rows[i].SampleIndex == next && portOrder[rows[i].Port] == 0 && rows[i-1].Port == lastPort ||
					rows[i].SampleIndex == rows[i-1].SampleIndex && portOrder[rows[i].Port] == portOrder[rows[i-1].Port]+1
			}
			if !ok {
				t.Fatalf("row group %d: row %d is port %d index %d after port %d index %d", g, i, rows[i].Port, rows[i].SampleIndex, rows[i-1].Port, rows[i-1].SampleIndex)
			}
		}
		// power_w's bounds, as floats, where the row group has a value.
		plo, phi := float32(math.Inf(1)), float32(math.Inf(-1))
		for _, r := range rows {
			if r.PowerW != nil {
				plo, phi = min(plo, *r.PowerW), max(phi, *r.PowerW)
			}
		}
		if plo <= phi {
			pw := chunkStats(t, rdr, g, "power_w").(*metadata.Float32Statistics)
			if pw.Min() != plo || pw.Max() != phi {
				t.Errorf("row group %d: power_w statistics [%v, %v], rows [%v, %v]", g, pw.Min(), pw.Max(), plo, phi)
			}
		}
		ps := chunkStats(t, rdr, g, "port").(*metadata.Int32Statistics)
		is := chunkStats(t, rdr, g, "sample_index").(*metadata.Int64Statistics)
		ts := chunkStats(t, rdr, g, "time_s").(*metadata.Float64Statistics)
		if ps.Min() != lo || ps.Max() != hi || is.Min() != rows[0].SampleIndex || is.Max() != rows[n-1].SampleIndex ||
			ts.Min() != rows[0].TimeS || ts.Max() != rows[n-1].TimeS {
			t.Errorf("row group %d: statistics port [%d, %d], index [%d, %d], time [%v, %v]; rows port [%d, %d], %d … %d", g,
				ps.Min(), ps.Max(), is.Min(), is.Max(), ts.Min(), ts.Max(), lo, hi, rows[0].SampleIndex, rows[n-1].SampleIndex)
		}
		row += n
	}
	// Arrow's column reader over the values: power_w's nulls and sum.
	power, nulls := readFloat32(t, pqPath, "power_w")
	var sum, wsum float64
	wnulls := 0
	for _, g := range got {
		if g.PowerW == nil {
			wnulls++
		} else {
			wsum += float64(*g.PowerW)
		}
	}
	for _, p := range power {
		sum += float64(p)
	}
	if nulls != wnulls || sum != wsum {
		t.Errorf("Arrow: power_w %d nulls, Σ %v; parquet-go %d, %v", nulls, sum, wnulls, wsum)
	}
}

// chunkStats is Arrow's reading of a column chunk's statistics.
func chunkStats(t *testing.T, rdr *file.Reader, g int, col string) metadata.TypedStatistics {
	t.Helper()
	cc, err := rdr.MetaData().RowGroup(g).ColumnChunk(rdr.MetaData().Schema.ColumnIndexByName(col))
	if err != nil {
		t.Fatal(err)
	}
	st, err := cc.Statistics()
	if err != nil || st == nil || !st.HasMinMax() {
		t.Fatalf("row group %d: %s statistics %v, %v", g, col, st, err)
	}
	return st
}

// TestSamplesRows: every row of samples.parquet, read back by parquet-go
// and Arrow Go, is the capture's (gap rows, a rail missing for a block,
// drives with 2 and 3 rails), one drive per row group.
func TestSamplesRows(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rails.iwcap")
	railCapture(t, path, []int{1, 2}, [][]meter.Rail{{meter.Rail5V, meter.Rail12V}, {meter.Rail5V, meter.Rail12V, meter.Rail3V3}}, 9, 80)
	out := filepath.Join(dir, "pq")
	if err := Write(path, &analysis.Report{}, out, Options{}); err != nil {
		t.Fatal(err)
	}
	checkSamples(t, path, filepath.Join(out, "samples.parquet"), false)
}

// small is layoutFor's lanes with pages of 256 sample indices and spans
// of 1024; interleave puts every drive in one lane.
func small(interleave bool) func(int) ([][]int, int, int) {
	return func(drives int) ([][]int, int, int) {
		lanes, _, _ := layoutFor(drives)
		if interleave {
			lanes = [][]int{slices.Concat(lanes...)}
		}
		return lanes, 256, 1024
	}
}

// TestSamplesPagesAndGroups: with pages of 256 indices and spans of 1024
// (a partial last page and span), 3 drives' rows come back whole, in a
// lane per drive and in one lane.
func TestSamplesPagesAndGroups(t *testing.T) {
	defer func(l func(int) ([][]int, int, int)) { layout = l }(layout)
	dir := t.TempDir()
	path := filepath.Join(dir, "three.iwcap")
	r5 := []meter.Rail{meter.Rail5V}
	railCapture(t, path, []int{4, 2, 7}, [][]meter.Rail{r5, r5, {meter.Rail5V, meter.Rail12V}}, 9, 200)
	// 8001 indices (8 blocks and a gap row): 7 spans of 1024 and one of 833.
	for _, c := range []struct {
		interleave bool
		groups     int
	}{{false, 3 * 8}, {true, 8}} {
		layout = small(c.interleave)
		out := filepath.Join(dir, fmt.Sprint("pq", c.interleave))
		if err := Write(path, &analysis.Report{}, out, Options{}); err != nil {
			t.Fatal(err)
		}
		smp := filepath.Join(out, "samples.parquet")
		checkSamples(t, path, smp, c.interleave)
		rdr, err := file.OpenParquetFile(smp, false)
		if err != nil {
			t.Fatal(err)
		}
		if g := rdr.NumRowGroups(); g != c.groups {
			t.Errorf("interleaved %v: %d row groups, want %d", c.interleave, g, c.groups)
		}
		rdr.Close()
	}
}

// TestSamplesManyDrives: past maxLanes drives, one lane holds them all,
// interleaved at each index as the rows come.
func TestSamplesManyDrives(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "many.iwcap")
	var ports []int
	var rails [][]meter.Rail
	for d := range maxLanes + 3 {
		ports = append(ports, 100-d)
		rails = append(rails, []meter.Rail{meter.Rail5V})
	}
	railCapture(t, path, ports, rails, 6, 80)
	out := filepath.Join(dir, "pq")
	if err := Write(path, &analysis.Report{}, out, Options{}); err != nil {
		t.Fatal(err)
	}
	checkSamples(t, path, filepath.Join(out, "samples.parquet"), true)
}

// TestSamplesDictionaryFull: a reading with more distinct values in a
// column chunk than the dictionary takes goes on BYTE_STREAM_SPLIT, and
// reads back the same.
func TestSamplesDictionaryFull(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "wide.iwcap")
	railCapture(t, path, []int{1}, [][]meter.Rail{{meter.Rail5V}}, 200, 1<<24)
	out := filepath.Join(dir, "pq")
	if err := Write(path, &analysis.Report{}, out, Options{}); err != nil {
		t.Fatal(err)
	}
	smp := filepath.Join(out, "samples.parquet")
	checkSamples(t, path, smp, false)
	rdr, err := file.OpenParquetFile(smp, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	cc, err := rdr.MetaData().RowGroup(0).ColumnChunk(rdr.MetaData().Schema.ColumnIndexByName("rail5_a"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(cc.Encodings(), parquet.Encodings.ByteStreamSplit) || !slices.Contains(cc.Encodings(), parquet.Encodings.RLEDict) {
		t.Errorf("rail5_a's encodings %v: want the dictionary, then BYTE_STREAM_SPLIT", cc.Encodings())
	}
}

// TestSamplesEmpty: a capture without samples gives a samples.parquet of
// no rows that both readers open.
func TestSamplesEmpty(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "empty.iwcap")
	railCapture(t, path, []int{1}, [][]meter.Rail{{meter.Rail5V}}, 0, 1)
	out := filepath.Join(dir, "pq")
	if err := Write(path, &analysis.Report{}, out, Options{}); err != nil {
		t.Fatal(err)
	}
	checkSamples(t, path, filepath.Join(out, "samples.parquet"), false)
}

// TestSamplesStop: a stop at any page set ends Write with its error and
// leaves no directory.
func TestSamplesStop(t *testing.T) {
	defer func(l func(int) ([][]int, int, int)) { layout = l }(layout)
	layout = small(false)
	dir := t.TempDir()
	path := filepath.Join(dir, "stop.iwcap")
	railCapture(t, path, []int{1, 2}, [][]meter.Rail{{meter.Rail5V}, {meter.Rail5V}}, 9, 80)
	errStop := errors.New("stopped")
	for _, at := range []int{1, 2, 5, 20} {
		calls := 0
		stop := func() error {
			calls++
			if calls >= at {
				return errStop
			}
			return nil
		}
		out := filepath.Join(dir, fmt.Sprintf("pq%d", at))
		if err := Write(path, &analysis.Report{}, out, Options{Stop: stop}); !errors.Is(err, errStop) {
			t.Errorf("stop at call %d: %v", at, err)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stop at call %d: %s is there (%v)", at, out, err)
		}
	}
}

func TestLayoutFor(t *testing.T) {
	pow2 := func(x int) bool { return x > 0 && x&(x-1) == 0 }
	for _, d := range []int{1, 2, 3, 8, 9, 40, 300, 2048, 100000} {
		lanes, p, g := layoutFor(d)
		perLane := d / len(lanes)
		if d <= maxLanes && (len(lanes) != d || perLane != 1) || d > maxLanes && len(lanes) != 1 {
			t.Errorf("%d drives: %d lanes", d, len(lanes))
		}
		if !pow2(p) || !pow2(g) || g < p || (p > 1 && (p*d > pageSetRows || p*perLane > maxPageRows)) ||
			(g > p && (g*d > groupSetRows || g*perLane > RowGroupRows)) {
			t.Errorf("%d drives: pages of %d indices, spans of %d", d, p, g)
		}
		if p < 2 && d <= maxPageRows || p*2*d <= pageSetRows && p*2*perLane <= maxPageRows && p < maxPageRows {
			t.Errorf("%d drives: pages of %d indices, not the most that fit", d, p)
		}
		if d <= 2 && (p != maxPageRows || g != RowGroupRows) {
			t.Errorf("%d drives: pages of %d rows, row groups of %d; want %d, %d", d, p, g, maxPageRows, RowGroupRows)
		}
	}
}
