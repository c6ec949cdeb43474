package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/idlewatt/idlewatt/app/config"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/capture/record"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/meter/registry"
	"github.com/idlewatt/idlewatt/report/live"
	"github.com/idlewatt/idlewatt/report/livemetrics"
)

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{
			Use:   "record --meter KIND --port PATH --duration D --out CAPTURE",
			Short: "Record a meter's stream into a capture file",
			Long: `Streams every sample, gap, mark and event of a meter into a capture file
(docs/capture-format.md), sends a clock mark twice a second when the
meter echoes marks, and records link statistics. Progress goes to stderr.
SIGINT/SIGTERM stop the recording cleanly; --duration 0 records until then.

--port may name a regular file holding a raw device→host byte stream (for
the hub: an 'idlewatt hub emulate --fast' output; for a ppk2: a dump, metadata
through END then sample words; for a line meter: a recorded log); it is
decoded as fast as possible, whole, without pacing or marks, and --duration
is ignored.

A hub that vanishes mid-run (cable, USB reset, re-enumeration) is reopened at
the same path with backoff and resumed; the samples lost are recorded as one
exact gap. The run fails only if the hub stays gone for --give-up.

Kinds (idlewatt meters lists them; docs/meters.md has the wiring):
  hub      --port /dev/ttyUSB0
  ppk2     --port /dev/ttyACM0 [--mode source|ampere] [--supply-mv MV] [--rate 100000/N]
  battery  [--port /sys] [--interval 1s] [--battery BAT0] [--rapl]
  line     --port /dev/ttyUSB0 --columns millis,loadV,current_mA|currentranger
           --rate LINES_PER_S [--voltage V] [--baud 115200]
  scpi     --port /dev/ttyUSB0 [--family auto|n6705|k2450|k2280s|dp800|sdm]
           [--channel 1] [--voltage V] [--baud 115200]`,
			Args: cobra.NoArgs,
			RunE: runRecord,
			// a signal ends --duration 0; record reports a timed run cut short itself
			Annotations: map[string]string{annSignalEnds: "true"},
		}
		declare(c.Flags(), record.Flags...)
		addMeterFlags(c.Flags())
		declare(c.Flags(), livemetrics.Flags...)
		declare(c.Flags(), live.Flags...)
		return c
	})
}

func runRecord(cmd *cobra.Command, args []string) error {
	g := get(cmd)
	q, err := record.ReadRequest(g)
	if err != nil {
		return err
	}
	// The capture is refused before the meter is opened; --port may be a
	// recorded byte stream, an input the capture must not be.
	oo := outOptions(cmd, q.Port)
	if err := outfile.Check(q.Out, oo); err != nil {
		return usageErr("record: --out %w", err)
	}
	obs, err := livemetrics.Open(get(cmd), oo, func(p string) bool { return outfile.Same(p, q.Out) }, cmd.ErrOrStderr(), cmd.CommandPath())
	if err != nil {
		return err
	}
	defer obs.Close()
	view, err := live.Open(get(cmd), q.Out, cmd.ErrOrStderr(), cmd.CommandPath())
	if err != nil {
		return err
	}
	defer view.Close()
	h := capture.Header{Tool: "idlewatt " + version}
	if h.Drives, err = config.RecordDrives(cliOf(cmd).cfg, g.List("drive-name")); err != nil {
		return err
	}
	capVer, err := record.ReadFormat(g)
	if err != nil {
		return err
	}
	mopts, err := registry.Read(g, q.Rate)
	if err != nil {
		return err
	}
	if err := registry.Foreign(q.Kind, g); err != nil {
		return err
	}
	q.Port = registry.DefaultPort(q.Kind, q.Port)
	giveUp, err := g.Duration("give-up")
	if err != nil {
		return err
	}
	return recordFrom(cmd, q, h, mopts, giveUp, capture.Options{Overwrite: oo.Overwrite, Inputs: oo.Inputs, Version: capVer}, obs, view)
}

// recordFrom opens the meter q asks for and records it into the capture
// of header h and options c until q's duration, a signal or the end of a
// replayed stream, then prints what was recorded.
func recordFrom(cmd *cobra.Command, q record.Request, h capture.Header, mopts registry.Settings, giveUp time.Duration,
	c capture.Options, obs *livemetrics.Observer, view *live.Session) error {
	start := time.Now() // the wall time reported runs from here to the capture's close
	m, replayed, err := openMeterCtx(cmd, q.Kind, q.Port, mopts)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := record.CheckNamedPorts(m, q.Stream(), get(cmd).List("drive-name")); err != nil {
		return err
	}
	record.SetGiveUp(m, giveUp)
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	if q.Duration > 0 && !replayed {
		ctx, cancel = context.WithTimeout(ctx, q.Duration)
		defer cancel()
	}
	rec, err := record.Start(ctx, m, q.Options(h, c, record.Tee(obs, view.Observer()), replayed, mopts))
	if err != nil {
		return record.StartError(err)
	}
	stopProgress := record.ReportProgress(cmd.ErrOrStderr(), rec.Progress, record.ProgressOptions{
		Label: "record", Total: q.Duration, Replayed: replayed, InPlace: isTerminal(cmd.ErrOrStderr())})
	<-rec.Done()
	stopProgress()
	fin := rec.Close()
	obs.Flush(fin.Stats) // the textfile ends with the final figures
	res := record.Summarize(q.Out, q.Kind, replayed, rec, fin, start, q.Duration)
	failed, short := res.Finish(cmd.Context(), fin, q.Duration)
	if failed != nil {
		return failed
	}
	if get(cmd).Bool("json") {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
		return short
	}
	res.WriteText(cmd.OutOrStdout(), q.Duration)
	return short
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
