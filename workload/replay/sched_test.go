package replay

import (
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/workload"
	"github.com/idlewatt/idlewatt/workload/trace"
)

// sizeTarget is a Target for the scheduler alone: it is never read or written.
type sizeTarget int64

func (sizeTarget) Fd() int       { return -1 }
func (s sizeTarget) Size() int64 { return int64(s) }
func (sizeTarget) Direct() bool  { return false }

// TestScheduleFollowsTrace drives the scheduler on a virtual clock (the
// host times it is given, never read from the machine): each op's due time
// is the replay's start plus its trace time since the first op, shrunk by
// compress-idle and divided by the speed, exactly; an op out of order is
// due at once without moving the timeline; the deadline and the op limit
// end the schedule. The engines wait for these due times (TestRecordedTimingHonoursGaps
// checks that no op is issued before its due time; BenchmarkRecordedTiming
// measures how late they are on this machine).
func TestScheduleFollowsTrace(t *testing.T) {
	const start = int64(7e12) // any host time: the schedule is relative to it
	ms := time.Millisecond
	rd := func(at time.Duration) trace.Op { return trace.Op{Time: at, Type: workload.OpRead, Size: 4096} }
	for _, c := range []struct {
		name string
		cfg  Config
		ops  []trace.Op
		due  []time.Duration // after start
	}{
		{"recorded, rebased on the first op", Config{},
			[]trace.Op{rd(5 * time.Second), rd(5*time.Second + 40*ms), rd(5*time.Second + 40*ms), {Time: 5*time.Second + 90*ms, Type: workload.OpFlush}, rd(5*time.Second + 120*ms)},
			[]time.Duration{0, 40 * ms, 40 * ms, 90 * ms, 120 * ms}},
		{"an op out of order is due at once, the timeline kept", Config{},
			[]trace.Op{rd(0), rd(50 * ms), rd(20 * ms), rd(60 * ms)},
			[]time.Duration{0, 50 * ms, 50 * ms, 60 * ms}},
		{"compress-idle shrinks long gaps only", Config{Timing: Timing{Mode: CompressIdle, MaxIdle: 10 * ms}},
			[]trace.Op{rd(0), rd(time.Hour), rd(time.Hour + 4*ms), rd(time.Hour + 24*ms)},
			[]time.Duration{0, 10 * ms, 14 * ms, 24 * ms}},
		{"speed divides the trace's times", Config{Speed: 4},
			[]trace.Op{rd(0), rd(40 * ms), rd(100 * ms)},
			[]time.Duration{0, 10 * ms, 25 * ms}},
		{"compress-idle, then speed", Config{Timing: Timing{Mode: CompressIdle, MaxIdle: 10 * ms}, Speed: 2},
			[]trace.Op{rd(0), rd(time.Hour), rd(time.Hour + 20*ms)},
			[]time.Duration{0, 5 * ms, 10 * ms}},
		{"afap: nothing is due later than now", Config{Timing: Timing{Mode: AFAP}},
			[]trace.Op{rd(0), rd(time.Hour)},
			[]time.Duration{-1, -1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			if err := cfg.defaults(); err != nil {
				t.Fatal(err)
			}
			s := newSched(&cfg, &sliceReader{ops: c.ops}, sizeTarget(1<<20))
			s.begin(start)
			for i, want := range c.due {
				// The clock handed to next moves on as an engine's would,
				// late by a different amount each time: due times do not
				// depend on it (open loop).
				now := start + int64(i)*int64(3*ms)
				op, due, done, err := s.next(now)
				if err != nil || done {
					t.Fatalf("op %d: done %v, %v", i, done, err)
				}
				if op.Size != c.ops[i].Size || op.Type != c.ops[i].Type {
					t.Fatalf("op %d: %+v, want %+v", i, op, c.ops[i])
				}
				if want < 0 {
					if due != 0 {
						t.Errorf("op %d due at %d, want 0 (as soon as a slot is free)", i, due)
					}
					continue
				}
				if got := time.Duration(due - start); got != want {
					t.Errorf("op %d due %v after the start, want %v", i, got, want)
				}
			}
			if _, _, done, err := s.next(start + int64(time.Hour)); !done || err != nil {
				t.Errorf("after the last op: done %v, %v", done, err)
			}
		})
	}
}

// TestScheduleStops: Config.Duration ends the schedule at start+Duration on
// the clock it is given, and MaxOps after that many ops.
func TestScheduleStops(t *testing.T) {
	const start = int64(1e12)
	ops := make([]trace.Op, 10)
	for i := range ops {
		ops[i] = trace.Op{Time: time.Duration(i) * time.Millisecond, Type: workload.OpRead, Size: 512}
	}
	cfg := Config{Duration: 5 * time.Millisecond}
	if err := cfg.defaults(); err != nil {
		t.Fatal(err)
	}
	s := newSched(&cfg, &sliceReader{ops: ops}, sizeTarget(1<<20))
	s.begin(start)
	if _, _, done, _ := s.next(start + int64(5*time.Millisecond) - 1); done {
		t.Fatal("done 1 ns before the deadline")
	}
	if _, _, done, _ := s.next(start + int64(5*time.Millisecond)); !done {
		t.Fatal("not done at the deadline")
	}
	cfg = Config{MaxOps: 3}
	if err := cfg.defaults(); err != nil {
		t.Fatal(err)
	}
	s = newSched(&cfg, &sliceReader{ops: ops}, sizeTarget(1<<20))
	s.begin(start)
	n := 0
	for ; ; n++ {
		if _, _, done, err := s.next(start); done || err != nil {
			break
		}
	}
	if n != 3 {
		t.Fatalf("%d ops scheduled with MaxOps 3", n)
	}
}
