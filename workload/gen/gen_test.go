package gen

import (
	"io"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/workload"
	"github.com/idlewatt/idlewatt/workload/trace"
)

const span = 16 << 30

func all(t *testing.T, r trace.Reader) []trace.Op {
	t.Helper()
	var ops []trace.Op
	for {
		op, err := r.Next()
		if err == io.EOF {
			return ops
		}
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, op)
	}
}

func gen(t *testing.T, app string, seed int64, scale float64) []trace.Op {
	r, err := PCMark7(app, seed, span, scale)
	if err != nil {
		t.Fatal(err)
	}
	return all(t, r)
}

func TestDeterministic(t *testing.T) {
	a, b, c := gen(t, "all", 7, 0.2), gen(t, "all", 7, 0.2), gen(t, "all", 8, 0.2)
	if len(a) != len(b) {
		t.Fatalf("same seed, %d vs %d ops", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed differs at op %d", i)
		}
	}
	same := len(a) == len(c)
	for i := 0; same && i < len(a); i++ {
		same = a[i] == c[i]
	}
	if same {
		t.Fatal("different seeds gave the same trace")
	}
}

func TestOpsValidAndBursty(t *testing.T) {
	for _, app := range Apps {
		ops := gen(t, app.Name, 1, 1)
		var prev time.Duration
		idle := 0
		for i, op := range ops {
			if op.Offset < 0 || op.End() > span || op.Offset%4096 != 0 || op.Time < prev {
				t.Fatalf("%s op %d invalid: %+v", app.Name, i, op)
			}
			if i > 0 && op.Time-prev >= app.IdleMin {
				idle++
			}
			prev = op.Time
		}
		// Every burst boundary is an idle gap at least IdleMin long.
		if idle < app.Bursts-1 {
			t.Errorf("%s: %d idle gaps ≥ %v for %d bursts", app.Name, idle, app.IdleMin, app.Bursts)
		}
		t.Logf("%-22s %6d ops over %v", app.Name, len(ops), prev)
	}
}

func TestPublishedMixes(t *testing.T) {
	r, _ := PCMark7("defender", 3, span, 1)
	s, err := trace.Summarize(r)
	if err != nil {
		t.Fatal(err)
	}
	if f := s.ReadFraction(); f < 0.97 || f > 0.99 {
		t.Errorf("defender read fraction %.3f, want 97.9 %%", f)
	}
	reads := s.OpsByType[workload.OpRead]
	if seq := float64(s.Sequential) / float64(reads); seq > 0.10 || seq < 0.03 {
		t.Errorf("defender sequential %.3f of reads, want ≈ 7 %%", seq)
	}

	r, _ = PCMark7("importing-pictures", 3, span, 1)
	s, _ = trace.Summarize(r)
	w := s.BytesByType[workload.OpWrite]
	if math.Abs(float64(w)-434e6) > 434e6*0.01 {
		t.Errorf("importing pictures wrote %d bytes, want 434 MB", w)
	}
	if w < 2*s.BytesByType[workload.OpRead] {
		t.Errorf("importing pictures not write-heavy: %d written, %d read", w, s.BytesByType[workload.OpRead])
	}
	if seq := s.SequentialFraction(); seq > 0.5 {
		t.Errorf("importing pictures %.2f sequential, want mostly random", seq)
	}
}

func TestScale(t *testing.T) {
	full, tenth := gen(t, "gaming", 1, 1), gen(t, "gaming", 1, 0.1)
	if len(tenth) >= len(full)/2 || len(tenth) == 0 {
		t.Errorf("scale 0.1: %d ops vs %d", len(tenth), len(full))
	}
	if _, err := PCMark7("solitaire", 1, span, 1); err == nil {
		t.Error("unknown app accepted")
	}
	if _, err := PCMark7("gaming", 1, span, 0); err == nil {
		t.Error("scale 0 accepted")
	}
}

func TestPatterns(t *testing.T) {
	for _, name := range Patterns {
		r, err := Pattern(name, 1, 1<<20, 1000)
		if err != nil {
			t.Fatal(err)
		}
		ops := all(t, r)
		if len(ops) != 1000 {
			t.Fatalf("%s: %d ops", name, len(ops))
		}
		for i, op := range ops {
			if op.End() > 1<<20 || op.Offset%int64(op.Size) != 0 {
				t.Fatalf("%s op %d: %+v", name, i, op)
			}
			if name[:3] == "seq" && i > 0 && op.Offset != ops[i-1].End()%(1<<20) {
				t.Fatalf("%s op %d not sequential", name, i)
			}
		}
	}
	if _, err := Pattern("randread4k", 1, 100, 0); err == nil {
		t.Error("tiny span accepted")
	}
}

// fio's rw names (and any power-of-two block size) name the same streams as
// the iometer names; the same seed gives the same ops.
func TestParsePatternFioNames(t *testing.T) {
	same := map[string]string{
		"randread": "randread4k", "randwrite": "randwrite4k", "read128k": "seqread128k",
		"write128k": "seqwrite128k", "seqread128k": "seqread128k", "randread4096": "randread4k",
	}
	for alias, canon := range same {
		spec, err := ParsePattern(alias)
		if err != nil {
			t.Fatalf("%s: %v", alias, err)
		}
		if spec.Name != canon {
			t.Errorf("%s: canonical %q, want %q", alias, spec.Name, canon)
		}
		a, _ := Pattern(alias, 7, 1<<22, 200)
		b, _ := Pattern(canon, 7, 1<<22, 200)
		if got, want := all(t, a), all(t, b); !slices.Equal(got, want) {
			t.Errorf("%s and %s give different ops", alias, canon)
		}
	}
	spec, err := ParsePattern("read1m")
	if err != nil || spec.Size != 1<<20 || spec.Random || spec.Write() || spec.Name != "seqread1m" {
		t.Errorf("read1m: %+v %v", spec, err)
	}
	if spec, _ := ParsePattern("randwrite512"); spec.Size != 512 || !spec.Write() || !spec.Random {
		t.Errorf("randwrite512: %+v", spec)
	}
	for _, bad := range []string{"", "foo", "read3k", "read0", "read-4k", "randread32m", "readk", "rand", "read4kk"} {
		if _, err := ParsePattern(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
