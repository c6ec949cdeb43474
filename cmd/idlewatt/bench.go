package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/internal/textsafe"
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
random writes over the whole target; read the per-second IOPS series); fio's
rw names are read too — read, write, randread, randwrite with fio's default
4 KiB blocks, or with a block size: randread64k, read1m. A
missing regular-file target is created with --size bytes (filled with random
data first for read patterns, as fio lays out its files). An existing file
keeps its size and is read as it is; writing it, or filling its holes for a
read pattern, needs --allow-destructive naming it (--allow-sparse reads a
file with holes anyway, and the result says so). Block devices need
--allow-destructive to be written; mounted, root and swap devices, /proc,
/sys, character devices, FIFOs and sockets are always refused. Every flag is
checked before the target is opened or created.`,
			Args: cobra.NoArgs,
			RunE: runBench,
		}
		f := c.Flags()
		f.String("target", "", "file or block device")
		f.String("pattern", "randread4k", "pattern: "+strings.Join(gen.Patterns, ", ")+", or fio's rw names (randread, read128k, …)")
		f.Int("qd", 32, "queue depth")
		durationFlag(f, "duration", 0, "how long to run (default 10s; consistency 30m)")
		f.String("size", "1GiB", "size of a regular-file target (the LBA span)")
		f.String("engine", "", "uring or sync (default: uring, sync if unavailable)")
		f.Int("seed", 1, "random seed")
		f.String("allow-destructive", "", "existing file or block device that may be written (and whose holes may be filled)")
		f.Bool("allow-sparse", false, "read a file with holes as it is (reads of holes never reach the drive; the result says sparse)")
		f.Bool("direct", true, "O_DIRECT (falls back to buffered where refused)")
		f.String("events", "", "write every I/O as CSV to this file")
		f.Int("rt-priority", 0, "run the issuing thread SCHED_FIFO at this priority (1-99; needs CAP_SYS_NICE)")
		f.Bool("json", false, "print the result as JSON")
		f.String("chart", "", "draw the per-second IOPS series (the consistency chart) to this .png or .svg")
		addOverwriteFlag(f, "the --events and --chart files")
		return c
	})
}

func runBench(cmd *cobra.Command, _ []string) error {
	tpath := optString(cmd, "target", "bench.target")
	if tpath == "" {
		return usageErr("bench: --target is required")
	}
	pat := optString(cmd, "pattern", "bench.pattern")
	spec, err := gen.ParsePattern(pat)
	if err != nil {
		return usageErr("--pattern: %v", err)
	}
	pat = spec.Name
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
	if _, err := os.Lstat(tpath); errors.Is(err, fs.ErrNotExist) {
		// The file would be created this size: check the pattern fits first.
		if _, err := gen.Pattern(pat, int64(seed), size, 0); err != nil {
			return usageErr("--size %d: %v", size, err)
		}
	}
	write := spec.Write()
	if err := wlCheckOutputs(cmd, tpath); err != nil {
		return err
	}
	tgt, err := wlOpenTarget(cmd, tpath, target.Options{Write: write, Read: !write, Size: size})
	if err != nil {
		return err
	}
	defer tgt.Close()
	src, err := gen.Pattern(pat, int64(seed), tgt.Size(), 0)
	if err != nil {
		return usageErr("target %s (%d bytes): %v", tpath, tgt.Size(), err)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "bench %s on %s (%d bytes), QD %d, %v\n", pat, textsafe.Terminal(tpath), tgt.Size(), cfg.QD, cfg.Duration)
	return wlRun(cmd, cfg, src, tgt, tpath)
}
