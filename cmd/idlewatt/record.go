package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/idlewatt/idlewatt/app/rig"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/capture/record"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/textsafe"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/registry"
	"github.com/idlewatt/idlewatt/units"
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
		f := c.Flags()
		f.String("meter", "hub", "meter kind")
		f.String("port", "", "serial port, pty, or recorded byte stream")
		durationFlag(f, "duration", 0, "how long to record (0 = until interrupted)")
		f.String("out", "", "capture file to create")
		f.Float64("rate", 0, "samples per second per channel (0 = the meter's default)")
		f.String("ports", "", "ports to record, e.g. 1,2 (empty = all)")
		addOverwriteFlag(f, "CAPTURE (config record.overwrite)")
		f.Bool("json", false, "print the result as JSON")
		durationFlag(f, "give-up", 30*time.Second, "hub: when the meter vanishes mid-run, keep reopening it this long before failing (0 = fail at once)")
		f.StringArray("drive-name", nil, "PORT=NAME: name the drive on a port in the capture (repeatable; config drives[].name)")
		f.Int("capture-format", 0, "capture format to write: 2 (compact, summary levels) or 1 (for idlewatt before format 2); 0 = 2 (config record.capture_format)")
		addMeterFlags(f)
		addMetricsFlags(f)
		addViewFlags(f)
		return c
	})
}

// recordResult is what record prints when it is done.
type recordResult struct {
	Capture   string  `json:"capture"`
	Meter     string  `json:"meter"`
	Replayed  bool    `json:"replayed"`
	Channels  int     `json:"channels"`
	RateHz    float64 `json:"rate_hz"`
	Samples   uint64  `json:"samples"`
	Gaps      uint64  `json:"gaps"`
	Lost      uint64  `json:"samples_lost"`
	CRCErrors uint64  `json:"crc_errors"`
	Marks     uint64  `json:"marks"`
	// Disconnects counts the times the meter vanished mid-run; DownS is
	// how long it was gone in all.
	Disconnects uint64 `json:"disconnects"`
	// LostBy splits samples_lost by gap reason ("crc", "overrun", "disconnect", …).
	LostBy map[string]uint64 `json:"lost_by_reason"`
	// The meter's own account of its data (meter.Stats): samples sent
	// twice (dropped), index restarts, text lines that were not readings
	// (line meters) and the first of them.
	Duplicates uint64 `json:"duplicate_samples"`
	Restarts   uint64 `json:"index_restarts"`
	// Recovered: samples the hub sent again on request (protocol v2
	// RESEND) that would otherwise have been lost; Refused: good-CRC frames
	// the driver could not use (dropped, never samples).
	Recovered    uint64 `json:"samples_recovered"`
	Refused      uint64 `json:"frames_refused"`
	BadLines     uint64 `json:"bad_lines"`
	FirstBadLine uint64 `json:"first_bad_line,omitempty"`
	FirstBadByte uint64 `json:"first_bad_byte,omitempty"`
	// RefusedBy splits frames_refused by kind (the hub: "event",
	// "mark_echo", "channel_mask", …; docs/hub-protocol.md).
	RefusedBy map[string]uint64 `json:"frames_refused_by_kind,omitempty"`
	DownS     float64           `json:"down_s"`
	// StreamS is the length of the stream recorded on the meter's clock:
	// its first sample index (or gap) to the end of its last, gaps
	// included, over the rate. DurationS is what --duration asked (0:
	// until interrupted, or a replay, which --duration does not bound);
	// ElapsedS the wall time from opening the meter to closing the
	// capture (connecting, START and the end-of-stream drain included).
	StreamS   float64 `json:"stream_s"`
	DurationS float64 `json:"duration_s"`
	ElapsedS  float64 `json:"elapsed_s"`
	Stopped   string  `json:"stopped"` // "duration", "interrupted", "end of stream", "error"
}

func runRecord(cmd *cobra.Command, args []string) error {
	kind := optString(cmd, "meter", "meter.kind")
	if _, ok := registry.Lookup(kind); !ok { // named where it was set: a config's meter.kind was called --meter
		hint := ""
		if kind == "emulator" {
			hint = "; the emulator is measure's built-in hub: run idlewatt hub emulate and record --meter hub --port PTY"
		}
		return usageErr("%s %q: unknown meter kind (known: %s)%s", where(cmd, "meter", "meter.kind"), kind, strings.Join(registry.Kinds(), ", "), hint)
	}
	port := optString(cmd, "port", "meter.port")
	out := optString(cmd, "out", "record.out")
	if out == "" {
		return usageErr("record: --out CAPTURE is required")
	}
	dur, err := optDuration(cmd, "duration", "record.duration")
	if err != nil {
		return err
	}
	if dur < 0 {
		return usageErr("%s: %v is negative", where(cmd, "duration", "record.duration"), dur)
	}
	rate, err := optFloat(cmd, "rate", "meter.rate_hz")
	if err != nil {
		return err
	}
	if rate < 0 {
		return usageErr("%s: %g Hz is negative", where(cmd, "rate", "meter.rate_hz"), rate)
	}
	ports, err := parsePorts(optString(cmd, "ports", "meter.ports"))
	if err != nil {
		return usageErr("%s: %v", where(cmd, "ports", "meter.ports"), err)
	}
	// The capture is refused before the meter is opened; --port may be a
	// recorded byte stream, an input the capture must not be.
	oo := outOptions(cmd, "record.overwrite", port)
	if err := outfile.Check(out, oo); err != nil {
		return usageErr("record: --out %w", err)
	}

	obs, err := openMetrics(cmd, oo, func(p string) bool { return samePath(p, out) })
	if err != nil {
		return err
	}
	defer obs.Close()
	view, err := openView(cmd, out)
	if err != nil {
		return err
	}
	defer view.close()
	drives, err := recordDrives(cmd)
	if err != nil {
		return err
	}
	capVer, err := captureFormat(cmd)
	if err != nil {
		return err
	}
	mopts, err := readMeterOptions(cmd, rate)
	if err != nil {
		return err
	}
	if err := foreignMeterFlags(cmd, kind); err != nil {
		return err
	}
	port = registry.DefaultPort(kind, port)
	giveUp, err := optDuration(cmd, "give-up", "meter.give_up")
	if err != nil {
		return err
	}
	start := time.Now() // the wall time reported runs from here to the capture's close
	m, replayed, err := openMeterCtx(cmd, kind, port, mopts)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := drivePortsRecorded(cmd, m, meter.StreamConfig{Rate: units.Hertz(rate), Ports: ports}); err != nil {
		return err
	}
	if g, ok := m.(meter.Reconnector); ok {
		if giveUp <= 0 {
			giveUp = -1 // fail at the first disconnect
		}
		g.SetGiveUp(giveUp)
	}
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	if dur > 0 && !replayed {
		ctx, cancel = context.WithTimeout(ctx, dur)
		defer cancel()
	}
	rec, err := record.Start(ctx, m, record.Options{
		Path: out, Stream: meter.StreamConfig{Rate: units.Hertz(rate), Ports: ports},
		Header: capture.Header{Tool: "idlewatt " + version, Drives: drives},
		Describe: func(scfg meter.StreamConfig) json.RawMessage {
			b, _ := json.Marshal(map[string]any{"meter": kind, "port": port, "rate_hz": float64(scfg.Rate),
				"ports": scfg.Ports, "duration_s": dur.Seconds(), "replayed": replayed, "options": mopts})
			return b
		},
		Capture:  capture.Options{Overwrite: oo.Overwrite, Inputs: oo.Inputs, Version: capVer},
		Observer: record.Tee(obs, view.observer()), Replayed: replayed,
	})
	if err != nil {
		return recordStartErr(err)
	}
	stopProgress := record.ReportProgress(cmd.ErrOrStderr(), rec.Progress, record.ProgressOptions{
		Label: "record", Total: dur, Replayed: replayed, InPlace: isTerminal(cmd.ErrOrStderr())})
	<-rec.Done()
	stopProgress()
	fin := rec.Close()
	obs.Flush(fin.Stats) // the textfile ends with the final figures
	res := recordResultOf(out, kind, replayed, rec, fin, start)
	if !replayed {
		res.DurationS = dur.Seconds()
	}
	return printRecord(cmd, res, fin, dur)
}

// recordStartErr words a failure to start recording.
func recordStartErr(err error) error {
	var pe *fs.PathError
	var re *record.ResolveError
	switch {
	case errors.As(err, &re):
		return usageErr("record: %v", resolveHint(err, re.Stream))
	case errors.Is(err, record.ErrNoChannels), errors.Is(err, record.ErrNoRate):
		return usageErr("record: %v", err)
	case errors.As(err, &pe) && !errors.Is(err, capture.ErrDiskFull):
		return inputErr(fmt.Errorf("record: --out: %w", err)) // missing directory, no permission, exists
	}
	return failErr("record: %v", err)
}

func recordResultOf(out, kind string, replayed bool, rec *record.Recorder, fin record.Result, start time.Time) recordResult {
	res := recordResult{Capture: out, Meter: kind, Replayed: replayed, Channels: len(rec.Header().Channels),
		RateHz: float64(rec.Header().RateHz), ElapsedS: time.Since(start).Seconds()}
	st, t := fin.Stats, fin.Totals
	res.Samples, res.Gaps, res.Lost, res.Marks = t.Samples, t.Gaps, t.Lost, t.Marks
	res.Disconnects, res.DownS, res.LostBy = t.Disconnects, t.Down.Seconds(), t.LostBy
	res.CRCErrors = st.CRCErrors
	res.Duplicates, res.Restarts, res.BadLines = st.Duplicates, st.Restarts, st.BadLines
	res.Recovered, res.Refused, res.RefusedBy = st.Recovered, st.Refused, fin.RefusedBy
	res.FirstBadLine, res.FirstBadByte = st.FirstBadLine, st.FirstBadByte
	res.StreamS = float64(t.Span(rec.Header().RateHz))
	return res
}

// printRecord sets how the recording stopped, prints the result and
// returns the command's error.
func printRecord(cmd *cobra.Command, res recordResult, fin record.Result, dur time.Duration) error {
	out := res.Capture
	cause := context.Cause(cmd.Context())
	serr, werr := fin.StreamErr, fin.WriteErr
	if serr != nil && cmd.Context().Err() != nil && (errors.Is(serr, context.Canceled) || errors.Is(serr, errInterrupted)) {
		// The signal cancelled a command in flight (a START: "context
		// canceled"): the recording was interrupted, not broken.
		serr = nil
	}
	switch {
	case serr != nil:
		res.Stopped = "error"
	case cmd.Context().Err() != nil:
		res.Stopped = "interrupted"
	case res.Replayed:
		res.Stopped = "end of stream"
	default:
		res.Stopped = "duration"
	}
	if serr != nil {
		if werr != nil && errors.Is(serr, werr) {
			return failErr("record: %v", serr)
		}
		return failErr("record: %v (%s holds everything recorded before)", serr, out)
	}
	if werr != nil {
		return failErr("record: %v", werr)
	}
	// A signal is how an open-ended recording (--duration 0) ends; one that
	// cuts a timed recording short, or comes before the first sample, is a
	// failure to record what was asked.
	var short error
	switch {
	case res.Stopped != "interrupted":
	case res.Samples == 0:
		short = failErr("record: %w before the first sample; %s holds no samples", cause, out)
	case dur > 0:
		short = failErr("record: %w after %.1f s of stream of the %v asked (%.1f s wall); %s is complete up to then",
			cause, res.StreamS, dur, res.ElapsedS, out)
	}
	if optBool(cmd, "json", "") {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
		return short
	}
	w := cmd.OutOrStdout()
	asked := ""
	if res.DurationS > 0 {
		asked = fmt.Sprintf("; %v asked", dur)
	}
	fmt.Fprintf(w, "%s: %d samples on %d channels at %g Hz: %.1f s of stream (the meter's clock%s) in %.1f s wall, meter opened to capture closed (%s); %d gaps (%d samples lost%s), %d CRC errors, %d marks",
		out, res.Samples, res.Channels, res.RateHz, res.StreamS, asked, res.ElapsedS, res.Stopped,
		res.Gaps, res.Lost, byReason(res.LostBy), res.CRCErrors, res.Marks)
	if res.Disconnects > 0 {
		fmt.Fprintf(w, "; meter disconnected %d× (%.1f s in all), reconnected", res.Disconnects, res.DownS)
	}
	if res.Restarts > 0 {
		fmt.Fprintf(w, "; meter index restarted %d× (%d samples in estimated restart gaps)", res.Restarts, res.LostBy["restart"])
	}
	if res.Recovered > 0 {
		fmt.Fprintf(w, "; %d samples recovered by retransmission", res.Recovered)
	}
	if res.Refused > 0 {
		fmt.Fprintf(w, "; %d frames refused%s", res.Refused, byKind(res.RefusedBy))
	}
	if res.Duplicates > 0 {
		fmt.Fprintf(w, "; %d duplicate samples dropped", res.Duplicates)
	}
	if res.BadLines > 0 {
		fmt.Fprintf(w, "; %d bad lines (first: line %d, byte %d; %d samples of bad-line gaps)",
			res.BadLines, res.FirstBadLine, res.FirstBadByte, res.LostBy["bad-line"])
	}
	fmt.Fprintln(w)
	return short
}

// byReason is ": 1000 refused, 10 crc" for the samples lost by gap
// reason, the largest first; "" when none was lost.
func byReason(lost map[string]uint64) string {
	var rs []string
	for r, n := range lost {
		if n > 0 {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return ""
	}
	slices.SortFunc(rs, func(a, b string) int {
		if c := cmp.Compare(lost[b], lost[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	for i, r := range rs {
		rs[i] = fmt.Sprintf("%d %s", lost[r], r)
	}
	return ": " + strings.Join(rs, ", ")
}

// byKind is " (2 event, 1 mark_echo)" for the frames refused by kind, in
// name order; "" when the meter does not say.
func byKind(by map[string]uint64) string {
	if len(by) == 0 {
		return ""
	}
	ks := make([]string, 0, len(by))
	for k := range by {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	for i, k := range ks {
		ks[i] = fmt.Sprintf("%d %s", by[k], k)
	}
	return " (" + strings.Join(ks, ", ") + ")"
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// parsePorts reads "1,2" (empty = all ports).
func parsePorts(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var ports []int
	for _, f := range strings.Split(s, ",") {
		p, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || p < 1 {
			return nil, fmt.Errorf("%q is not a port number (1, 2, ...)", f)
		}
		ports = append(ports, p)
	}
	return ports, nil
}

// recordDrives names the drives on the ports from config drives[] (name,
// port, profile, target) and --drive-name PORT=NAME, which wins: a plain
// record then says the drive's name, not "port 1", everywhere.
func recordDrives(cmd *cobra.Command) ([]capture.DriveInfo, error) {
	var cfg []rig.DriveConfig
	if err := decodeKey(cmd, "drives", &cfg); err != nil {
		return nil, err
	}
	var ds []capture.DriveInfo
	at := map[int]int{}
	for k, d := range cfg {
		if d.Port <= 0 {
			return nil, usageErr("config drives[%d].port: %d, want a port from 1", k, d.Port)
		}
		if _, dup := at[d.Port]; dup {
			return nil, usageErr("config drives[%d].port: port %d is named twice", k, d.Port)
		}
		at[d.Port] = len(ds)
		ds = append(ds, capture.DriveInfo{Port: d.Port, Name: d.Name, Profile: d.Profile, Target: d.Target, Model: d.Model, Firmware: d.Firmware})
	}
	names, _ := cmd.Flags().GetStringArray("drive-name")
	named := map[int]string{}
	for _, full := range names {
		p, name, ok := strings.Cut(full, "=")
		nv := textsafe.Clip(full, 80) // quoted in messages
		port, err := strconv.Atoi(strings.TrimSpace(p))
		if !ok || err != nil || port <= 0 || strings.TrimSpace(name) == "" {
			return nil, usageErr("--drive-name %q: want PORT=NAME, e.g. 1=\"Samsung 870 EVO\"", nv)
		}
		if prev, dup := named[port]; dup { // the last one silently won
			return nil, usageErr("--drive-name %q: port %d is already named %q", nv, port, prev)
		}
		if n := len(strings.TrimSpace(name)); n > capture.MaxNameBytes {
			return nil, usageErr("--drive-name for port %d: %d bytes, at most %d (a capture header's name bound)", port, n, capture.MaxNameBytes)
		}
		named[port] = strings.TrimSpace(name)
		if k, ok := at[port]; ok {
			ds[k].Name = strings.TrimSpace(name)
			continue
		}
		at[port] = len(ds)
		ds = append(ds, capture.DriveInfo{Port: port, Name: strings.TrimSpace(name)})
	}
	return ds, nil
}

// captureFormat reads --capture-format (config record.capture_format).
func captureFormat(cmd *cobra.Command) (int, error) {
	v, err := optInt(cmd, "capture-format", "record.capture_format")
	if err != nil {
		return 0, err
	}
	if v != 0 && v != 1 && v != 2 {
		return 0, usageErr("%s: %d, want 1 or 2", where(cmd, "capture-format", "record.capture_format"), v)
	}
	return v, nil
}

// resolveHint adds what to do when a meter cannot stream without a stated
// rate (a line meter has no sample clock).
func resolveHint(err error, resolved meter.StreamConfig) error {
	if resolved.Rate <= 0 && errors.Is(err, meter.ErrUnsupported) {
		return fmt.Errorf("%w: give --rate (config key meter.rate_hz)", err)
	}
	return err
}

// drivePortsRecorded refuses a --drive-name for a port the recording will
// not hold (not on the meter, or left out by --ports): the name was dropped
// without a word. A config's drives[] may name more ports (a config shared
// with measure). A configuration the meter refuses is left to the recorder
// to report.
func drivePortsRecorded(cmd *cobra.Command, m meter.Meter, want meter.StreamConfig) error {
	sc, err := meter.Resolve(m, want)
	if err != nil || len(sc.Ports) == 0 {
		return nil
	}
	names, _ := cmd.Flags().GetStringArray("drive-name")
	for _, nv := range names {
		p, _, _ := strings.Cut(nv, "=")
		port, _ := strconv.Atoi(strings.TrimSpace(p))
		if !slices.Contains(sc.Ports, port) {
			return usageErr("--drive-name %q: port %d is not recorded (the recording has ports %v)", nv, port, sc.Ports)
		}
	}
	return nil
}
