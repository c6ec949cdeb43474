package replay

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/workload"
	"github.com/idlewatt/idlewatt/workload/trace"
	"golang.org/x/sys/unix"
)

// fileTarget is a temp file, opened O_DIRECT when the filesystem allows.
type fileTarget struct {
	f      *os.File
	size   int64
	direct bool
}

func (t *fileTarget) Fd() int        { return int(t.f.Fd()) }
func (t *fileTarget) Size() int64    { return t.size }
func (t *fileTarget) Direct() bool   { return t.direct }
func (t *fileTarget) File() *os.File { return t.f }

func newTarget(t testing.TB, size int64) *fileTarget {
	t.Helper()
	path := filepath.Join(t.TempDir(), "target")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_DIRECT, 0)
	direct := err == nil
	if !direct {
		fd, err = unix.Open(path, unix.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
	}
	tg := &fileTarget{f: os.NewFile(uintptr(fd), path), size: size, direct: direct}
	t.Cleanup(func() { tg.f.Close() })
	return tg
}

// sliceReader replays a fixed list of ops.
type sliceReader struct {
	ops []trace.Op
	i   int
}

func (s *sliceReader) Next() (trace.Op, error) {
	if s.i == len(s.ops) {
		return trace.Op{}, io.EOF
	}
	s.i++
	return s.ops[s.i-1], nil
}

type eventLog struct {
	mu  sync.Mutex
	evs []workload.IOEvent
}

func (l *eventLog) add(ev workload.IOEvent) {
	l.mu.Lock()
	l.evs = append(l.evs, ev)
	l.mu.Unlock()
}

func engines(t *testing.T, f func(t *testing.T, engine string)) {
	for _, e := range []string{"uring", "sync"} {
		t.Run(e, func(t *testing.T) { f(t, e) })
	}
}

// writeOps are writes of assorted aligned sizes at distinct offsets.
func writeOps() []trace.Op {
	var ops []trace.Op
	sizes := []int32{512, 4096, 8192, 65536, 1536}
	off := int64(0)
	for i := 0; i < 200; i++ {
		sz := sizes[i%len(sizes)]
		ops = append(ops, trace.Op{Type: workload.OpWrite, Offset: off, Size: sz})
		off += int64(sz) + 512*int64(i%3)
	}
	return ops
}

func checkStamps(t *testing.T, path string, ops []trace.Op) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range ops {
		for s := op.Offset; s < op.End(); s += 512 {
			if got := binary.LittleEndian.Uint64(data[s:]); got != uint64(s) {
				t.Fatalf("sector at %d holds stamp %d: op %+v not written where asked", s, got, op)
			}
		}
	}
}

func TestWritesLandAtTheirOffsets(t *testing.T) {
	engines(t, func(t *testing.T, engine string) {
		tg := newTarget(t, 32<<20)
		ops := writeOps()
		var log eventLog
		res, err := Run(context.Background(), Config{QD: 8, Timing: Timing{Mode: AFAP}, Engine: engine}, &sliceReader{ops: ops}, tg, log.add)
		if err != nil {
			t.Fatal(err)
		}
		if res.Engine != engine || res.Ops != int64(len(ops)) || res.Errors != 0 {
			t.Fatalf("result %+v", res)
		}
		checkStamps(t, tg.f.Name(), ops)
		if len(log.evs) != len(ops) {
			t.Fatalf("%d events for %d ops", len(log.evs), len(ops))
		}
		var bytes int64
		seen := map[int64]int32{}
		for _, ev := range log.evs {
			if ev.Issue > ev.Complete || ev.Issue == 0 {
				t.Fatalf("event %+v: issue after completion", ev)
			}
			seen[ev.Offset] = ev.Size
			bytes += int64(ev.Size)
		}
		for _, op := range ops {
			if seen[op.Offset] != op.Size {
				t.Fatalf("no event for %+v", op)
			}
		}
		if res.Bytes != bytes || res.ByType[workload.OpWrite].Ops != int64(len(ops)) {
			t.Fatalf("bytes %d, events %d", res.Bytes, bytes)
		}
	})
}

// maxOverlap is the most events in flight at once by their timestamps.
func maxOverlap(evs []workload.IOEvent) int {
	type pt struct {
		t hostclock.Time
		d int
	}
	var pts []pt
	for _, ev := range evs {
		pts = append(pts, pt{ev.Issue, 1}, pt{ev.Complete, -1})
	}
	sort.Slice(pts, func(i, j int) bool {
		if pts[i].t != pts[j].t {
			return pts[i].t < pts[j].t
		}
		return pts[i].d < pts[j].d
	})
	n, m := 0, 0
	for _, p := range pts {
		n += p.d
		m = max(m, n)
	}
	return m
}

func TestQueueDepthRespected(t *testing.T) {
	engines(t, func(t *testing.T, engine string) {
		tg := newTarget(t, 8<<20)
		var ops []trace.Op
		for i := 0; i < 2000; i++ {
			ops = append(ops, trace.Op{Type: workload.OpRead, Offset: int64(i*4096) % (8 << 20), Size: 4096})
		}
		for _, qd := range []int{1, 4} {
			var log eventLog
			if _, err := Run(context.Background(), Config{QD: qd, Timing: Timing{Mode: AFAP}, Engine: engine}, &sliceReader{ops: ops}, tg, log.add); err != nil {
				t.Fatal(err)
			}
			if m := maxOverlap(log.evs); m > qd {
				t.Errorf("QD %d: %d ops in flight at once", qd, m)
			}
		}
	})
}

// runStart is the host time a run started (its schedule's zero): Result.Elapsed
// runs from it to the last completion.
func runStart(res Result, evs []workload.IOEvent) hostclock.Time {
	var last hostclock.Time
	for _, ev := range evs {
		last = max(last, ev.Complete)
	}
	return last - hostclock.Time(res.Elapsed)
}

// checkNeverEarly: ops are issued in trace order, and none before its due
// time, start + due[i]. Load only makes ops late, so this holds on any
// machine; how late they are is measured by BenchmarkRecordedTiming, not
// asserted.
func checkNeverEarly(t *testing.T, res Result, evs []workload.IOEvent, due []time.Duration) {
	t.Helper()
	if len(evs) != len(due) {
		t.Fatalf("%d events for %d ops", len(evs), len(due))
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Issue < evs[j].Issue })
	start := runStart(res, evs)
	for i, ev := range evs {
		if at := time.Duration(ev.Issue - start); at < due[i] {
			t.Errorf("op %d (%s at %d) issued %v after the start, before its due time %v", i, ev.Op, ev.Offset, at, due[i])
		}
	}
}

// issuedAs reports whether op is the i-th issued of evs (sorted by issue
// time), or one of the events issued at the same instant as the i-th.
func issuedAs(evs []workload.IOEvent, i int, op trace.Op) bool {
	for _, ev := range evs {
		if ev.Issue == evs[i].Issue && ev.Op == op.Type && ev.Offset == op.Offset {
			return true
		}
	}
	return false
}

func TestRecordedTimingHonoursGaps(t *testing.T) {
	engines(t, func(t *testing.T, engine string) {
		tg := newTarget(t, 1<<20)
		ops := []trace.Op{
			{Time: 5 * time.Second, Type: workload.OpRead, Offset: 0, Size: 4096}, // trace starts at 5 s: rebased
			{Time: 5*time.Second + 40*time.Millisecond, Type: workload.OpWrite, Offset: 4096, Size: 4096},
			{Time: 5*time.Second + 40*time.Millisecond, Type: workload.OpRead, Offset: 8192, Size: 4096},
			{Time: 5*time.Second + 90*time.Millisecond, Type: workload.OpFlush},
			{Time: 5*time.Second + 120*time.Millisecond, Type: workload.OpRead, Offset: 0, Size: 4096},
		}
		var log eventLog
		res, err := Run(context.Background(), Config{QD: 2, Engine: engine}, &sliceReader{ops: ops}, tg, log.add)
		if err != nil {
			t.Fatal(err)
		}
		due := make([]time.Duration, len(ops))
		for i, op := range ops {
			due[i] = op.Time - ops[0].Time
		}
		checkNeverEarly(t, res, log.evs, due)
		// The two ops due at 40 ms may go in either order (QD 2); the rest
		// follow the trace. Ops handed to the kernel in one submit share
		// one issue time (a loaded host may find the flush and the last
		// read both due at once), and the log holds them in completion
		// order: among equal issue times any order is the trace's.
		for _, i := range []int{0, 3, 4} {
			if !issuedAs(log.evs, i, ops[i]) {
				ev := log.evs[i]
				t.Errorf("op %d issued: %s at %d, want the trace's %s at %d", i, ev.Op, ev.Offset, ops[i].Type, ops[i].Offset)
			}
		}
		if res.Elapsed < 120*time.Millisecond || res.TraceDuration != 120*time.Millisecond {
			t.Errorf("elapsed %v, trace duration %v", res.Elapsed, res.TraceDuration)
		}
		if res.Lateness.Max < 0 || res.ByType[workload.OpFlush].Ops != 1 {
			t.Errorf("result %+v", res)
		}
	})
}

func TestCompressIdleAndSpeed(t *testing.T) {
	tg := newTarget(t, 1<<20)
	ops := []trace.Op{
		{Time: 0, Type: workload.OpRead, Size: 4096},
		{Time: time.Hour, Type: workload.OpRead, Size: 4096},
		{Time: time.Hour + 20*time.Millisecond, Type: workload.OpRead, Size: 4096},
	}
	var log eventLog
	res, err := Run(context.Background(), Config{Timing: Timing{Mode: CompressIdle, MaxIdle: 10 * time.Millisecond}, Speed: 2}, &sliceReader{ops: ops}, tg, log.add)
	if err != nil {
		t.Fatal(err)
	}
	// Gaps 1 h → 10 ms, 20 ms → 10 ms; played at 2×: due at 0, 5 and 10 ms.
	if res.TraceDuration != 20*time.Millisecond || res.Elapsed < 10*time.Millisecond || res.Ops != 3 {
		t.Errorf("trace duration %v, elapsed %v", res.TraceDuration, res.Elapsed)
	}
	checkNeverEarly(t, res, log.evs, []time.Duration{0, 5 * time.Millisecond, 10 * time.Millisecond})
}

func TestBeyondTargetAndWrap(t *testing.T) {
	tg := newTarget(t, 1<<20)
	ops := []trace.Op{{Type: workload.OpRead, Offset: 1 << 20, Size: 4096}}
	_, err := Run(context.Background(), Config{Timing: Timing{Mode: AFAP}}, &sliceReader{ops: ops}, tg, nil)
	if !errors.Is(err, ErrBeyondTarget) {
		t.Fatalf("got %v, want ErrBeyondTarget", err)
	}
	var log eventLog
	res, err := Run(context.Background(), Config{Timing: Timing{Mode: AFAP}, Wrap: true}, &sliceReader{ops: []trace.Op{{Type: workload.OpWrite, Offset: 3<<20 + 512, Size: 4096}}}, tg, log.add)
	if err != nil || res.Wrapped != 1 || len(log.evs) != 1 || log.evs[0].Offset+4096 > 1<<20 || log.evs[0].Err {
		t.Fatalf("wrap: %v %+v %+v", err, res, log.evs)
	}
	_, err = Run(context.Background(), Config{}, &sliceReader{ops: []trace.Op{{Type: 9, Size: 1}}}, tg, nil)
	if !errors.Is(err, ErrBadOp) {
		t.Fatalf("got %v, want ErrBadOp", err)
	}
}

func TestEnginesAgree(t *testing.T) {
	ops := writeOps()
	for i := 0; i < 100; i++ {
		ops = append(ops, trace.Op{Type: workload.OpRead, Offset: int64(i) * 8192, Size: 8192})
	}
	ops = append(ops, trace.Op{Type: workload.OpFlush})
	var results []Result
	var files [][]byte
	for _, e := range []string{"uring", "sync"} {
		tg := newTarget(t, 32<<20)
		res, err := Run(context.Background(), Config{QD: 4, Timing: Timing{Mode: AFAP}, Engine: e}, &sliceReader{ops: ops}, tg, nil)
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
		b, _ := os.ReadFile(tg.f.Name())
		files = append(files, b)
	}
	for _, op := range []workload.Op{workload.OpRead, workload.OpWrite, workload.OpFlush} {
		a, b := results[0].ByType[op], results[1].ByType[op]
		if a.Ops != b.Ops || a.Bytes != b.Bytes || a.Errors != 0 || b.Errors != 0 {
			t.Errorf("%s: uring %+v, sync %+v", op, a, b)
		}
	}
	for s := 0; s < len(files[0]); s += 512 {
		if binary.LittleEndian.Uint64(files[0][s:]) != binary.LittleEndian.Uint64(files[1][s:]) {
			t.Fatalf("sector %d differs between engines", s)
		}
	}
}

type hookTarget struct {
	*fileTarget   // File() and Size(), like states/drivesim.Target
	mu            sync.Mutex
	before, after int
}

func (h *hookTarget) Before(op workload.Op, off int64, size int) (time.Duration, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.before++
	switch h.before {
	case 1:
		return 30 * time.Millisecond, nil // asleep: the first op wakes the drive
	case 4:
		return 0, errors.New("powered off")
	}
	return 0, nil
}

func (h *hookTarget) After(op workload.Op, off int64, size int) {
	h.mu.Lock()
	h.after++
	h.mu.Unlock()
}

func TestHooks(t *testing.T) {
	engines(t, func(t *testing.T, engine string) {
		h := &hookTarget{fileTarget: newTarget(t, 1<<20)}
		ops := []trace.Op{{Type: workload.OpRead, Size: 4096}, {Type: workload.OpWrite, Size: 4096}, {Type: workload.OpTrim, Size: 4096}, {Type: workload.OpRead, Size: 4096}}
		var evs []workload.IOEvent
		res, err := Run(context.Background(), Config{Engine: engine, Timing: Timing{Mode: AFAP}}, &sliceReader{ops: ops}, Simulated(h, h.direct), func(e workload.IOEvent) { evs = append(evs, e) })
		if err != nil {
			t.Fatal(err)
		}
		// The fourth op is refused by Before: failed, no After.
		if h.before != 4 || h.after != 3 || res.Ops != 4 || res.Errors != 1 {
			t.Errorf("before %d after %d ops %d errors %d", h.before, h.after, res.Ops, res.Errors)
		}
		if res.Elapsed < 30*time.Millisecond {
			t.Errorf("elapsed %v: wake delay not waited", res.Elapsed)
		}
		// The drive's wait is inside the first op's I/O interval: a host
		// sees a real drive's wake as latency.
		if len(evs) == 0 || time.Duration(evs[0].Complete-evs[0].Issue) < 30*time.Millisecond {
			t.Errorf("first op %+v: the hook's 30 ms wait is not in its latency", evs)
		}
	})
}

func TestCancel(t *testing.T) {
	tg := newTarget(t, 1<<20)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ops := []trace.Op{{Type: workload.OpRead, Size: 4096}, {Time: time.Hour, Type: workload.OpRead, Size: 4096}}
	_, err := Run(ctx, Config{}, &sliceReader{ops: ops}, tg, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

func TestHistogram(t *testing.T) {
	var h hist
	for v := int64(1); v <= 100000; v++ {
		h.add(v * 1000)
	}
	p99 := h.quantile(0.99)
	if p99 < 97*time.Millisecond || p99 > 102*time.Millisecond {
		t.Errorf("p99 %v, want ≈ 99 ms", p99)
	}
	if h.mean() < 49*time.Millisecond || h.mean() > 51*time.Millisecond || h.max != 100000000 {
		t.Errorf("mean %v max %d", h.mean(), h.max)
	}
	for i := 0; i < 1888; i++ {
		if histIndex(histLow(i)) != i {
			t.Fatalf("bucket %d: low %d maps to %d", i, histLow(i), histIndex(histLow(i)))
		}
	}
}

func TestParseTiming(t *testing.T) {
	for s, want := range map[string]Timing{"recorded": {}, "afap": {Mode: AFAP}, "compress-idle=25ms": {Mode: CompressIdle, MaxIdle: 25 * time.Millisecond}} {
		got, err := ParseTiming(s)
		if err != nil || got != want || (s != "recorded" && got.String() != s) {
			t.Errorf("%s: %+v %v", s, got, err)
		}
	}
	for _, s := range []string{"fast", "compress-idle=x", "compress-idle=-1s"} {
		if _, err := ParseTiming(s); err == nil {
			t.Errorf("%s: no error", s)
		}
	}
}
