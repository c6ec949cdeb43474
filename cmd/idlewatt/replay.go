package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/ctxio"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/textsafe"
	"github.com/idlewatt/idlewatt/report"
	"github.com/idlewatt/idlewatt/workload/replay"
	"github.com/idlewatt/idlewatt/workload/target"
	"github.com/idlewatt/idlewatt/workload/trace"
)

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{
			Use:   "replay --trace F --target PATH",
			Short: "Replay a trace on a file or block device, timing every I/O",
			Long: `Replays a trace (any format trace info reads) on one target: every op goes to
--target whatever file the trace names. Timing: recorded (open loop, each op
at its trace time), compress-idle=DUR (gaps longer than DUR shrink to DUR) or
afap. A missing regular-file target is created as large as the trace needs
(or --size), filled with random data when the trace reads. Writing an
existing file or a block device needs --allow-destructive naming it; a file
with holes is read only if idlewatt may fill them (--allow-destructive) or
--allow-sparse accepts it; mounted, root and swap devices, /proc, /sys,
character devices, FIFOs and sockets are always refused. Zero-length reads
and writes are skipped and counted. Progress goes to stderr once a second.`,
			Args: cobra.NoArgs,
			RunE: runReplay,
		}
		f := c.Flags()
		f.String("trace", "", "trace file")
		f.String("format", "", "trace format (default: detect)")
		f.String("target", "", "file or block device")
		f.Int("qd", 1, "queue depth")
		f.String("timing", "recorded", "recorded, afap or compress-idle=DUR")
		f.Float64("speed", 1, "play the trace this many times faster")
		f.Bool("wrap", false, "fold ops beyond the target's end back into it")
		f.String("size", "", "size of a regular-file target (default: the trace's span)")
		f.String("engine", "", "uring or sync (default: uring, sync if unavailable)")
		durationFlag(f, "duration", 0, "stop after this long (0 = end of trace)")
		f.String("allow-destructive", "", "existing file or block device that may be written (and whose holes may be filled)")
		f.Bool("allow-sparse", false, "read a file with holes as it is (reads of holes never reach the drive; the result says sparse)")
		f.Bool("direct", true, "O_DIRECT (falls back to buffered where refused)")
		f.String("events", "", "write every I/O as CSV (issue_ns,complete_ns,op,offset,size,err) to this file")
		addOverwriteFlag(f, "the --events file")
		f.Int("rt-priority", 0, "run the issuing thread SCHED_FIFO at this priority (1-99; needs CAP_SYS_NICE)")
		f.Bool("json", false, "print the result as JSON")
		return c
	})
}

func runReplay(cmd *cobra.Command, _ []string) error {
	path := optString(cmd, "trace", "replay.trace")
	tpath := optString(cmd, "target", "replay.target")
	if path == "" || tpath == "" {
		return usageErr("replay: --trace and --target are required")
	}
	if err := wlCheckOutputs(cmd, path, tpath); err != nil {
		return err
	}
	cfg, err := wlConfig(cmd, "replay")
	if err != nil {
		return err
	}
	timing, err := replay.ParseTiming(optString(cmd, "timing", "replay.timing"))
	if err != nil {
		return usageErr("--timing: %v", err)
	}
	cfg.Timing = timing
	if cfg.Speed, err = optFloat(cmd, "speed", "replay.speed"); err != nil {
		return err
	}
	if !(cfg.Speed > 0) {
		return usageErr("--speed: want > 0")
	}
	// Beyond these the scaled due times overflow (--speed 1e-320 replayed
	// the trace as fast as possible and exited 0).
	if cfg.Speed < replay.MinSpeed || cfg.Speed > replay.MaxSpeed {
		return usageErr("--speed %g: want %g to %g (times faster than recorded)", cfg.Speed, replay.MinSpeed, replay.MaxSpeed)
	}
	cfg.Wrap = optBool(cmd, "wrap", "replay.wrap")

	// A first streaming pass finds the span and whether the trace writes.
	pre, err := wlOpenTrace(cmd, path)
	if err != nil {
		return err
	}
	st, err := trace.Summarize(pre)
	pre.Close()
	if err != nil {
		return inputErr(err)
	}
	size := st.MaxEnd
	if s := optString(cmd, "size", "replay.size"); s != "" {
		if size, err = parseBytes(s); err != nil {
			return usageErr("--size: %v", err)
		}
		if size <= 0 {
			return usageErr("--size %s: want > 0", s)
		}
	}
	// An op the target cannot hold is refused before a target is created
	// or opened for writing, and again once an existing one is open.
	_, lerr := os.Lstat(tpath)
	creates := errors.Is(lerr, fs.ErrNotExist)
	span := replay.Span{Wrap: cfg.Wrap, Sized: optString(cmd, "size", "replay.size") != "", WouldCreate: creates, Size: -1}
	if creates {
		span.Size = max(size, 4096)
	}
	if err := replay.CheckSpan(st, span); err != nil {
		return usageErr("replay: %v", err)
	}
	writes := st.OpsByType[capture.OpWrite]+st.OpsByType[capture.OpTrim] > 0
	reads := st.OpsByType[capture.OpRead] > 0
	tgt, err := wlOpenTarget(cmd, tpath, target.Options{Write: writes, Read: reads, Size: max(size, 4096)})
	if err != nil {
		return err
	}
	defer tgt.Close()
	if !creates { // opened, not yet written
		span.Size = tgt.Size()
		if err := replay.CheckSpan(st, span); err != nil {
			return usageErr("replay: %v", err)
		}
	}
	src, err := wlOpenTrace(cmd, path)
	if err != nil {
		return err
	}
	defer src.Close()
	fmt.Fprintf(cmd.ErrOrStderr(), "replaying %s (%s, %d ops over %v) on %s, %s timing, QD %d\n",
		textsafe.Terminal(path), src.Format, st.Ops, trace.HumanDuration(st.Duration()), textsafe.Terminal(tpath), cfg.Timing, cfg.QD)
	return wlRun(cmd, cfg, src, tgt, path, tpath)
}

// wlConfig reads the options replay and bench share.
func wlConfig(cmd *cobra.Command, section string) (replay.Config, error) {
	var cfg replay.Config
	var err error
	if cfg.QD, err = optInt(cmd, "qd", section+".qd"); err != nil {
		return cfg, err
	}
	if cfg.QD < 1 || cfg.QD > 4096 {
		return cfg, usageErr("--qd %d: want 1 to 4096", cfg.QD)
	}
	if cfg.RealtimePriority, err = optInt(cmd, "rt-priority", section+".rt_priority"); err != nil {
		return cfg, err
	}
	if cfg.RealtimePriority < 0 || cfg.RealtimePriority > 99 {
		return cfg, usageErr("--rt-priority %d: want 0 to 99", cfg.RealtimePriority)
	}
	cfg.Engine = optString(cmd, "engine", section+".engine")
	if cfg.Engine != "" && cfg.Engine != "uring" && cfg.Engine != "sync" {
		return cfg, usageErr("--engine %q: want uring or sync", cfg.Engine)
	}
	if cfg.Duration, err = optDuration(cmd, "duration", section+".duration"); err != nil {
		return cfg, err
	}
	if cfg.Duration < 0 {
		return cfg, usageErr("--duration %v: want > 0 (or 0 for the default)", cfg.Duration)
	}
	stderr := cmd.ErrOrStderr()
	cfg.Warn = func(s string) { fmt.Fprintln(stderr, "idlewatt: warning:", textsafe.Terminal(s)) }
	cfg.Progress = func(p replay.Progress) {
		fmt.Fprintf(stderr, "%6.0fs  %10d ops  %9.0f IOPS  %8.1f MB/s\n", p.Elapsed.Seconds(), p.Ops, p.IOPS, p.MBps)
	}
	return cfg, nil
}

func wlOpenTarget(cmd *cobra.Command, path string, opt target.Options) (*target.Target, error) {
	opt.AllowDestructive = optString(cmd, "allow-destructive", "")
	opt.AllowSparse = optBool(cmd, "allow-sparse", "")
	opt.Direct = optBool(cmd, "direct", "")
	if f := cmd.Flags().Lookup("direct"); f == nil {
		opt.Direct = true
	}
	opt.Warn = func(s string) { fmt.Fprintln(cmd.ErrOrStderr(), "idlewatt: warning:", textsafe.Terminal(s)) }
	stop := ctxio.Interrupted(cmd.Context())
	opt.Stop = fillProgress(cmd, path, opt.Size, stop, time.Now)
	t, err := target.Open(path, opt)
	if err != nil {
		if cause := stop(); cause != nil {
			return nil, fmt.Errorf("%s: %w", path, cause) // the fill was cut short: nothing is left of a created file
		}
		return nil, usageErr("%v", err)
	}
	if t.Created() {
		how := "left sparse: the workload writes before it reads"
		switch {
		case t.Filled():
			how = "filled with random data, so reads reach the drive"
		case opt.Read:
			how = "left sparse (--allow-sparse): reads of holes never reach the drive"
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "created %s (%d bytes), %s\n", textsafe.Terminal(path), t.Size(), how)
	} else if f := cmd.Flags().Lookup("size"); f != nil && f.Changed && t.Size() != opt.Size {
		opt.Warn(fmt.Sprintf("--size %s ignored: %s exists and keeps its %d bytes (idlewatt sizes only files it creates)", f.Value, path, t.Size()))
	}
	return t, nil
}

// wlOutputs are the files replay and bench write: --events and --chart.
func wlOutputs(cmd *cobra.Command) []struct{ flag, path string } {
	var outs []struct{ flag, path string }
	for _, fl := range []string{"events", "chart"} {
		if p := optString(cmd, fl, ""); p != "" {
			outs = append(outs, struct{ flag, path string }{fl, p})
		}
	}
	return outs
}

// wlOutOptions are the output rules of replay and bench: the trace and the
// target are inputs no output may be.
func wlOutOptions(cmd *cobra.Command, inputs ...string) outfile.Options {
	return outOptions(cmd, "", inputs...)
}

// wlCheckOutputs refuses --events or --chart before anything is read or
// created (the trace and the target are inputs).
func wlCheckOutputs(cmd *cobra.Command, inputs ...string) error {
	outs := wlOutputs(cmd)
	for i, o := range outs {
		if err := outfile.Check(o.path, wlOutOptions(cmd, inputs...)); err != nil {
			return usageErr("%s: --%s %w", cmd.Name(), o.flag, err)
		}
		for _, p := range outs[:i] {
			if p.path == o.path {
				return usageErr("%s: --%s and --%s name the same file %s", cmd.Name(), p.flag, o.flag, o.path)
			}
		}
	}
	return nil
}

// targetInfo is what the result says about the target.
func targetInfo(t *target.Target) replay.TargetInfo {
	return replay.TargetInfo{Path: t.RealPath(), Block: t.IsBlock(), Created: t.Created(), Filled: t.Filled(),
		Sparse: t.Sparse(), SizeBytes: t.Size(), AllocatedBytes: t.Allocated()}
}

// wlRun replays and prints the result.
func wlRun(cmd *cobra.Command, cfg replay.Config, src trace.Reader, tgt *target.Target, inputs ...string) (err error) {
	var onEvent func(capture.IOEvent)
	if p := optString(cmd, "events", ""); p != "" {
		f, oerr := outfile.Create(p, wlOutOptions(cmd, inputs...))
		if oerr != nil {
			if errors.Is(oerr, outfile.ErrRefused) {
				return usageErr("%s: --events %w", cmd.Name(), oerr)
			}
			return failErr("%s: --events %w", cmd.Name(), oerr)
		}
		defer f.Abort() // no-op after Commit
		ev := replay.NewEventsCSV(f)
		// The events of whatever ran are kept, also when the run failed
		// or was interrupted; a failed write keeps an old file instead.
		defer func() {
			cerr := ev.Flush()
			if cerr == nil {
				cerr = f.Commit()
			}
			if cerr != nil && err == nil {
				err = failErr("%s: --events %w", cmd.Name(), cerr)
			}
		}()
		onEvent = ev.Event
	}
	res, err := replay.Run(cmd.Context(), cfg, src, tgt, onEvent)
	res.Target = targetInfo(tgt)
	if p := optString(cmd, "chart", ""); p != "" && len(res.PerSecond) > 0 {
		if cerr := report.IOPSChart(p, tgt.Path(), res, wlOutOptions(cmd, inputs...)); cerr != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "warning: IOPS chart: %s\n", textsafe.Terminal(cerr.Error()))
		}
	}
	if err != nil && cmd.Context().Err() == nil {
		if errors.Is(err, replay.ErrBeyondTarget) || errors.Is(err, replay.ErrBadOp) || errors.Is(err, trace.ErrSyntax) {
			return inputErr(err)
		}
		return failErr("%v", err)
	}
	if optBool(cmd, "json", "") {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		if e := enc.Encode(res); e != nil {
			return e
		}
	} else {
		wlPrintResult(cmd.OutOrStdout(), &res)
	}
	if res.Errors > 0 {
		return failErr("%d I/O errors", res.Errors)
	}
	return nil
}

func wlPrintResult(w io.Writer, r *replay.Result) {
	fmt.Fprintf(w, "engine %s, %s timing, QD %d\n", r.Engine, r.Timing, r.QD)
	fmt.Fprintf(w, "target %s\n", textsafe.Terminal(describeTarget(r)))
	fmt.Fprintf(w, "%d ops, %.1f MB in %v: %.0f IOPS, %.1f MB/s (busy %v: %.1f MB/s)\n",
		r.Ops, float64(r.Bytes)/1e6, r.Elapsed.Round(time.Millisecond), r.IOPS, r.MBps, r.Busy.Round(time.Millisecond), r.BusyMBps)
	for _, t := range []capture.Op{capture.OpRead, capture.OpWrite, capture.OpFlush, capture.OpTrim} {
		if s, ok := r.ByType[t]; ok {
			fmt.Fprintf(w, "  %-5s %9d ops  latency mean %8.3f ms  p99 %8.3f ms  max %8.3f ms  errors %d\n",
				t, s.Ops, ms(s.Mean), ms(s.P99), ms(s.Max), s.Errors)
		}
	}
	if r.Timing != "afap" {
		fmt.Fprintf(w, "lateness mean %.3f ms, p99 %.3f ms, max %.3f ms; drift %.3f ms (%.4f %% of %v)\n",
			ms(r.Lateness.Mean), ms(r.Lateness.P99), ms(r.Lateness.Max), ms(r.Lateness.Drift), 100*r.Lateness.DriftFraction, r.TraceDuration.Round(time.Millisecond))
	}
	if n := len(r.PerSecond); n > 1 {
		s := append([]int64(nil), r.PerSecond[:n-1]...) // the last second is partial
		slices.Sort(s)
		fmt.Fprintf(w, "IOPS per second over %d s: min %d, median %d, max %d (--json for the series)\n", len(s), s[0], s[len(s)/2], s[len(s)-1])
	}
	fmt.Fprintf(w, "CPU %.2f µs per op (user %v, sys %v)\n", float64(r.CPUPerOp())/1e3, r.CPUUser.Round(time.Millisecond), r.CPUSys.Round(time.Millisecond))
	if r.Realigned > 0 || r.Wrapped > 0 {
		fmt.Fprintf(w, "%d ops widened to the O_DIRECT alignment, %d wrapped into the target\n", r.Realigned, r.Wrapped)
	}
	if r.ZeroLength > 0 {
		fmt.Fprintf(w, "%d zero-length ops in the trace skipped (they transfer nothing; not counted in the ops above)\n", r.ZeroLength)
	}
}

// describeTarget says what the I/O ran on: device or file, created or
// existing, filled or sparse, O_DIRECT or the page cache.
func describeTarget(r *replay.Result) string {
	t := r.Target
	s := t.Path + ": "
	if t.Block {
		s += "block device"
	} else {
		if t.Created {
			s += "file created for this run"
		} else {
			s += "existing file"
		}
		switch {
		case t.Filled:
			s += ", filled with random data first"
		case t.Sparse:
			s += fmt.Sprintf(", SPARSE (%d of %d bytes allocated at the start", t.AllocatedBytes, t.SizeBytes)
			if r.ByType[capture.OpRead].Ops > 0 {
				s += ": reads of holes never reach the drive"
			}
			s += ")"
		default:
			s += ", fully allocated"
		}
	}
	if r.Direct {
		return s + "; O_DIRECT"
	}
	return s + "; buffered (no O_DIRECT: page-cache hits flatter the figures)"
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// fillProgress is target.Options.Stop for a fill that may take minutes (a
// 16 GiB target laid out with random data, as fio does before reading):
// asked before each MiB, it says on stderr how far the fill is once it has
// run 2 s, then every second (docs/cli.md, "Progress"), and ends it when
// stop does. size is the size of a file idlewatt creates; an existing
// file's own size is the total of a fill of its holes. now is the clock.
func fillProgress(cmd *cobra.Command, path string, size int64, stop func() error, now func() time.Time) func() error {
	total := size
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		total = st.Size()
	}
	start := now()
	last := start
	var done int64
	return func() error {
		if err := stop(); err != nil {
			return err
		}
		if done > 0 {
			if t := now(); t.Sub(start) >= 2*time.Second && t.Sub(last) >= time.Second && total > 0 {
				last = t
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: filling %s with random data so reads reach the drive: %s of %s (%.0f %%) after %.0f s\n",
					cmd.Name(), textsafe.Terminal(path), fillSize(done), fillSize(total), 100*float64(min(done, total))/float64(total), t.Sub(start).Seconds())
			}
		}
		done += 1 << 20
		return nil
	}
}

// fillSize is a fill's byte count for its progress line: GiB with one
// decimal from 1 GiB, else whole MiB.
func fillSize(b int64) string {
	if b >= 1<<30 {
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	}
	return fmt.Sprintf("%d MiB", b>>20)
}
