package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// Errors callers branch on.
var (
	// ErrUnknownFormat: the file is none of the formats this package reads.
	ErrUnknownFormat = errors.New("not a meter file idlewatt reads")
	// ErrMalformed: the file is of a known format but its content is wrong;
	// errors matching it are a *ParseError naming the line or byte offset.
	ErrMalformed = errors.New("malformed meter file")
	// ErrOptions: an option does not fit the file (a line it does not have,
	// a voltage it needs and was not given).
	ErrOptions = errors.New("meter file option")
)

// ParseError says what is wrong where: a CSV's line (1-based) and the byte
// offset of that line's first byte, or a binary file's byte offset (Line 0).
type ParseError struct {
	Format string // Format.Name
	Line   int64  // 1-based line number; 0 for binary formats
	Offset int64  // byte offset in the file
	Field  string // column or field name, when one is at fault
	Reason string
}

func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString(e.Format)
	if e.Line > 0 {
		fmt.Fprintf(&b, ": line %d (byte %d)", e.Line, e.Offset)
	} else {
		fmt.Fprintf(&b, ": byte %d", e.Offset)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": %s", e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	return b.String()
}

// Is makes errors.Is(err, ErrMalformed) true.
func (e *ParseError) Is(target error) bool { return target == ErrMalformed }

// Options adapt a file to a capture. The zero value takes everything from
// the file; a current-only format needs Voltage.
type Options struct {
	// Voltage is the rail voltage of every sample when the file has no
	// voltage (a PPK2 export, an Otii export of current only). A file that
	// has one keeps its own.
	Voltage units.Volts
	// Rate is the sample rate when the file does not state one (a PPK2
	// export without its timestamp column). With timestamps the file's
	// own spacing is the rate and Rate must be 0 or agree with it.
	Rate units.Hertz
	// DevSlpLine names the digital line wired to the drive's DEVSLP pin
	// ("D3" for the PPK2, "gpi[1]" or "GPI1" for a Joulescope or Otii): its
	// edges become the capture's DEVSLP pin events. "" = none.
	DevSlpLine string
	// MarkerLine names a digital line the host drives high while it does
	// I/O: its high spans become I/O events. "" = none.
	MarkerLine string
	// D7First reads a PPK2 export's digital string as D7…D0, as Power
	// Profiler 3.0.0–3.1.0 wrote it; later versions write D0…D7.
	D7First bool
	// Port is the drive port of the file's channel (default 1).
	Port int
}

// Info is what a meter file says about itself, known once it is open.
type Info struct {
	Format   string // Format.Name
	Meter    meter.Info
	Channels []meter.Channel
	Rate     units.Hertz
	// Start is the wall-clock time of sample 0 when the file states it
	// (a Joulescope UTC track, an Otii wall-clock column); zero otherwise.
	Start time.Time
	// Lines are the digital lines the file carries, in the bit order of
	// the meter.EventLogic values Replay emits (bit k = Lines[k]).
	Lines []string
	// Notes say what the format cannot carry or what was assumed to read
	// it, for the capture and the report.
	Notes []string
}

// File is an open meter file. Replay may be called more than once; each
// call reads the file from its start.
type File interface {
	Info() Info
	// Replay delivers the file's samples, gaps and digital-line events to
	// sink, each channel's in increasing index order, the first sample at
	// index 0. It stops when ctx is done (returning its cause). Malformed
	// content is a *ParseError; what was delivered before it stands.
	Replay(ctx context.Context, sink meter.Sink) error
	// Notes are Info().Notes plus what Replay found (e.g. counts of
	// unknown digital states); final once Replay has returned.
	Notes() []string
	Close() error
}

// Format is one meter file format. Formats are registered in formats.go.
type Format struct {
	Name  string // short name: "ppk2-csv"
	Title string // for people: "Nordic Power Profiler (PPK2) CSV export"
	// Detect reports whether head (the file's first bytes, up to
	// DetectBytes) is this format.
	Detect func(head []byte) bool
	// Open reads what the format needs to describe the file (headers,
	// definitions, the rate) and returns it ready to Replay.
	Open func(r io.ReaderAt, size int64, o Options) (File, error)
}

// DetectBytes is how much of a file Detect sees.
const DetectBytes = 4096

// Formats lists the formats this package reads.
func Formats() []*Format { return formats }

// Detect returns the format of a file beginning with head, or nil.
func Detect(head []byte) *Format {
	for _, f := range formats {
		if f.Detect(head) {
			return f
		}
	}
	return nil
}

// Names lists the formats' titles, for an error that says what is read.
func Names() string {
	var s []string
	for _, f := range formats {
		s = append(s, f.Title)
	}
	return strings.Join(s, ", ")
}

// Sniff reports the format of the file at path, or nil if it is none of
// them (or cannot be read).
func Sniff(path string) *Format {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	head := make([]byte, DetectBytes)
	n, _ := io.ReadFull(f, head)
	return Detect(head[:n])
}

// Open opens the meter file at path, detecting its format.
func Open(path string, o Options) (File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	head := make([]byte, DetectBytes)
	n, _ := f.ReadAt(head, 0)
	format := Detect(head[:n])
	if format == nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w (formats read: %s)", path, ErrUnknownFormat, Names())
	}
	mf, err := format.Open(f, fi.Size(), o)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &closing{File: mf, f: f}, nil
}

// closing closes the os.File under a File opened by Open.
type closing struct {
	File
	f *os.File
}

func (c *closing) Close() error {
	err := c.File.Close()
	if cerr := c.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// optErr is an ErrOptions error.
func optErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrOptions, fmt.Sprintf(format, args...))
}

// railFor names the SATA rail a nominal voltage is, as the PPK2 driver
// does; anything else is RailOther.
func railFor(v units.Volts) meter.Rail {
	switch {
	case v > 3.25 && v < 3.35:
		return meter.Rail3V3
	case v > 4.95 && v < 5.05:
		return meter.Rail5V
	case v > 11.9 && v < 12.1:
		return meter.Rail12V
	}
	return meter.RailOther
}

// maxVolts and maxAmps bound a reading: beyond them a file is wrong (a
// unit error), not a measurement. The meters read here top out at 5 V / 1 A
// (PPK2), 15 V / 3 A (Joulescope JS220) and 5 V / 2.5 A (Otii Arc).
const (
	maxVolts = 100
	maxAmps  = 100
)

var sprintf = fmt.Sprintf
