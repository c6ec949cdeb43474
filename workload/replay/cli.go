package replay

// `idlewatt replay` and `idlewatt bench`: their settings (config keys under
// replay. and bench.), declared once and checked here before a target is
// opened or created, the target opened with its consent and fill
// progress, the run with its I/O event log, and the result as text.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/internal/ctxio"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/internal/textsafe"
	"github.com/idlewatt/idlewatt/workload"
	"github.com/idlewatt/idlewatt/workload/gen"
	"github.com/idlewatt/idlewatt/workload/target"
	"github.com/idlewatt/idlewatt/workload/trace"
)

// targetFlags are the target's settings, replay's and bench's alike.
var targetFlags = []settings.Flag{
	{Name: "allow-destructive", Kind: settings.String, Help: "existing file or block device that may be written (and whose holes may be filled)"},
	{Name: "allow-sparse", Kind: settings.Bool, Help: "read a file with holes as it is (reads of holes never reach the drive; the result says sparse)"},
	{Name: "direct", Kind: settings.Bool, Default: true, Help: "O_DIRECT (falls back to buffered where refused)"},
	{Name: "rt-priority", Kind: settings.Int, Help: "run the issuing thread SCHED_FIFO at this priority (1-99; needs CAP_SYS_NICE)"},
	{Name: "json", Kind: settings.Bool, Help: "print the result as JSON"},
	{Name: "engine", Kind: settings.String, Help: "uring or sync (default: uring, sync if unavailable)"},
}

// keyed returns flags with the config keys of section (replay, bench) for
// the names in keys.
func keyed(section string, flags []settings.Flag, keys ...string) []settings.Flag {
	out := append([]settings.Flag(nil), flags...)
	for i := range out {
		if slices.Contains(keys, out[i].Name) {
			out[i].Key = section + "." + strings.ReplaceAll(out[i].Name, "-", "_")
		}
	}
	return out
}

// Flags are `idlewatt replay`'s settings.
var Flags = keyed("replay", append([]settings.Flag{
	{Name: "trace", Kind: settings.String, Help: "trace file"},
	{Name: "format", Kind: settings.String, Help: "trace format (default: detect)"},
	{Name: "target", Kind: settings.String, Help: "file or block device"},
	{Name: "qd", Kind: settings.Int, Default: 1, Help: "queue depth"},
	{Name: "timing", Kind: settings.String, Default: "recorded", Help: "recorded, afap or compress-idle=DUR"},
	{Name: "speed", Kind: settings.Float, Default: 1.0, Help: "play the trace this many times faster"},
	{Name: "wrap", Kind: settings.Bool, Help: "fold ops beyond the target's end back into it"},
	{Name: "size", Kind: settings.String, Help: "size of a regular-file target (default: the trace's span)"},
	{Name: "duration", Kind: settings.Duration, Help: "stop after this long (0 = end of trace)"},
	{Name: "events", Kind: settings.String, Help: "write every I/O as CSV (issue_ns,complete_ns,op,offset,size,err) to this file"},
	outfile.Flag("the --events file", ""),
}, targetFlags...), "trace", "target", "timing", "speed", "size", "wrap", "duration", "qd", "rt-priority", "engine")

// BenchFlags are `idlewatt bench`'s settings.
var BenchFlags = keyed("bench", append([]settings.Flag{
	{Name: "target", Kind: settings.String, Help: "file or block device"},
	{Name: "pattern", Kind: settings.String, Default: "randread4k", Help: "pattern: " + strings.Join(gen.Patterns, ", ") + ", or fio's rw names (randread, read128k, …)"},
	{Name: "qd", Kind: settings.Int, Default: 32, Help: "queue depth"},
	{Name: "duration", Kind: settings.Duration, Help: "how long to run (default 10s; consistency 30m)"},
	{Name: "size", Kind: settings.String, Default: "1GiB", Help: "size of a regular-file target (the LBA span)"},
	{Name: "seed", Kind: settings.Int, Default: 1, Help: "random seed"},
	{Name: "events", Kind: settings.String, Help: "write every I/O as CSV to this file"},
	{Name: "chart", Kind: settings.String, Help: "draw the per-second IOPS series (the consistency chart) to this .png or .svg"},
	outfile.Flag("the --events and --chart files", ""),
}, targetFlags...), "target", "pattern", "seed", "duration", "qd", "rt-priority", "engine", "size")

// Session is where a replay or bench run reports: the command (Who, for
// messages), its streams, the rules of its outputs (Out, the inputs the
// command read among them), and how to draw --chart (nil: no chart).
type Session struct {
	Who         string
	Stdout, Err io.Writer
	Out         outfile.Options
	Chart       func(path, name string, res Result, o outfile.Options) error
}

func (s Session) warn(m string) { fmt.Fprintln(s.Err, "idlewatt: warning:", textsafe.Terminal(m)) }

// outOptions are the output rules with the trace and the target as
// inputs no output may be.
func (s Session) outOptions(inputs ...string) outfile.Options {
	o := s.Out
	o.Inputs = append(append([]string(nil), inputs...), o.Inputs...)
	return o
}

// readConfig reads the options replay and bench share.
func (s Session) readConfig(g settings.Getter) (Config, error) {
	var cfg Config
	var err error
	if cfg.QD, err = g.Int("qd"); err != nil {
		return cfg, err
	}
	if cfg.QD < 1 || cfg.QD > 4096 {
		return cfg, settings.Usagef("--qd %d: want 1 to 4096", cfg.QD)
	}
	if cfg.RealtimePriority, err = g.Int("rt-priority"); err != nil {
		return cfg, err
	}
	if cfg.RealtimePriority < 0 || cfg.RealtimePriority > 99 {
		return cfg, settings.Usagef("--rt-priority %d: want 0 to 99", cfg.RealtimePriority)
	}
	cfg.Engine = g.String("engine")
	if cfg.Engine != "" && cfg.Engine != "uring" && cfg.Engine != "sync" {
		return cfg, settings.Usagef("--engine %q: want uring or sync", cfg.Engine)
	}
	if cfg.Duration, err = g.Duration("duration"); err != nil {
		return cfg, err
	}
	if cfg.Duration < 0 {
		return cfg, settings.Usagef("--duration %v: want > 0 (or 0 for the default)", cfg.Duration)
	}
	cfg.Warn = s.warn
	cfg.Progress = func(p Progress) {
		fmt.Fprintf(s.Err, "%6.0fs  %10d ops  %9.0f IOPS  %8.1f MB/s\n", p.Elapsed.Seconds(), p.Ops, p.IOPS, p.MBps)
	}
	return cfg, nil
}

// checkOutputs refuses --events or --chart before anything is read or
// created (the trace and the target are inputs).
func (s Session) checkOutputs(g settings.Getter, inputs ...string) error {
	type output struct{ flag, path string }
	var outs []output
	for _, fl := range []string{"events", "chart"} {
		if g.Has(fl) {
			if p := g.String(fl); p != "" {
				outs = append(outs, output{fl, p})
			}
		}
	}
	for i, o := range outs {
		if err := outfile.Check(o.path, s.outOptions(inputs...)); err != nil {
			return settings.Usagef("%s: --%s %w", s.Who, o.flag, err)
		}
		for _, p := range outs[:i] {
			if p.path == o.path {
				return settings.Usagef("%s: --%s and --%s name the same file %s", s.Who, p.flag, o.flag, o.path)
			}
		}
	}
	return nil
}

// openTarget opens the target with the user's consent (--allow-destructive,
// --allow-sparse) and --direct, saying how far a long fill is.
func (s Session) openTarget(ctx context.Context, g settings.Getter, path string, opt target.Options) (*target.Target, error) {
	opt.AllowDestructive = g.String("allow-destructive")
	opt.AllowSparse = g.Bool("allow-sparse")
	opt.Direct = g.Bool("direct")
	opt.Warn = s.warn
	stop := ctxio.Interrupted(ctx)
	opt.Stop = FillProgress(s.Err, s.Who, path, opt.Size, stop, time.Now)
	t, err := target.Open(path, opt)
	if err != nil {
		if cause := stop(); cause != nil {
			return nil, fmt.Errorf("%s: %w", path, cause) // the fill was cut short: nothing is left of a created file
		}
		return nil, settings.Usagef("%v", err)
	}
	if t.Created() {
		how := "left sparse: the workload writes before it reads"
		switch {
		case t.Filled():
			how = "filled with random data, so reads reach the drive"
		case opt.Read:
			how = "left sparse (--allow-sparse): reads of holes never reach the drive"
		}
		fmt.Fprintf(s.Err, "created %s (%d bytes), %s\n", textsafe.Terminal(path), t.Size(), how)
	} else if g.Changed("size") && t.Size() != opt.Size {
		opt.Warn(fmt.Sprintf("--size %s ignored: %s exists and keeps its %d bytes (idlewatt sizes only files it creates)", g.String("size"), path, t.Size()))
	}
	return t, nil
}

// FillProgress is target.Options.Stop for a fill that may take minutes (a
// 16 GiB target laid out with random data, as fio does before reading):
// asked before each MiB, it says on w how far the fill is once it has run
// 2 s, then every second (docs/cli.md, "Progress"), and ends it when stop
// does. size is the size of a file idlewatt creates; an existing file's
// own size is the total of a fill of its holes. now is the clock.
func FillProgress(w io.Writer, who, path string, size int64, stop func() error, now func() time.Time) func() error {
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
				fmt.Fprintf(w, "%s: filling %s with random data so reads reach the drive: %s of %s (%.0f %%) after %.0f s\n",
					who, textsafe.Terminal(path), fillSize(done), fillSize(total), 100*float64(min(done, total))/float64(total), t.Sub(start).Seconds())
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

// Replay is `idlewatt replay`: a first streaming pass over the trace finds
// its span and whether it writes, the target is checked against it
// (before it is created or opened for writing, and again once open), then
// the trace plays.
func Replay(ctx context.Context, g settings.Getter, s Session) error {
	path, tpath := g.String("trace"), g.String("target")
	if path == "" || tpath == "" {
		return settings.Usagef("replay: --trace and --target are required")
	}
	if err := s.checkOutputs(g, path, tpath); err != nil {
		return err
	}
	cfg, err := s.readConfig(g)
	if err != nil {
		return err
	}
	if cfg.Timing, err = ParseTiming(g.String("timing")); err != nil {
		return settings.Usagef("--timing: %v", err)
	}
	if cfg.Speed, err = g.Float("speed"); err != nil {
		return err
	}
	if !(cfg.Speed > 0) {
		return settings.Usagef("--speed: want > 0")
	}
	// Beyond these the scaled due times overflow (--speed 1e-320 replayed
	// the trace as fast as possible and exited 0).
	if cfg.Speed < MinSpeed || cfg.Speed > MaxSpeed {
		return settings.Usagef("--speed %g: want %g to %g (times faster than recorded)", cfg.Speed, MinSpeed, MaxSpeed)
	}
	cfg.Wrap = g.Bool("wrap")
	pre, err := trace.OpenNamed(ctx, g, path)
	if err != nil {
		return err
	}
	st, err := trace.Summarize(pre)
	pre.Close()
	if err != nil {
		return settings.Input(err)
	}
	size := st.MaxEnd
	if sz := g.String("size"); sz != "" {
		if size, err = settings.ParseBytes(sz); err != nil {
			return settings.Usagef("--size: %v", err)
		}
		if size <= 0 {
			return settings.Usagef("--size %s: want > 0", sz)
		}
	}
	_, lerr := os.Lstat(tpath)
	creates := errors.Is(lerr, fs.ErrNotExist)
	span := Span{Wrap: cfg.Wrap, Sized: g.String("size") != "", WouldCreate: creates, Size: -1}
	if creates {
		span.Size = max(size, 4096)
	}
	if err := CheckSpan(st, span); err != nil {
		return settings.Usagef("replay: %v", err)
	}
	writes := st.OpsByType[workload.OpWrite]+st.OpsByType[workload.OpTrim] > 0
	tgt, err := s.openTarget(ctx, g, tpath, target.Options{Write: writes, Read: st.OpsByType[workload.OpRead] > 0, Size: max(size, 4096)})
	if err != nil {
		return err
	}
	defer tgt.Close()
	if !creates { // opened, not yet written
		span.Size = tgt.Size()
		if err := CheckSpan(st, span); err != nil {
			return settings.Usagef("replay: %v", err)
		}
	}
	src, err := trace.OpenNamed(ctx, g, path)
	if err != nil {
		return err
	}
	defer src.Close()
	fmt.Fprintf(s.Err, "replaying %s (%s, %d ops over %v) on %s, %s timing, QD %d\n",
		textsafe.Terminal(path), src.Format, st.Ops, trace.HumanDuration(st.Duration()), textsafe.Terminal(tpath), cfg.Timing, cfg.QD)
	return s.run(ctx, g, cfg, src, tgt, path, tpath)
}

// Bench is `idlewatt bench`: one access pattern as fast as the queue
// depth allows, every setting checked before the target is opened or
// created.
func Bench(ctx context.Context, g settings.Getter, s Session) error {
	tpath := g.String("target")
	if tpath == "" {
		return settings.Usagef("bench: --target is required")
	}
	spec, err := gen.ParsePattern(g.String("pattern"))
	if err != nil {
		return settings.Usagef("--pattern: %v", err)
	}
	pat := spec.Name
	cfg, err := s.readConfig(g)
	if err != nil {
		return err
	}
	if cfg.Duration == 0 {
		cfg.Duration = 10e9
		if pat == "consistency" {
			cfg.Duration = 30 * 60e9
		}
	}
	cfg.Timing = Timing{Mode: AFAP}
	size, err := settings.Bytes(g, "size")
	if err != nil {
		return err
	}
	seed, err := g.Int("seed")
	if err != nil {
		return err
	}
	cfg.Seed = int64(seed)
	if _, err := os.Lstat(tpath); errors.Is(err, fs.ErrNotExist) {
		// The file would be created this size: check the pattern fits first.
		if _, err := gen.Pattern(pat, int64(seed), size, 0); err != nil {
			return settings.Usagef("--size %d: %v", size, err)
		}
	}
	write := spec.Write()
	if err := s.checkOutputs(g, tpath); err != nil {
		return err
	}
	tgt, err := s.openTarget(ctx, g, tpath, target.Options{Write: write, Read: !write, Size: size})
	if err != nil {
		return err
	}
	defer tgt.Close()
	src, err := gen.Pattern(pat, int64(seed), tgt.Size(), 0)
	if err != nil {
		return settings.Usagef("target %s (%d bytes): %v", tpath, tgt.Size(), err)
	}
	fmt.Fprintf(s.Err, "bench %s on %s (%d bytes), QD %d, %v\n", pat, textsafe.Terminal(tpath), tgt.Size(), cfg.QD, cfg.Duration)
	return s.run(ctx, g, cfg, src, tgt, tpath)
}

// run plays src on tgt, logs every I/O to --events (kept also when the run
// failed or was interrupted; a failed write keeps an old file instead),
// draws --chart, and prints the result.
func (s Session) run(ctx context.Context, g settings.Getter, cfg Config, src trace.Reader, tgt *target.Target, inputs ...string) (err error) {
	var onEvent func(workload.IOEvent)
	if p := g.String("events"); p != "" {
		f, oerr := outfile.Create(p, s.outOptions(inputs...))
		if oerr != nil {
			if errors.Is(oerr, outfile.ErrRefused) {
				return settings.Usagef("%s: --events %w", s.Who, oerr)
			}
			return fmt.Errorf("%s: --events %w", s.Who, oerr)
		}
		defer f.Abort() // no-op after Commit
		ev := NewEventsCSV(f)
		defer func() {
			cerr := ev.Flush()
			if cerr == nil {
				cerr = f.Commit()
			}
			if cerr != nil && err == nil {
				err = fmt.Errorf("%s: --events %w", s.Who, cerr)
			}
		}()
		onEvent = ev.Event
	}
	res, err := Run(ctx, cfg, src, tgt, onEvent)
	res.Target = TargetInfo{Path: tgt.RealPath(), Block: tgt.IsBlock(), Created: tgt.Created(), Filled: tgt.Filled(),
		Sparse: tgt.Sparse(), SizeBytes: tgt.Size(), AllocatedBytes: tgt.Allocated()}
	if p := chartPath(g); p != "" && len(res.PerSecond) > 0 && s.Chart != nil {
		if cerr := s.Chart(p, tgt.Path(), res, s.outOptions(inputs...)); cerr != nil {
			fmt.Fprintf(s.Err, "warning: IOPS chart: %s\n", textsafe.Terminal(cerr.Error()))
		}
	}
	if err != nil && ctx.Err() == nil {
		if errors.Is(err, ErrBeyondTarget) || errors.Is(err, ErrBadOp) || errors.Is(err, trace.ErrSyntax) {
			return settings.Input(err)
		}
		return fmt.Errorf("%v", err)
	}
	if g.Bool("json") {
		if e := writeJSON(s.Stdout, res); e != nil {
			return e
		}
	} else {
		res.WriteText(s.Stdout)
	}
	if res.Errors > 0 {
		return fmt.Errorf("%d I/O errors", res.Errors)
	}
	return nil
}

func chartPath(g settings.Getter) string {
	if !g.Has("chart") {
		return ""
	}
	return g.String("chart")
}

// WriteText writes the result for the terminal: engine, target, ops and
// throughput, latency per op type, lateness, the per-second IOPS spread,
// CPU per op.
func (r *Result) WriteText(w io.Writer) {
	fmt.Fprintf(w, "engine %s, %s timing, QD %d\n", r.Engine, r.Timing, r.QD)
	fmt.Fprintf(w, "target %s\n", textsafe.Terminal(r.describeTarget()))
	fmt.Fprintf(w, "%d ops, %.1f MB in %v: %.0f IOPS, %.1f MB/s (busy %v: %.1f MB/s)\n",
		r.Ops, float64(r.Bytes)/1e6, r.Elapsed.Round(time.Millisecond), r.IOPS, r.MBps, r.Busy.Round(time.Millisecond), r.BusyMBps)
	for _, t := range []workload.Op{workload.OpRead, workload.OpWrite, workload.OpFlush, workload.OpTrim} {
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
func (r *Result) describeTarget() string {
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
			if r.ByType[workload.OpRead].Ops > 0 {
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

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
