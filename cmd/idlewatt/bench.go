package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/workload/gen"
	"github.com/idlewatt/idlewatt/workload/replay"
	"github.com/idlewatt/idlewatt/workload/target"
)

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{
			Use:   "bench --target PATH --pattern P --qd N --duration D",
			Short: "Iometer-style load: IOPS, MB/s, latency, per-second IOPS",
			Long: `Runs one access pattern as fast as the queue depth allows (closed loop):
randread4k, randwrite4k, seqread128k, seqwrite128k, or consistency (4 KiB
random writes over the whole target; read the per-second IOPS series). A
missing regular-file target is created with --size bytes (filled with random
data first for read patterns, as fio lays out its files).`,
			Args: cobra.NoArgs,
			RunE: runBench,
		}
		f := c.Flags()
		f.String("target", "", "file or block device")
		f.String("pattern", "randread4k", "pattern: "+strings.Join(gen.Patterns, ", "))
		f.Int("qd", 32, "queue depth")
		durationFlag(f, "duration", 0, "how long to run (default 10s; consistency 30m)")
		f.String("size", "1GiB", "size of a regular-file target (the LBA span)")
		f.String("engine", "", "uring or sync (default: uring, sync if unavailable)")
		f.Int("seed", 1, "random seed")
		f.String("allow-destructive", "", "block device that may be written")
		f.Bool("direct", true, "O_DIRECT (falls back to buffered where refused)")
		f.String("events", "", "write every I/O as CSV to this file")
		f.Int("rt-priority", 0, "run the issuing thread SCHED_FIFO at this priority (1-99; needs CAP_SYS_NICE)")
		f.Bool("json", false, "print the result as JSON")
		f.String("chart", "", "draw the per-second IOPS series (the consistency chart) to this .png or .svg")
		return c
	})
}

func runBench(cmd *cobra.Command, _ []string) error {
	tpath := optString(cmd, "target", "bench.target")
	if tpath == "" {
		return usageErr("bench: --target is required")
	}
	pat := optString(cmd, "pattern", "bench.pattern")
	cfg, err := wlConfig(cmd, "bench")
	if err != nil {
		return err
	}
	if cfg.Duration == 0 {
		cfg.Duration = 10e9
		if pat == "consistency" {
			cfg.Duration = 30 * 60e9
		}
	}
	if cfg.Duration < 0 {
		return usageErr("--duration: want > 0")
	}
	cfg.Timing = replay.Timing{Mode: replay.AFAP}
	size, err := wlBytes(cmd, "size", "bench.size")
	if err != nil {
		return err
	}
	seed, err := optInt(cmd, "seed", "bench.seed")
	if err != nil {
		return err
	}
	cfg.Seed = int64(seed)
	write := strings.Contains(pat, "write") || pat == "consistency"
	tgt, err := wlOpenTarget(cmd, tpath, target.Options{Write: write, Size: size, Fill: !write})
	if err != nil {
		return err
	}
	defer tgt.Close()
	src, err := gen.Pattern(pat, int64(seed), tgt.Size(), 0)
	if err != nil {
		return usageErr("%v", err)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "bench %s on %s (%d bytes), QD %d, %v\n", pat, tpath, tgt.Size(), cfg.QD, cfg.Duration)
	return wlRun(cmd, cfg, src, tgt)
}
