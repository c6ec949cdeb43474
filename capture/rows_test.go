package capture

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/units"
)

// TestRowsMatchReference reads random captures — channels skewed, blocks
// overlapping (late samples), gaps, a cut tail — with Rows and with the
// straightforward per-sample implementation it replaced (refRows, below),
// and wants the same rows, errors and late counts.
func TestRowsMatchReference(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewSource(seed))
		var buf bytes.Buffer
		w, _ := NewWriter(&buf, testHeader(), Options{FlushEvery: time.Hour, Float32Only: seed%2 == 0})
		next := [2]uint64{}
		for range 60 {
			ch := rng.Intn(2)
			start := next[ch]
			switch rng.Intn(6) {
			case 0:
				start += uint64(rng.Intn(50)) // a gap
			case 1:
				start -= min(start, uint64(rng.Intn(30))) // overlaps what came before
			}
			n := 1 + rng.Intn(40)
			w.Samples(block(ch, start, n))
			next[ch] = max(next[ch], start+uint64(n))
			if rng.Intn(10) == 0 {
				w.Flush()
			}
		}
		w.Close()
		data := buf.Bytes()
		if seed%5 == 0 {
			data = data[:len(data)*3/4] // cut short
		}
		r1, err1 := NewReader(bytes.NewReader(data))
		r2, err2 := NewReader(bytes.NewReader(data))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		a, b := NewRows(r1), newRefRows(r2)
		got, gotErr := collectRows(a.Next)
		want, wantErr := collectRows(b.Next)
		gotLate, wantLate := a.Late, b.Late
		if !reflect.DeepEqual(got, want) || !sameErr(gotErr, wantErr) || gotLate != wantLate {
			t.Fatalf("seed %d: %d rows (err %v, late %d), want %d rows (err %v, late %d)", seed, len(got), gotErr, gotLate, len(want), wantErr, wantLate)
		}
		nruns := 0
		for _, mixed := range []bool{false, true} {
			r3, _ := NewReader(bytes.NewReader(data))
			c := NewRows(r3)
			runs, runErr := collectRuns(c, mixed)
			if !reflect.DeepEqual(runs, want) || !sameErr(runErr, wantErr) || c.Late != wantLate {
				t.Fatalf("seed %d, runs (mixed %v): %d rows (err %v, late %d), want %d rows (err %v, late %d)", seed, mixed, len(runs), runErr, c.Late, len(want), wantErr, wantLate)
			}
			if !mixed {
				r4, _ := NewReader(bytes.NewReader(data))
				d := NewRows(r4)
				for {
					if _, err := d.NextRun(); err != nil {
						break
					}
					nruns++
				}
			}
		}
		// Runs are whole stretches, not single rows in disguise.
		if len(want) > 100 && nruns*4 > len(want) {
			t.Fatalf("seed %d: %d runs for %d rows", seed, nruns, len(want))
		}
	}
}

// FuzzRows reads arbitrary bytes with Rows and with the reference and wants
// the same rows, error and late count, and no panic.
func FuzzRows(f *testing.F) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, testHeader(), Options{FlushEvery: time.Hour})
	w.Samples(block(0, 100, 30))
	w.Samples(block(1, 95, 40))
	w.Flush()
	w.Samples(block(0, 120, 5)) // overlaps: late samples
	w.Samples(block(1, 200, 3))
	w.Close()
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:buf.Len()/2])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		r1, err := NewReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		r2, _ := NewReader(bytes.NewReader(data))
		a, b := NewRows(r1), newRefRows(r2)
		got, gotErr := collectRows(a.Next)
		want, wantErr := collectRows(b.Next)
		if !reflect.DeepEqual(got, want) || !sameErr(gotErr, wantErr) || a.Late != b.Late {
			t.Fatalf("%d rows (err %v, late %d), want %d rows (err %v, late %d)", len(got), gotErr, a.Late, len(want), wantErr, b.Late)
		}
		// NextRun, alone and mixed with Next, yields the same rows.
		for _, mixed := range []bool{false, true} {
			r3, _ := NewReader(bytes.NewReader(data))
			c := NewRows(r3)
			runs, runErr := collectRuns(c, mixed)
			if !reflect.DeepEqual(runs, want) || !sameErr(runErr, wantErr) || c.Late != b.Late {
				t.Fatalf("runs (mixed %v): %d rows (err %v, late %d), want %d rows (err %v, late %d)", mixed, len(runs), runErr, c.Late, len(want), wantErr, b.Late)
			}
		}
	})
}

type rowCopy struct {
	Index, Gap uint64
	Present    []bool
	V          []units.Volts
	I          []units.Amps
}

func copyRow(row *Row) rowCopy {
	return rowCopy{row.Index, row.Gap, append([]bool(nil), row.Present...), append([]units.Volts(nil), row.V...), append([]units.Amps(nil), row.I...)}
}

func collectRows(next func() (*Row, error)) ([]rowCopy, error) {
	var out []rowCopy
	for {
		row, err := next()
		if err != nil {
			return out, err
		}
		out = append(out, copyRow(row))
	}
}

// collectRuns expands NextRun's runs into rows; mixed alternates NextRun
// with Next.
func collectRuns(rs *Rows, mixed bool) ([]rowCopy, error) {
	var out []rowCopy
	for k := 0; ; k++ {
		if mixed && k%2 == 1 {
			row, err := rs.Next()
			if err != nil {
				return out, err
			}
			out = append(out, copyRow(row))
			continue
		}
		run, err := rs.NextRun()
		if err != nil {
			return out, err
		}
		if run.Gap > 0 {
			if run.N != 0 || slices.Contains(run.Present, true) {
				return out, fmt.Errorf("gap run %+v has samples", run)
			}
			n := len(run.Present)
			out = append(out, rowCopy{run.Index, run.Gap, make([]bool, n), make([]units.Volts, n), make([]units.Amps, n)})
			continue
		}
		if run.N < 1 {
			return out, fmt.Errorf("run at %d has N = %d", run.Index, run.N)
		}
		for j := range run.N {
			n := len(run.Present)
			rc := rowCopy{run.Index + uint64(j), 0, append([]bool(nil), run.Present...), make([]units.Volts, n), make([]units.Amps, n)}
			for c := range n {
				if run.Present[c] {
					rc.V[c], rc.I[c] = run.V[c][j], run.I[c][j]
				}
			}
			out = append(out, rc)
		}
	}
}

func sameErr(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Error() == b.Error() && errors.Is(a, io.EOF) == errors.Is(b, io.EOF)
}

// refRows is Rows as first written, one queue entry per sample: the
// reference TestRowsMatchReference holds Rows to.
type refQueue struct {
	idx  []uint64
	v    []units.Volts
	i    []units.Amps
	head int
}

func (q *refQueue) len() int { return len(q.idx) - q.head }

func (q *refQueue) push(idx uint64, v units.Volts, i units.Amps) {
	if q.head > 0 && q.head >= len(q.idx)/2 {
		n := copy(q.idx, q.idx[q.head:])
		copy(q.v, q.v[q.head:])
		copy(q.i, q.i[q.head:])
		q.idx, q.v, q.i, q.head = q.idx[:n], q.v[:n], q.i[:n], 0
	}
	q.idx, q.v, q.i = append(q.idx, idx), append(q.v, v), append(q.i, i)
}

type refRows struct {
	r       *Reader
	qs      []refQueue
	row     Row
	next    uint64
	started bool
	end     error
	Late    uint64
}

func newRefRows(r *Reader) *refRows {
	n := len(r.Header().Channels)
	return &refRows{r: r, qs: make([]refQueue, n),
		row: Row{Present: make([]bool, n), V: make([]units.Volts, n), I: make([]units.Amps, n)}}
}

// Next returns the next row; io.EOF at a clean end; the Reader's error
// (e.g. ErrTruncated) after the last row it could deliver.
func (rs *refRows) Next() (*Row, error) {
	if err := rs.fill(); err != nil {
		return nil, err
	}
	var cur uint64
	found := false
	for c := range rs.qs {
		if q := &rs.qs[c]; q.len() > 0 && (!found || q.idx[q.head] < cur) {
			cur, found = q.idx[q.head], true
		}
	}
	if !found {
		return nil, rs.end
	}
	row := &rs.row
	clear(row.Present)
	clear(row.V)
	clear(row.I)
	if rs.started && cur > rs.next {
		row.Index, row.Gap = rs.next, cur-rs.next
		rs.next = cur
		return row, nil
	}
	row.Index, row.Gap = cur, 0
	for c := range rs.qs {
		if q := &rs.qs[c]; q.len() > 0 && q.idx[q.head] == cur {
			row.Present[c], row.V[c], row.I[c] = true, q.v[q.head], q.i[q.head]
			q.head++
		}
	}
	rs.started, rs.next = true, cur+1
	return row, nil
}

// fill reads until every channel has a sample queued, the reader ends, or
// maxAhead samples are buffered.
func (rs *refRows) fill() error {
	for rs.end == nil {
		total, empty := 0, false
		for c := range rs.qs {
			total += rs.qs[c].len()
			empty = empty || rs.qs[c].len() == 0
		}
		if !empty || total >= maxAhead {
			return nil
		}
		rec, err := rs.r.Next()
		if err != nil {
			rs.end = err
			if !errors.Is(err, io.EOF) && !errors.Is(err, ErrTruncated) {
				return err // an I/O error: stop now
			}
			return nil
		}
		if rec.Kind != KindSamples {
			continue
		}
		b := rec.Block
		q := &rs.qs[b.Channel]
		for k := range b.V {
			idx := b.Start + uint64(k)
			if rs.started && idx < rs.next || q.len() > 0 && idx <= q.idx[len(q.idx)-1] {
				rs.Late++ // behind what was already emitted: a meter or writer fault
				continue
			}
			q.push(idx, b.V[k], b.I[k])
		}
	}
	return nil
}

// wrapped is a RecordSource that is not a *Reader: a wrapper of one, as a
// cancellable reader is.
type wrapped struct{ r *Reader }

func (w wrapped) Header() Header        { return w.r.Header() }
func (w wrapped) Next() (Record, error) { return w.r.Next() }

// TestRowsFromAnySource reads the same capture through a *Reader and
// through a wrapper of one and wants the same rows: Rows needs only the
// header and the records.
func TestRowsFromAnySource(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, testHeader(), Options{FlushEvery: time.Hour})
	w.Samples(block(0, 0, 30))
	w.Samples(block(1, 5, 30))
	w.Samples(block(0, 40, 10))
	w.Close()
	r1, err1 := NewReader(bytes.NewReader(buf.Bytes()))
	r2, err2 := NewReader(bytes.NewReader(buf.Bytes()))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	want, wantErr := collectRows(NewRows(r1).Next)
	got, gotErr := collectRows(NewRows(wrapped{r2}).Next)
	if len(want) == 0 || !reflect.DeepEqual(got, want) || !sameErr(gotErr, wantErr) {
		t.Fatalf("through a wrapper: %d rows (err %v), want %d rows (err %v)", len(got), gotErr, len(want), wantErr)
	}
}
