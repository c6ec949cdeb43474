package record

// The command line's side of a recording (`idlewatt record`): its
// settings, declared once; what it asks checked before the meter opens;
// and the summary of what was recorded, as JSON and as one line.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/ctxio"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/registry"
	"github.com/idlewatt/idlewatt/units"
)

// Flags are `idlewatt record`'s own settings (with the drivers', the live
// metrics' and the live view's).
var Flags = []settings.Flag{
	{Name: "meter", Key: "meter.kind", Kind: settings.String, Default: "hub", Help: "meter kind"},
	{Name: "port", Key: "meter.port", Kind: settings.String, Help: "serial port, pty, or recorded byte stream"},
	{Name: "duration", Key: "record.duration", Kind: settings.Duration, Help: "how long to record (0 = until interrupted)"},
	{Name: "out", Key: "record.out", Kind: settings.String, Help: "capture file to create"},
	{Name: "rate", Key: "meter.rate_hz", Kind: settings.Float, Help: "samples per second per channel (0 = the meter's default)"},
	{Name: "ports", Key: "meter.ports", Kind: settings.String, Help: "ports to record, e.g. 1,2 (empty = all)"},
	outfile.Flag("CAPTURE (config record.overwrite)", "record.overwrite"),
	{Name: "json", Kind: settings.Bool, Help: "print the result as JSON"},
	{Name: "give-up", Key: "meter.give_up", Kind: settings.Duration, Default: 30 * time.Second, Help: "hub: when the meter vanishes mid-run, keep reopening it this long before failing (0 = fail at once)"},
	{Name: "drive-name", Kind: settings.StringArray, Help: "PORT=NAME: name the drive on a port in the capture (repeatable; config drives[].name)"},
	{Name: "capture-format", Key: "record.capture_format", Kind: settings.Int, Help: "capture format to write: 2 (compact, summary levels) or 1 (for idlewatt before format 2); 0 = 2 (config record.capture_format)"},
}

// Request is what a recording asks, read from Flags and checked before
// anything is opened.
type Request struct {
	Kind, Port, Out string
	Duration        time.Duration
	Rate            float64
	Ports           []int
}

// ReadRequest reads and checks the kind, port, output, duration, rate and
// ports.
func ReadRequest(g settings.Getter) (Request, error) {
	q := Request{Kind: g.String("meter"), Port: g.String("port"), Out: g.String("out")}
	if _, ok := registry.Lookup(q.Kind); !ok { // named where it was set: a config's meter.kind was called --meter
		hint := ""
		if q.Kind == "emulator" {
			hint = "; the emulator is measure's built-in hub: run idlewatt hub emulate and record --meter hub --port PTY"
		}
		return q, settings.Usagef("%s %q: unknown meter kind (known: %s)%s", g.Where("meter"), q.Kind, strings.Join(registry.Kinds(), ", "), hint)
	}
	if q.Out == "" {
		return q, settings.Usagef("record: --out CAPTURE is required")
	}
	var err error
	if q.Duration, err = g.Duration("duration"); err != nil {
		return q, err
	}
	if q.Duration < 0 {
		return q, settings.Usagef("%s: %v is negative", g.Where("duration"), q.Duration)
	}
	if q.Rate, err = g.Float("rate"); err != nil {
		return q, err
	}
	if q.Rate < 0 {
		return q, settings.Usagef("%s: %g Hz is negative", g.Where("rate"), q.Rate)
	}
	if q.Ports, err = ParsePorts(g.String("ports")); err != nil {
		return q, settings.Usagef("%s: %v", g.Where("ports"), err)
	}
	return q, nil
}

// ParsePorts reads "1,2" (empty = all ports).
func ParsePorts(s string) ([]int, error) {
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

// ReadFormat reads --capture-format (config record.capture_format): 1, 2,
// or 0 for the current one.
func ReadFormat(g settings.Getter) (int, error) {
	v, err := g.Int("capture-format")
	if err != nil {
		return 0, err
	}
	if v != 0 && v != 1 && v != 2 {
		return 0, settings.Usagef("%s: %d, want 1 or 2", g.Where("capture-format"), v)
	}
	return v, nil
}

// CheckNamedPorts refuses a --drive-name (names, PORT=NAME) for a port the
// recording will not hold (not on the meter, or left out by --ports): the
// name was dropped without a word. A configuration the meter refuses is
// left to Start to report.
func CheckNamedPorts(m meter.Meter, want meter.StreamConfig, names []string) error {
	sc, err := meter.Resolve(m, want)
	if err != nil || len(sc.Ports) == 0 {
		return nil
	}
	for _, nv := range names {
		p, _, _ := strings.Cut(nv, "=")
		port, _ := strconv.Atoi(strings.TrimSpace(p))
		if !slices.Contains(sc.Ports, port) {
			return settings.Usagef("--drive-name %q: port %d is not recorded (the recording has ports %v)", nv, port, sc.Ports)
		}
	}
	return nil
}

// StartError words a failure to start recording: a stream the meter
// cannot give as asked, or an output that cannot be created, is bad usage
// or input (settings.ErrUsage); anything else a failure.
func StartError(err error) error {
	var pe *fs.PathError
	var re *ResolveError
	switch {
	case errors.As(err, &re):
		if re.Stream.Rate <= 0 && errors.Is(err, meter.ErrUnsupported) {
			// A meter without a sample clock (a line meter) needs a rate.
			return settings.Usagef("record: %v", fmt.Errorf("%w: give --rate (config key meter.rate_hz)", err))
		}
		return settings.Usagef("record: %v", err)
	case errors.Is(err, ErrNoChannels), errors.Is(err, ErrNoRate):
		return settings.Usagef("record: %v", err)
	case errors.As(err, &pe) && !errors.Is(err, capture.ErrDiskFull):
		return settings.Input(fmt.Errorf("record: --out: %w", err)) // missing directory, no permission, exists
	}
	return fmt.Errorf("record: %v", err)
}

// Summary is what `idlewatt record` prints when it is done.
type Summary struct {
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

// Summarize is the summary of the recording rec into out of a meter of
// kind, closed with fin, from start (the meter's opening); dur is what
// was asked (not a replay's).
func Summarize(out, kind string, replayed bool, rec *Recorder, fin Result, start time.Time, dur time.Duration) Summary {
	res := Summary{Capture: out, Meter: kind, Replayed: replayed, Channels: len(rec.Header().Channels),
		RateHz: float64(rec.Header().RateHz), ElapsedS: time.Since(start).Seconds()}
	st, t := fin.Stats, fin.Totals
	res.Samples, res.Gaps, res.Lost, res.Marks = t.Samples, t.Gaps, t.Lost, t.Marks
	res.Disconnects, res.DownS, res.LostBy = t.Disconnects, t.Down.Seconds(), t.LostBy
	res.CRCErrors = st.CRCErrors
	res.Duplicates, res.Restarts, res.BadLines = st.Duplicates, st.Restarts, st.BadLines
	res.Recovered, res.Refused, res.RefusedBy = st.Recovered, st.Refused, fin.RefusedBy
	res.FirstBadLine, res.FirstBadByte = st.FirstBadLine, st.FirstBadByte
	res.StreamS = float64(t.Span(rec.Header().RateHz))
	if !replayed {
		res.DurationS = dur.Seconds()
	}
	return res
}

// Finish sets how the recording stopped (ctx is the command's). failed is
// the stream's or the capture's error (nothing to print); short a signal
// that cut a timed recording short or came before the first sample (the
// summary still printed). A signal is how an open-ended recording
// (duration 0) ends.
func (res *Summary) Finish(ctx context.Context, fin Result, dur time.Duration) (failed, short error) {
	serr, werr := fin.StreamErr, fin.WriteErr
	if serr != nil && ctx.Err() != nil && (errors.Is(serr, context.Canceled) || errors.Is(serr, ctxio.ErrInterrupted)) {
		// The signal cancelled a command in flight (a START: "context
		// canceled"): the recording was interrupted, not broken.
		serr = nil
	}
	switch {
	case serr != nil:
		res.Stopped = "error"
	case ctx.Err() != nil:
		res.Stopped = "interrupted"
	case res.Replayed:
		res.Stopped = "end of stream"
	default:
		res.Stopped = "duration"
	}
	switch {
	case serr != nil && werr != nil && errors.Is(serr, werr):
		return fmt.Errorf("record: %v", serr), nil
	case serr != nil:
		return fmt.Errorf("record: %v (%s holds everything recorded before)", serr, res.Capture), nil
	case werr != nil:
		return fmt.Errorf("record: %v", werr), nil
	case res.Stopped != "interrupted":
		return nil, nil
	case res.Samples == 0:
		return nil, fmt.Errorf("record: %w before the first sample; %s holds no samples", context.Cause(ctx), res.Capture)
	case dur > 0:
		return nil, fmt.Errorf("record: %w after %.1f s of stream of the %v asked (%.1f s wall); %s is complete up to then",
			context.Cause(ctx), res.StreamS, dur, res.ElapsedS, res.Capture)
	}
	return nil, nil
}

// WriteText writes the summary's one line; dur is what was asked.
func (res *Summary) WriteText(w io.Writer, dur time.Duration) {
	asked := ""
	if res.DurationS > 0 {
		asked = fmt.Sprintf("; %v asked", dur)
	}
	fmt.Fprintf(w, "%s: %d samples on %d channels at %g Hz: %.1f s of stream (the meter's clock%s) in %.1f s wall, meter opened to capture closed (%s); %d gaps (%d samples lost%s), %d CRC errors, %d marks",
		res.Capture, res.Samples, res.Channels, res.RateHz, res.StreamS, asked, res.ElapsedS, res.Stopped,
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

// Stream is the stream the request asks of the meter.
func (q Request) Stream() meter.StreamConfig {
	return meter.StreamConfig{Rate: units.Hertz(q.Rate), Ports: q.Ports}
}

// Options are Start's options for the request into a capture with header h
// and options c, observed by obs; replayed and settings (the meter's
// kind-specific ones) go into the capture's description of its meter.
func (q Request) Options(h capture.Header, c capture.Options, obs Observer, replayed bool, settings any) Options {
	return Options{Path: q.Out, Stream: q.Stream(), Header: h, Capture: c, Observer: obs, Replayed: replayed,
		Describe: func(scfg meter.StreamConfig) json.RawMessage {
			b, _ := json.Marshal(map[string]any{"meter": q.Kind, "port": q.Port, "rate_hz": float64(scfg.Rate),
				"ports": scfg.Ports, "duration_s": q.Duration.Seconds(), "replayed": replayed, "options": settings})
			return b
		}}
}

// SetGiveUp tells a meter that reopens a vanished link (meter.Reconnector)
// how long to keep trying: 0 or less fails at the first disconnect.
func SetGiveUp(m meter.Meter, d time.Duration) {
	if r, ok := m.(meter.Reconnector); ok {
		if d <= 0 {
			d = -1
		}
		r.SetGiveUp(d)
	}
}
