package capture

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// passRead is what one pass over a capture hands out: every record's kind
// and offset (summaries by their chunk), and the account at its end.
type passRead struct {
	recs []int64
	acc  Account
	end  string
}

func readPass(t *testing.T, r *Reader, skip bool, first func()) passRead {
	t.Helper()
	r.SkipSamples(skip)
	var out passRead
	for k := 0; ; k++ {
		rec, err := r.Next()
		if k == 0 && first != nil {
			first()
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				out.end = err.Error()
			}
			break
		}
		out.recs = append(out.recs, int64(rec.Kind)<<56|rec.Offset)
	}
	out.acc = r.Account()
	return out
}

// TestPassesCheckSummariesOnce: the readers of one Passes check the
// summaries once — the first pass that decodes every sample — and the
// passes after it hand out the same records with the same account without
// the per-sample statistics (issue 31 item 3); a pass that skips samples
// or stops early leaves nothing for them, and a file changed after the
// check is checked again.
func TestPassesCheckSummariesOnce(t *testing.T) {
	t.Parallel()
	clean := noisyCapture(t, 2, 40000)
	bad := editChunks(clean, chunkLevels, func(p []byte) {
		if le.Uint16(p)%2 == 1 {
			return // channel 0's only: some chunks agree, some do not
		}
		n := int(le.Uint32(p[16:]))
		for j := 0; j < 3*n; j++ {
			at := levelsFixed + 4*j
			le.PutUint32(p[at:], math.Float32bits(math.Float32frombits(le.Uint32(p[at:]))*1000))
		}
	})
	dir := t.TempDir()
	for name, b := range map[string][]byte{"clean": clean, "bad": bad} {
		path := filepath.Join(dir, name+".iwcap")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		fresh := func() passRead {
			r, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			return readPass(t, r, false, nil)
		}
		want := fresh()
		if name == "bad" && want.acc.Mismatches <= maxMismatches {
			t.Fatalf("%s: %d mismatches; the test wants more than the account lists", name, want.acc.Mismatches)
		}
		open, _, err := Passes(context.Background(), path, "test")
		if err != nil {
			t.Fatal(err)
		}
		pass := func(skip bool, mode memoMode) passRead {
			t.Helper()
			r, err := open()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			got := readPass(t, r.Reader, skip, func() {
				if r.memo.mode != mode {
					t.Fatalf("%s: memo mode %d, want %d", name, r.memo.mode, mode)
				}
			})
			if mode == memoReuse && r.ver != nil {
				t.Errorf("%s: a pass after the check kept the per-sample statistics", name)
			}
			return got
		}
		// Stopped early: nothing left for the next pass.
		r, err := open()
		if err != nil {
			t.Fatal(err)
		}
		for range 50 {
			if _, err := r.Next(); err != nil {
				t.Fatal(err)
			}
		}
		r.Close()
		if open2 := r.memo.m; open2.done {
			t.Fatalf("%s: a pass read in part left its verdicts", name)
		}
		pass(true, memoOff) // skips samples: checks nothing, leaves nothing
		if r.memo.m.done {
			t.Fatalf("%s: a pass that skipped samples left verdicts", name)
		}
		if got := pass(false, memoWrite); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the checking pass differs from a Reader of its own", name)
		}
		if !r.memo.m.done {
			t.Fatalf("%s: the checking pass left no verdicts", name)
		}
		for range 2 {
			if got := pass(false, memoReuse); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: a pass reusing the verdicts differs:\n got %d records, %+v\nwant %d records, %+v", name, len(got.recs), got.acc, len(want.recs), want.acc)
			}
		}
		// The file changes under the passes: its summaries are checked
		// again.
		other := clean
		if name == "clean" {
			other = bad
		}
		if err := os.WriteFile(path, other, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, time.Time{}, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if got, want := pass(false, memoWrite), fresh(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s, rewritten: the pass differs from a Reader of its own: %+v, want %+v", name, got.acc, want.acc)
		}
	}
}
