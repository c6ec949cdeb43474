package main

import (
	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/report"
	"github.com/idlewatt/idlewatt/workload/replay"
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
			RunE: func(cmd *cobra.Command, _ []string) error {
				return replay.Replay(cmd.Context(), get(cmd), replaySession(cmd))
			},
		}
		declare(c.Flags(), replay.Flags...)
		return c
	})
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
			RunE: func(cmd *cobra.Command, _ []string) error {
				return replay.Bench(cmd.Context(), get(cmd), replaySession(cmd))
			},
		}
		declare(c.Flags(), replay.BenchFlags...)
		return c
	})
}

// replaySession is where replay and bench report: cmd's streams, its
// output rules, and the IOPS chart (report.IOPSChart).
func replaySession(cmd *cobra.Command) replay.Session {
	return replay.Session{Who: cmd.Name(), Stdout: cmd.OutOrStdout(), Err: cmd.ErrOrStderr(), Out: outOptions(cmd), Chart: report.IOPSChart}
}
