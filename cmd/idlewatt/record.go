package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/rig"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{
			Use:   "record --meter KIND --port PATH --duration D --out CAPTURE",
			Short: "Record a meter's stream into a capture file",
			Long: `Streams every sample, gap, mark and event of a meter into a capture file
(docs/capture-format.md), sends a clock mark about once a second when the
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
	Recovered    uint64  `json:"samples_recovered"`
	Refused      uint64  `json:"frames_refused"`
	BadLines     uint64  `json:"bad_lines"`
	FirstBadLine uint64  `json:"first_bad_line,omitempty"`
	FirstBadByte uint64  `json:"first_bad_byte,omitempty"`
	DownS        float64 `json:"down_s"`
	ElapsedS     float64 `json:"elapsed_s"`
	Stopped      string  `json:"stopped"` // "duration", "interrupted", "end of stream", "error"
}

func runRecord(cmd *cobra.Command, args []string) error {
	kind := optString(cmd, "meter", "meter.kind")
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

	lm, err := openMetrics(cmd, oo)
	if err != nil {
		return err
	}
	defer lm.close()
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
	port = meterPort(kind, port)
	giveUp, err := optDuration(cmd, "give-up", "meter.give_up")
	if err != nil {
		return err
	}
	m, k, replayed, err := openMeterCtx(cmd, kind, port, mopts)
	if err != nil {
		return err
	}
	defer m.Close()
	if g, ok := m.(interface{ SetGiveUp(time.Duration) }); ok {
		if giveUp <= 0 {
			giveUp = -1 // fail at the first disconnect
		}
		g.SetGiveUp(giveUp)
	}
	info := m.Info()
	scfg := meter.StreamConfig{Rate: units.Hertz(rate), Ports: ports}
	if k.resolve != nil {
		if scfg, err = k.resolve(info, scfg); err != nil {
			return usageErr("record: %v", err)
		}
	}
	chans := meter.Channels(info, scfg)
	if len(chans) == 0 {
		return usageErr("record: no channels selected (ports %v of a %d-port meter)", ports, info.Ports)
	}
	settings, _ := json.Marshal(map[string]any{"meter": kind, "port": port, "rate_hz": float64(scfg.Rate),
		"ports": scfg.Ports, "duration_s": dur.Seconds(), "replayed": replayed, "options": mopts})
	h := capture.Header{
		Created: time.Now().UTC().Format(time.RFC3339), Meter: info, Channels: chans,
		RateHz: float64(scfg.Rate), StartHost: hostclock.Now(), Config: settings, Tool: "idlewatt " + version,
		Drives: drives,
	}
	w, err := capture.Create(out, h, capture.Options{Overwrite: oo.Overwrite, Inputs: oo.Inputs, Version: capVer})
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && !errors.Is(err, capture.ErrDiskFull) {
			return inputErr(fmt.Errorf("record: --out: %w", err)) // missing directory, no permission, exists
		}
		return failErr("record: %v", err)
	}
	sink := newRecordSink(w, chans)
	sink.metrics = lm.start(h)

	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	if dur > 0 && !replayed {
		ctx, cancel = context.WithTimeout(ctx, dur)
		defer cancel()
	}
	start := time.Now()
	prog := &progress{w: cmd.ErrOrStderr(), tty: isTerminal(cmd.ErrOrStderr()), total: dur, replayed: replayed, chans: chans}
	var wg sync.WaitGroup
	tickDone := make(chan struct{})
	wg.Go(func() { recordTicker(ctx, tickDone, m, w, sink, prog, replayed, start) })

	serr := m.Stream(ctx, scfg, sink)
	close(tickDone)
	wg.Wait()
	prog.finish()

	res := recordResult{Capture: out, Meter: kind, Replayed: replayed, Channels: len(chans), RateHz: float64(scfg.Rate),
		ElapsedS: time.Since(start).Seconds()}
	st := m.Stats()
	sink.metrics.stats(st) // the textfile ends with the final figures
	res.Samples, res.Gaps, res.Lost, res.Marks = sink.totals()
	res.Disconnects, res.DownS = sink.outages()
	res.LostBy = sink.lostByReason()
	res.CRCErrors = st.CRCErrors
	res.Duplicates, res.Restarts, res.BadLines = st.Duplicates, st.Restarts, st.BadLines
	res.Recovered, res.Refused = st.Recovered, st.Refused
	res.FirstBadLine, res.FirstBadByte = st.FirstBadLine, st.FirstBadByte
	switch {
	case serr != nil:
		res.Stopped = "error"
	case cmd.Context().Err() != nil:
		res.Stopped = "interrupted"
	case replayed:
		res.Stopped = "end of stream"
	default:
		res.Stopped = "duration"
	}
	werr := w.Stats(st)
	if cerr := w.Close(); werr == nil {
		werr = cerr
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
	// cuts a timed recording short is a failure to record what was asked.
	var short error
	if res.Stopped == "interrupted" && dur > 0 {
		short = failErr("record: interrupted after %.1f s of %v (%v); %s is complete up to then",
			res.ElapsedS, dur, context.Cause(cmd.Context()), out)
	}
	if optBool(cmd, "json", "") {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
		return short
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s: %d samples on %d channels at %g Hz in %.1f s (%s); %d gaps (%d samples lost), %d CRC errors, %d marks",
		out, res.Samples, res.Channels, res.RateHz, res.ElapsedS, res.Stopped, res.Gaps, res.Lost, res.CRCErrors, res.Marks)
	if res.Disconnects > 0 {
		fmt.Fprintf(cmd.OutOrStdout(), "; meter disconnected %d× (%.1f s in all), reconnected", res.Disconnects, res.DownS)
	}
	if res.Restarts > 0 {
		fmt.Fprintf(cmd.OutOrStdout(), "; meter index restarted %d× (%d samples in estimated restart gaps)", res.Restarts, res.LostBy["restart"])
	}
	if res.Recovered > 0 {
		fmt.Fprintf(cmd.OutOrStdout(), "; %d samples recovered by retransmission", res.Recovered)
	}
	if res.Refused > 0 {
		fmt.Fprintf(cmd.OutOrStdout(), "; %d frames refused", res.Refused)
	}
	if res.Duplicates > 0 {
		fmt.Fprintf(cmd.OutOrStdout(), "; %d duplicate samples dropped", res.Duplicates)
	}
	if res.BadLines > 0 {
		fmt.Fprintf(cmd.OutOrStdout(), "; %d bad lines (first: line %d, byte %d; %d samples of bad-line gaps)",
			res.BadLines, res.FirstBadLine, res.FirstBadByte, res.LostBy["bad-line"])
	}
	fmt.Fprintln(cmd.OutOrStdout())
	return short
}

// recordTicker sends a clock mark, records link stats and shows progress
// about once a second. A replay gets progress only: it has no host clock to
// mark, and its Stats are not safe to read while it streams.
func recordTicker(ctx context.Context, done <-chan struct{}, m meter.Meter, w *capture.Writer, sink *recordSink,
	prog *progress, replayed bool, start time.Time) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	marker, canMark := m.(meter.Marker)
	var id uint32
	var markErrs uint64
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var st meter.Stats
		if !replayed {
			if canMark {
				id++
				mctx, cancel := context.WithTimeout(ctx, time.Second)
				if err := marker.Mark(mctx, id); err != nil && ctx.Err() == nil {
					markErrs++
				}
				cancel()
			}
			st = m.Stats()
			if err := w.Stats(st); err != nil {
				return // the sink reports the writer's failure to Stream
			}
			sink.metrics.stats(st)
		}
		prog.show(time.Since(start), sink, st, markErrs)
	}
}

// recordSink passes everything to the capture and keeps the counters and
// recent per-channel power that progress shows.
type recordSink struct {
	w       *capture.Writer
	metrics *metricsSink // nil without --metrics-addr / --metrics-textfile

	mu      sync.Mutex
	samples uint64
	gaps    uint64
	lost    uint64
	marks   uint64
	pSum    []float64 // per channel, since the last progress line
	pN      []uint64
	// Outages: downSince is the hostclock of the open one (0 if the link is up).
	lostBy      map[string]uint64
	disconnects uint64
	downNs      int64
	downSince   int64
}

func newRecordSink(w *capture.Writer, chans []meter.Channel) *recordSink {
	return &recordSink{w: w, pSum: make([]float64, len(chans)), pN: make([]uint64, len(chans))}
}

func (s *recordSink) Samples(b *meter.Block) error {
	if err := s.w.Samples(b); err != nil {
		return err
	}
	s.metrics.samples(b)
	var sum float64
	for k := range b.V {
		sum += float64(b.V[k]) * float64(b.I[k])
	}
	s.mu.Lock()
	s.samples += uint64(len(b.V))
	if b.Channel >= 0 && b.Channel < len(s.pSum) {
		s.pSum[b.Channel] += sum
		s.pN[b.Channel] += uint64(len(b.V))
	}
	s.mu.Unlock()
	return nil
}

func (s *recordSink) Gap(g meter.Gap) error {
	s.mu.Lock()
	s.gaps++
	s.lost += g.Count
	if s.lostBy == nil {
		s.lostBy = map[string]uint64{}
	}
	s.lostBy[g.Reason] += g.Count
	s.mu.Unlock()
	s.metrics.gap(g)
	return s.w.Gap(g)
}

func (s *recordSink) Mark(m meter.MarkEcho) error {
	s.mu.Lock()
	s.marks++
	s.mu.Unlock()
	return s.w.Mark(m)
}

func (s *recordSink) Event(e meter.Event) error {
	s.mu.Lock()
	switch e.Kind {
	case meter.EventDisconnect:
		if s.downSince == 0 {
			s.disconnects++
			s.downSince = max(e.HostRecv, 1)
		}
	case meter.EventReconnect:
		if s.downSince != 0 {
			s.downNs += max(e.HostRecv-s.downSince, 0)
			s.downSince = 0
		}
	}
	s.mu.Unlock()
	return s.w.Event(e)
}

// lostByReason returns a copy of the samples lost per gap reason.
func (s *recordSink) lostByReason() map[string]uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := map[string]uint64{}
	for r, n := range s.lostBy {
		m[r] = n
	}
	return m
}

// outages returns the disconnects so far and the time the meter was gone,
// counting an outage still open.
func (s *recordSink) outages() (n uint64, downS float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.downNs
	if s.downSince != 0 {
		d += hostclock.Now() - s.downSince
	}
	return s.disconnects, float64(d) / 1e9
}

// down returns how long the meter has been gone, 0 if it is connected.
func (s *recordSink) down() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.downSince == 0 {
		return 0
	}
	return time.Duration(hostclock.Now() - s.downSince)
}

func (s *recordSink) totals() (samples, gaps, lost, marks uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples, s.gaps, s.lost, s.marks
}

// takePower returns each channel's mean power since the last call (NaN-free:
// a channel without samples reports ok=false).
func (s *recordSink) takePower(dst []float64, ok []bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.pSum {
		ok[c] = s.pN[c] > 0
		if ok[c] {
			dst[c] = s.pSum[c] / float64(s.pN[c])
		}
		s.pSum[c], s.pN[c] = 0, 0
	}
}

// progress writes one status line a second: rewritten in place on a
// terminal, appended otherwise (logs, CI).
type progress struct {
	w        io.Writer
	tty      bool
	total    time.Duration
	replayed bool
	chans    []meter.Channel
	shown    bool
}

func (p *progress) show(elapsed time.Duration, s *recordSink, st meter.Stats, markErrs uint64) {
	power := make([]float64, len(p.chans))
	ok := make([]bool, len(p.chans))
	s.takePower(power, ok)
	samples, gaps, lost, _ := s.totals()
	var b strings.Builder
	b.WriteString("record ")
	b.WriteString(elapsed.Truncate(time.Second).String())
	if p.total > 0 && !p.replayed {
		b.WriteString("/" + p.total.String())
	}
	fmt.Fprintf(&b, "  %d samples", samples)
	// Sum the rails of each port, in channel order.
	for c := 0; c < len(p.chans); {
		port, w, any := p.chans[c].Port, 0.0, false
		for ; c < len(p.chans) && p.chans[c].Port == port; c++ {
			if ok[c] {
				w, any = w+power[c], true
			}
		}
		if any {
			fmt.Fprintf(&b, "  p%d %s", port, units.Watts(w).Readout())
		} else {
			fmt.Fprintf(&b, "  p%d -", port)
		}
	}
	if !p.replayed {
		fmt.Fprintf(&b, "  crc %d", st.CRCErrors)
	}
	fmt.Fprintf(&b, "  gaps %d (%d lost)", gaps, lost)
	if d := s.down(); d > 0 {
		fmt.Fprintf(&b, "  meter gone %s, reconnecting", d.Truncate(time.Second))
	} else if n, _ := s.outages(); n > 0 {
		fmt.Fprintf(&b, "  reconnected %d×", n)
	}
	if markErrs > 0 {
		fmt.Fprintf(&b, "  mark errors %d", markErrs)
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r%s\x1b[K", b.String())
	} else {
		fmt.Fprintln(p.w, b.String())
	}
	p.shown = true
}

func (p *progress) finish() {
	if p.tty && p.shown {
		fmt.Fprintln(p.w)
	}
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
	for _, nv := range names {
		p, name, ok := strings.Cut(nv, "=")
		port, err := strconv.Atoi(strings.TrimSpace(p))
		if !ok || err != nil || port <= 0 || strings.TrimSpace(name) == "" {
			return nil, usageErr("--drive-name %q: want PORT=NAME, e.g. 1=\"Samsung 870 EVO\"", nv)
		}
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
