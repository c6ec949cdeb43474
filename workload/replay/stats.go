package replay

import (
	"encoding/json"
	"math/bits"
	"time"

	"github.com/idlewatt/idlewatt/workload"
)

// hist is a log-linear histogram of non-negative nanosecond values: exact
// below 64 ns, then 32 buckets per power of two (≤ 3 % wide). Fixed size,
// so memory does not grow with the run.
type hist struct {
	b   [60 * 32]int64
	n   int64
	sum float64
	max int64
}

func histIndex(v int64) int {
	if v < 64 {
		return int(max(v, 0))
	}
	shift := bits.Len64(uint64(v)) - 6
	return shift*32 + int(v>>shift)
}

func histLow(i int) int64 {
	if i < 64 {
		return int64(i)
	}
	shift := i/32 - 1
	return int64(i%32+32) << shift
}

func (h *hist) add(v int64) {
	v = max(v, 0)
	h.b[histIndex(v)]++
	h.n++
	h.sum += float64(v)
	h.max = max(h.max, v)
}

func (h *hist) mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / float64(h.n))
}

// quantile returns the midpoint of the bucket holding quantile q, capped at
// the maximum seen.
func (h *hist) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := int64(q*float64(h.n-1)) + 1
	var c int64
	for i := range h.b {
		c += h.b[i]
		if c >= rank {
			lo, hi := histLow(i), histLow(i+1)
			return time.Duration(min((lo+hi)/2, h.max))
		}
	}
	return time.Duration(h.max)
}

// TypeStats describes one op type.
type TypeStats struct {
	Ops    int64
	Bytes  int64
	Errors int64
	Mean   time.Duration
	P99    time.Duration
	Max    time.Duration
}

// LatenessStats describes how late ops were issued against their due time
// (recorded and compress-idle timing only).
type LatenessStats struct {
	Mean, P99, Max time.Duration
	// Drift is the lateness of the last op issued; DriftFraction divides it
	// by the replayed trace duration.
	Drift         time.Duration
	DriftFraction float64
}

// Result summarises a replay.
type Result struct {
	Engine        string
	Timing        string
	QD            int
	Ops           int64
	Bytes         int64
	Errors        int64
	Elapsed       time.Duration // start of the run to the last completion
	Busy          time.Duration // time with at least one op in flight
	IOPS          float64       // ops / Elapsed
	MBps          float64       // bytes / Elapsed, 10^6 bytes per second
	BusyMBps      float64       // bytes / Busy: Storage Bench's "average data rate"
	ByType        map[workload.Op]TypeStats
	PerSecond     []int64 // completions in each second since the start
	Lateness      LatenessStats
	TraceDuration time.Duration // replayed span of trace time (after compression, before speed)
	Realigned     int64         // ops widened to the O_DIRECT alignment
	Wrapped       int64         // ops folded into the target by Wrap
	ZeroLength    int64         // zero-length reads, writes and trims in the trace, skipped (not in Ops)
	Direct        bool          // the target was opened O_DIRECT (else the page cache served I/O)
	// Target describes the target's layout; the caller that opened it fills
	// it in (Run knows only the Target interface).
	Target  TargetInfo
	CPUUser time.Duration // process CPU time during the run
	CPUSys  time.Duration
}

// TargetInfo says what the run was done on, so a result read later says
// whether reads could have been served from holes.
type TargetInfo struct {
	Path      string // as opened (symlinks resolved)
	Block     bool   // a block device
	Created   bool   // idlewatt created the file for this run
	Filled    bool   // idlewatt wrote random data into it (all of it, or its holes) before the run
	Sparse    bool   // a regular file that still had holes when the run started
	SizeBytes int64
	// AllocatedBytes is st_blocks × 512 of a regular file when the run started.
	AllocatedBytes int64
}

// CPUPerOp is the process CPU time per op.
func (r *Result) CPUPerOp() time.Duration {
	if r.Ops == 0 {
		return 0
	}
	return (r.CPUUser + r.CPUSys) / time.Duration(r.Ops)
}

// collector accumulates a run. Not safe for concurrent use; the sync engine
// serialises access.
type collector struct {
	start     int64
	first     int64
	last      int64
	inflight  int
	busyStart int64
	busy      int64
	types     [5]hist
	bytes     [5]int64
	errs      [5]int64
	late      hist
	lastLate  int64
	perSecond []int64
}

// issue records one op issued at now that was due at due.
func (c *collector) issue(now, due int64, timed bool) {
	if c.first == 0 {
		c.first = now
	}
	if c.inflight == 0 {
		c.busyStart = now
	}
	c.inflight++
	if timed {
		c.late.add(now - due)
		c.lastLate = now - due
	}
}

func (c *collector) completed(ev *workload.IOEvent) {
	t := ev.Op
	if t > 4 {
		t = 0
	}
	issue, complete := int64(ev.Issue), int64(ev.Complete)
	c.types[t].add(complete - issue)
	if ev.Err {
		c.errs[t]++
	} else {
		c.bytes[t] += int64(ev.Size)
	}
	c.inflight--
	if c.inflight == 0 {
		c.busy += complete - c.busyStart
	}
	c.last = max(c.last, complete)
	sec := int((complete - c.start) / int64(time.Second))
	if sec >= 0 && sec < 1<<22 { // 48 days; a bound, not a limit anyone meets
		for len(c.perSecond) <= sec {
			c.perSecond = append(c.perSecond, 0)
		}
		c.perSecond[sec]++
	}
}

func (c *collector) result(cfg *Config, s *sched) Result {
	r := Result{Engine: cfg.Engine, Timing: cfg.Timing.String(), QD: cfg.QD, ByType: map[workload.Op]TypeStats{},
		PerSecond: c.perSecond, Realigned: s.realign, Wrapped: s.wrapped, ZeroLength: s.zeroLen, Direct: s.direct, TraceDuration: s.virt}
	for t := workload.OpRead; t <= workload.OpTrim; t++ {
		h := &c.types[t]
		if h.n == 0 {
			continue
		}
		r.ByType[t] = TypeStats{Ops: h.n, Bytes: c.bytes[t], Errors: c.errs[t], Mean: h.mean(), P99: h.quantile(0.99), Max: time.Duration(h.max)}
		r.Ops += h.n
		r.Bytes += c.bytes[t]
		r.Errors += c.errs[t]
	}
	if c.first != 0 {
		r.Elapsed = time.Duration(c.last - c.start)
	}
	r.Busy = time.Duration(c.busy)
	if r.Elapsed > 0 {
		r.IOPS = float64(r.Ops) / r.Elapsed.Seconds()
		r.MBps = float64(r.Bytes) / 1e6 / r.Elapsed.Seconds()
	}
	if r.Busy > 0 {
		r.BusyMBps = float64(r.Bytes) / 1e6 / r.Busy.Seconds()
	}
	if c.late.n > 0 {
		r.Lateness = LatenessStats{Mean: c.late.mean(), P99: c.late.quantile(0.99), Max: time.Duration(c.late.max), Drift: time.Duration(c.lastLate)}
		if s.virt > 0 {
			r.Lateness.DriftFraction = float64(c.lastLate) / (float64(s.virt) / cfg.Speed)
		}
	}
	return r
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// MarshalJSON writes the result with unit-suffixed keys.
func (r Result) MarshalJSON() ([]byte, error) {
	type typeJSON struct {
		Ops    int64   `json:"ops"`
		Bytes  int64   `json:"bytes"`
		Errors int64   `json:"errors"`
		MeanMS float64 `json:"mean_latency_ms"`
		P99MS  float64 `json:"p99_latency_ms"`
		MaxMS  float64 `json:"max_latency_ms"`
	}
	type targetJSON struct {
		Path           string `json:"path,omitempty"`
		Block          bool   `json:"block_device"`
		Created        bool   `json:"created"`
		Filled         bool   `json:"filled"`
		Sparse         bool   `json:"sparse"`
		SizeBytes      int64  `json:"size_bytes"`
		AllocatedBytes int64  `json:"allocated_bytes"`
	}
	var tj *targetJSON
	if ti := r.Target; ti.Path != "" {
		tj = &targetJSON{ti.Path, ti.Block, ti.Created, ti.Filled, ti.Sparse, ti.SizeBytes, ti.AllocatedBytes}
	}
	types := map[string]typeJSON{}
	for t, s := range r.ByType {
		types[t.String()] = typeJSON{s.Ops, s.Bytes, s.Errors, ms(s.Mean), ms(s.P99), ms(s.Max)}
	}
	out := struct {
		Engine        string              `json:"engine"`
		Timing        string              `json:"timing"`
		QD            int                 `json:"qd"`
		Ops           int64               `json:"ops"`
		Bytes         int64               `json:"bytes"`
		Errors        int64               `json:"errors"`
		ElapsedS      float64             `json:"elapsed_s"`
		BusyS         float64             `json:"busy_s"`
		IOPS          float64             `json:"iops"`
		MBps          float64             `json:"mb_per_s"`
		BusyMBps      float64             `json:"busy_mb_per_s"`
		ByType        map[string]typeJSON `json:"by_type"`
		PerSecond     []int64             `json:"iops_per_second"`
		LateMeanMS    float64             `json:"lateness_mean_ms"`
		LateP99MS     float64             `json:"lateness_p99_ms"`
		LateMaxMS     float64             `json:"lateness_max_ms"`
		DriftMS       float64             `json:"drift_ms"`
		DriftFraction float64             `json:"drift_fraction"`
		TraceS        float64             `json:"trace_duration_s"`
		Realigned     int64               `json:"realigned_ops"`
		Wrapped       int64               `json:"wrapped_ops"`
		ZeroLength    int64               `json:"zero_length_ops_skipped"`
		Direct        bool                `json:"direct"`
		Target        *targetJSON         `json:"target,omitempty"` // when the caller said (Result.Target.Path)
		CPUUserS      float64             `json:"cpu_user_s"`
		CPUSysS       float64             `json:"cpu_sys_s"`
		CPUPerOpUS    float64             `json:"cpu_per_op_us"`
	}{r.Engine, r.Timing, r.QD, r.Ops, r.Bytes, r.Errors, r.Elapsed.Seconds(), r.Busy.Seconds(), r.IOPS, r.MBps, r.BusyMBps,
		types, r.PerSecond, ms(r.Lateness.Mean), ms(r.Lateness.P99), ms(r.Lateness.Max), ms(r.Lateness.Drift), r.Lateness.DriftFraction,
		r.TraceDuration.Seconds(), r.Realigned, r.Wrapped, r.ZeroLength, r.Direct,
		tj, r.CPUUser.Seconds(), r.CPUSys.Seconds(), float64(r.CPUPerOp()) / 1e3}
	if out.PerSecond == nil {
		out.PerSecond = []int64{}
	}
	return json.Marshal(out)
}
