package pqexport

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/synthcap"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// testCapture writes two drives (5 V + 12 V each) at 1 kHz for 20 s of
// noisy counts, with a gap, in format 2.
func testCapture(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "run1.iwcap")
	ch := func(port int, rail meter.Rail) meter.Channel {
		return meter.Channel{Port: port, Rail: rail, VoltLSB: 0.00125, CurrentLSB: 0.0001}
	}
	h := capture.Header{Created: "2026-01-01T00:00:00Z", Meter: meter.Info{Kind: "hub", Model: "emu"}, RateHz: 1000, StartHost: 1e12, Tool: "idlewatt test",
		Channels: []meter.Channel{ch(1, meter.Rail5V), ch(1, meter.Rail12V), ch(2, meter.Rail5V), ch(2, meter.Rail12V)},
		Drives:   []capture.DriveInfo{{Port: 1, Name: "alpha", Profile: "p1"}, {Port: 2, Name: "beta"}}}
	w, err := capture.Create(path, h, capture.Options{FlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	idx := uint64(0)
	for f := range 20 {
		if f == 7 {
			if err := w.Gap(meter.Gap{Channel: -1, Start: idx, Count: 333, Reason: "crc"}); err != nil {
				t.Fatal(err)
			}
			idx += 333
		}
		for c := range h.Channels {
			b := &meter.Block{Channel: c, Start: idx, V: make([]units.Volts, 1000), I: make([]units.Amps, 1000)}
			for k := range b.V {
				vc, ic := 4000+rng.IntN(3), 1000*(c+1)+rng.IntN(80)
				b.V[k] = units.Volts(float32(float64(vc) * 0.00125))
				b.I[k] = units.Amps(float32(float64(ic) * 0.0001))
			}
			if err := w.Samples(b); err != nil {
				t.Fatal(err)
			}
		}
		idx += 1000
		_ = w.Flush()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func readFloat64(t *testing.T, path, col string) (vals []float64, nulls int) {
	t.Helper()
	return readFloats[float64, *file.Float64ColumnChunkReader](t, path, col)
}

func readFloat32(t *testing.T, path, col string) (vals []float32, nulls int) {
	t.Helper()
	return readFloats[float32, *file.Float32ColumnChunkReader](t, path, col)
}

// readFloats reads column col of the file at path with Arrow's reader:
// its values and how many are null.
func readFloats[T float32 | float64, R interface {
	ReadBatch(int64, []T, []int16, []int16) (int64, int, error)
}](t *testing.T, path, col string) (vals []T, nulls int) {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	ci := rdr.MetaData().Schema.ColumnIndexByName(col)
	if ci < 0 {
		t.Fatalf("%s: no column %s", path, col)
	}
	for g := 0; g < rdr.NumRowGroups(); g++ {
		rg := rdr.RowGroup(g)
		n := rg.NumRows()
		cr, err := rg.Column(ci)
		if err != nil {
			t.Fatal(err)
		}
		fr, ok := cr.(R)
		if !ok {
			t.Fatalf("%s: column %s is %T", path, col, cr)
		}
		v, def := make([]T, n), make([]int16, n)
		for read := int64(0); read < n; {
			tot, got, err := fr.ReadBatch(n-read, v[:n-read], def[:n-read], nil)
			if err != nil {
				t.Fatal(err)
			}
			vals = append(vals, v[:got]...)
			nulls += int(tot) - got
			read += tot
			if tot == 0 {
				break
			}
		}
	}
	return vals, nulls
}

func readInt32(t *testing.T, path, col string) []int32 {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	ci := rdr.MetaData().Schema.ColumnIndexByName(col)
	var out []int32
	for g := 0; g < rdr.NumRowGroups(); g++ {
		rg := rdr.RowGroup(g)
		n := rg.NumRows()
		cr, _ := rg.Column(ci)
		ir := cr.(*file.Int32ColumnChunkReader)
		v := make([]int32, n)
		_, got, err := ir.ReadBatch(n, v, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v[:got]...)
	}
	return out
}

// TestReadBackWithArrow: Arrow Go's Parquet reader (an implementation
// independent of the writer's) reads samples.parquet and summary.parquet;
// per drive, the mean of power_w is report.json's average_w and its sum ×
// duration_s / samples_count is energy_j, within power_w's rounding to
// float32 (2⁻²⁴ relative); the footer's channel list gives the capture's
// LSBs, and every current reading is a whole count of its LSB.
func TestReadBackWithArrow(t *testing.T) {
	dir := t.TempDir()
	path := testCapture(t, dir)
	rep, err := analysis.Analyze(path, analysis.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "pq")
	if err := Write(path, rep, out, Options{Host: "testhost"}); err != nil {
		t.Fatal(err)
	}
	smp := filepath.Join(out, "samples.parquet")
	power, nulls := readFloat32(t, smp, "power_w")
	ports := readInt32(t, smp, "port")
	// power_w is null on the gap rows only; non-null values are in row order.
	if nulls != 2 {
		t.Errorf("%d null power_w cells, want 2 (the gap row of each drive)", nulls)
	}
	sum := map[int32]float64{}
	cnt := map[int32]int{}
	k := 0
	// A null power_w has no value in power: the gap rows, which
	// gap_samples marks.
	gaps := readInt64(t, smp, "gap_samples")
	for i, p := range ports {
		if gaps[i] > 0 {
			continue
		}
		sum[p] += float64(power[k])
		cnt[p]++
		k++
	}
	if k != len(power) {
		t.Fatalf("%d power values, %d non-gap rows", len(power), k)
	}
	sumAvg, _ := readFloat64(t, filepath.Join(out, "summary.parquet"), "average_w")
	sumE, _ := readFloat64(t, filepath.Join(out, "summary.parquet"), "energy_j")
	for i, d := range rep.Drives {
		p := int32(d.Port)
		if uint64(cnt[p]) != d.Samples.Count {
			t.Errorf("drive %s: %d rows with power, report counts %d", d.Name, cnt[p], d.Samples.Count)
		}
		avg := sum[p] / float64(cnt[p])
		energy := sum[p] * float64(d.DurationS) / float64(d.Samples.Count)
		// Each value is within 2⁻²⁴ of its double, so their sum is too
		// (the values are positive); 1e-12 is the sums' own rounding.
		if rel(avg, float64(d.AverageW)) > f32Rel+1e-12 || rel(energy, float64(d.EnergyJ)) > f32Rel+1e-12 {
			t.Errorf("drive %s: Parquet gives %.12g W, %.12g J; report %.12g W, %.12g J", d.Name, avg, energy, d.AverageW, d.EnergyJ)
		}
		if sumAvg[i] != float64(d.AverageW) || sumE[i] != float64(d.EnergyJ) {
			t.Errorf("drive %s: summary.parquet %v W %v J, report %v W %v J", d.Name, sumAvg[i], sumE[i], d.AverageW, d.EnergyJ)
		}
		if d.AverageW <= 0 {
			t.Errorf("drive %s: average %v", d.Name, d.AverageW)
		}
	}
	checkChannelsKV(t, smp, path)
	// No clobbering: the directory exists now.
	if err := Write(path, rep, out, Options{}); !errors.Is(err, outfile.ErrRefused) {
		t.Errorf("second export into %s: %v, want refused", out, err)
	}
	if err := Write(path, rep, out, Options{Overwrite: true}); err != nil {
		t.Errorf("export with Overwrite: %v", err)
	}
}

// checkChannelsKV: samples.parquet's key-value metadata, as Arrow reads
// it, names schema v2 and lists the capture's channels with their LSBs;
// with them every
// present rail5_a and rail12_a value (Arrow's reading) is round(value /
// lsb) × lsb rounded to float32 — the count comes back.
func checkChannelsKV(t *testing.T, smp, capPath string) {
	t.Helper()
	rdr, err := file.OpenParquetFile(smp, false)
	if err != nil {
		t.Fatal(err)
	}
	kv := rdr.MetaData().KeyValueMetadata().FindValue(ChannelsKey)
	schema := rdr.MetaData().KeyValueMetadata().FindValue(SchemaKey)
	rdr.Close()
	if schema == nil || *schema != "idlewatt.samples/v2" {
		t.Errorf("%s: %s is %v, want idlewatt.samples/v2", smp, SchemaKey, schema)
	}
	if kv == nil {
		t.Fatalf("%s: no %s in the key-value metadata", smp, ChannelsKey)
	}
	var chs []ChannelLSB
	if err := json.Unmarshal([]byte(*kv), &chs); err != nil {
		t.Fatalf("%s: %v", ChannelsKey, err)
	}
	c, err := capture.Open(capPath)
	if err != nil {
		t.Fatal(err)
	}
	h := c.Header()
	c.Close()
	if len(chs) != len(h.Channels) {
		t.Fatalf("%s: %d channels, the capture has %d", ChannelsKey, len(chs), len(h.Channels))
	}
	lsb := map[string]float64{}
	for i, ch := range h.Channels {
		want := ChannelLSB{Port: ch.Port, Rail: railPrefix[railSlot(ch.Rail)], VoltLSB: float64(ch.VoltLSB), CurrentLSB: float64(ch.CurrentLSB)}
		if chs[i] != want {
			t.Errorf("%s: channel %d is %+v, the capture's %+v", ChannelsKey, i, chs[i], want)
		}
		lsb[chs[i].Rail] = chs[i].CurrentLSB // the same on every port here
	}
	for rail, l := range lsb {
		vals, _ := readFloat32(t, smp, rail+"_a")
		if len(vals) == 0 {
			t.Fatalf("no %s_a values", rail)
		}
		for _, x := range vals {
			if n := math.Round(float64(x) / l); float32(n*l) != x {
				t.Fatalf("%s_a %v: %v counts of %v A rebuild %v", rail, x, n, l, float32(n*l))
			}
		}
	}
}

func readInt64(t *testing.T, path, col string) []int64 {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	ci := rdr.MetaData().Schema.ColumnIndexByName(col)
	var out []int64
	for g := 0; g < rdr.NumRowGroups(); g++ {
		rg := rdr.RowGroup(g)
		n := rg.NumRows()
		cr, _ := rg.Column(ci)
		ir := cr.(*file.Int64ColumnChunkReader)
		v := make([]int64, n)
		_, got, err := ir.ReadBatch(n, v, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v[:got]...)
	}
	return out
}

func readStrings(t *testing.T, path, col string) []string {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	ci := rdr.MetaData().Schema.ColumnIndexByName(col)
	if ci < 0 {
		t.Fatalf("%s: no column %s", path, col)
	}
	var out []string
	for g := 0; g < rdr.NumRowGroups(); g++ {
		rg := rdr.RowGroup(g)
		n := rg.NumRows()
		cr, _ := rg.Column(ci)
		br := cr.(*file.ByteArrayColumnChunkReader)
		v := make([]parquet.ByteArray, n)
		_, got, err := br.ReadBatch(n, v, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range v[:got] {
			out = append(out, string(b))
		}
	}
	return out
}

// TestStateParquet: state.parquet, read back with Arrow Go's reader, has
// one row per detected state interval; per drive and state its row count is
// states.json's spans, Σ energy_j ÷ Σ duration_s its power_w and Σ
// duration_s ÷ measured_s its residency (1e-9 relative); intervals follow
// one another in time.
func TestStateParquet(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "review.iwcap")
	if err := synthcap.Write(path, synthcap.Review(3*time.Minute, 2000, 10)); err != nil {
		t.Fatal(err)
	}
	opts := analysis.DefaultOptions()
	opts.States = &analysis.StateOptions{}
	rep, err := analysis.Analyze(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "pq")
	if err := Write(path, rep, out, Options{}); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(out, "state.parquet")
	ports, states := readInt32(t, f, "port"), readStrings(t, f, "state")
	dur, _ := readFloat64(t, f, "duration_s")
	energy, _ := readFloat64(t, f, "energy_j")
	mean, _ := readFloat64(t, f, "mean_power_w")
	start, _ := readFloat64(t, f, "start_s")
	end, _ := readFloat64(t, f, "end_s")
	if len(ports) == 0 || len(states) != len(ports) || len(dur) != len(ports) || len(energy) != len(ports) {
		t.Fatalf("state.parquet: %d ports, %d states, %d durations, %d energies", len(ports), len(states), len(dur), len(energy))
	}
	type key struct {
		port  int32
		state string
	}
	n, d, e := map[key]int{}, map[key]float64{}, map[key]float64{}
	for i := range ports {
		k := key{ports[i], states[i]}
		n[k]++
		d[k] += dur[i]
		e[k] += energy[i]
		if rel(mean[i]*dur[i], energy[i]) > 1e-12 || end[i] < start[i] || rel(end[i]-start[i], dur[i]) > 1e-6 {
			t.Fatalf("row %d: mean %v × %v s ≠ %v J, or [%v, %v] s", i, mean[i], dur[i], energy[i], start[i], end[i])
		}
		if i > 0 && ports[i] == ports[i-1] && start[i] < end[i-1]-1e-9 {
			t.Fatalf("row %d starts at %v s, before row %d ends (%v s)", i, start[i], i-1, end[i-1])
		}
	}
	classified := 0
	for _, sr := range rep.States {
		if sr.Residency == nil {
			continue
		}
		classified++
		for st, spans := range sr.Spans {
			k := key{int32(sr.Port), st}
			if n[k] != spans {
				t.Errorf("port %d %s: %d rows, states.json %d intervals", sr.Port, st, n[k], spans)
			}
			if spans == 0 {
				continue
			}
			if rel(e[k]/d[k], float64(sr.PowerW[st])) > 1e-9 || rel(d[k]/float64(sr.MeasuredS), sr.Residency[st]) > 1e-9 {
				t.Errorf("port %d %s: %v W and residency %v from state.parquet; states.json %v W, %v", sr.Port, st, e[k]/d[k], d[k]/float64(sr.MeasuredS), sr.PowerW[st], sr.Residency[st])
			}
		}
	}
	if classified != 2 || len(n) < 4 {
		t.Fatalf("%d drives classified, %d drive-state pairs: the test needs both drives and several states", classified, len(n))
	}
}

func rel(a, b float64) float64 { return math.Abs(a-b) / math.Max(math.Abs(b), 1e-300) }
