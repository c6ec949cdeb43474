package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// Driver is one meter kind.
type Driver struct {
	Kind    string   // the name users give, e.g. "ppk2"
	Aliases []string // other accepted names
	// Port is used when the caller gives none ("" = a port is required).
	Port string
	// OnePort: the meter measures one thing, on port 1 (a PPK2, a laptop's
	// battery, a line meter, a bench supply), not a drive per port: a run
	// with no drive configured measures that one.
	OnePort bool
	// Flags declare the settings the driver reads (besides rate_hz): flag,
	// config key (meter.KEY), kind, default and help, the help without
	// the kind's name (Flags joins the drivers that share a flag). A
	// command declares them all and refuses one the kind would ignore.
	Flags []settings.Flag
	// DirPort: the port is a directory (a sysfs root), not a device; any
	// other kind's port that is a directory is refused as bad input.
	DirPort bool
	// Open connects to a live meter at path (serial port, pty, sysfs root).
	Open func(path string, s Settings) (meter.Meter, error)
	// Replay decodes a recorded raw byte stream in the regular file path,
	// unpaced; nil if the kind has no recorded-stream format.
	Replay func(path string, s Settings) (meter.Meter, error)
	Doc    Doc
}

// Doc says how to connect a kind, for `idlewatt meters` (docs/meters.md
// has wiring, limits and uncertainty). Options and Record are in the
// command line's words: flag (config key).
type Doc struct {
	What      string
	Connect   string
	MaxRateHz units.Hertz // 0: set by the meter
	Options   []string
	Record    string // an example record invocation
}

var (
	mu      sync.RWMutex
	drivers = map[string]Driver{}
	aliases = map[string]string{}
)

// Register adds a driver; a kind or alias registered twice panics (a
// programming error, found at start-up).
func Register(d Driver) {
	mu.Lock()
	defer mu.Unlock()
	if d.Kind == "" || d.Open == nil {
		panic("registry: a driver needs a Kind and an Open")
	}
	for _, n := range append([]string{d.Kind}, d.Aliases...) {
		if _, dup := drivers[n]; dup {
			panic("registry: meter kind " + n + " registered twice")
		}
		if _, dup := aliases[n]; dup {
			panic("registry: meter kind " + n + " registered twice")
		}
	}
	drivers[d.Kind] = d
	for _, a := range d.Aliases {
		aliases[a] = d.Kind
	}
}

// Lookup returns the driver of kind (or of an alias of it).
func Lookup(kind string) (Driver, bool) {
	mu.RLock()
	defer mu.RUnlock()
	if k, ok := aliases[kind]; ok {
		kind = k
	}
	d, ok := drivers[kind]
	return d, ok
}

// Takes reports whether the driver reads the setting key (rate_hz: every
// kind takes a rate).
func (d Driver) Takes(key string) bool {
	return key == "rate_hz" || slices.ContainsFunc(d.Flags, func(f settings.Flag) bool { return f.Key == "meter."+key })
}

// Kinds returns the registered kinds, sorted (aliases left out).
func Kinds() []string {
	mu.RLock()
	defer mu.RUnlock()
	var names []string
	for n := range drivers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Drivers returns the registered drivers, by kind.
func Drivers() []Driver {
	var ds []Driver
	for _, k := range Kinds() {
		d, _ := Lookup(k)
		ds = append(ds, d)
	}
	return ds
}

// DefaultPort returns path, or kind's default port when path is empty.
func DefaultPort(kind, path string) string {
	if path != "" {
		return path
	}
	d, _ := Lookup(kind)
	return d.Port
}

// Open opens a meter of kind at path (or the kind's default port). A
// regular file is replayed when the kind has a recorded-stream format, and
// replayed says so. Errors are classified as the package doc says; a
// device error is returned as the driver gave it (the caller names path).
func Open(kind, path string, s Settings) (m meter.Meter, replayed bool, err error) {
	d, ok := Lookup(kind)
	if !ok {
		return nil, false, usage(ErrUnknownKind, "%q: unknown meter kind (known: %s)", kind, strings.Join(Kinds(), ", "))
	}
	if path == "" {
		path = d.Port
	}
	port := s.Where("port")
	if path == "" {
		return nil, false, usage(nil, "%s is required (a serial port, pty, or recorded %s stream)", port, kind)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, false, usage(err, "%s %s: %v", port, path, err)
	}
	if fi.IsDir() && !d.DirPort {
		return nil, false, usage(nil, "%s %s is a directory, not a serial port, pty or recorded %s stream", port, path, d.Kind)
	}
	if fi.Mode().IsRegular() {
		if d.Replay == nil {
			return nil, true, usage(nil, "%s %s is a regular file, and %s meters have no recorded-stream format", port, path, kind)
		}
		m, err = d.Replay(path, s)
		var re *Error
		if err != nil && !errors.As(err, &re) {
			err = &Error{Class: ErrInput, msg: err.Error(), err: err}
		}
		return nilOnError(m, err), true, err
	}
	m, err = d.Open(path, s)
	return nilOnError(m, err), false, err
}

// OpenLive is Open for a live meter only: a regular file (a recorded
// stream) is an ErrUsage error, for callers that drive the meter (a
// measurement sets DEVSLP pins and marks its clock).
func OpenLive(kind, path string, s Settings) (meter.Meter, error) {
	if path == "" {
		path = DefaultPort(kind, path)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		return nil, usage(nil, "%s %s is a regular file (a recorded stream); a measurement needs a live meter", s.Where("port"), path)
	}
	m, _, err := Open(kind, path, s)
	return m, err
}

// nilOnError drops the meter of a failed open: a driver's typed nil
// pointer (return hub.Open(…)) would be a non-nil meter.Meter.
func nilOnError(m meter.Meter, err error) meter.Meter {
	if err != nil {
		return nil
	}
	return m
}

// Error classes (errors.Is on an *Error).
var (
	// ErrUsage: the request is wrong (kind, port, settings); exit 2.
	ErrUsage = errors.New("bad meter request")
	// ErrInput: a recorded stream that does not decode; exit 2.
	ErrInput = errors.New("bad recorded meter stream")
	// ErrUnknownKind is the cause of the ErrUsage error for a kind no
	// driver registered.
	ErrUnknownKind = errors.New("unknown meter kind")
)

// Error is an error of a class (ErrUsage, ErrInput) with its own message;
// it unwraps to the cause, if any.
type Error struct {
	Class error
	msg   string
	err   error
}

func (e *Error) Error() string        { return e.msg }
func (e *Error) Unwrap() error        { return e.err }
func (e *Error) Is(target error) bool { return target == e.Class }

func usage(cause error, format string, a ...any) error {
	return &Error{Class: ErrUsage, msg: fmt.Sprintf(format, a...), err: cause}
}

// Settings are a driver's kind-specific options, by config key under
// meter. ("mode", "supply_mv", "rate_hz", …). Values are typed by the
// caller: string, bool, int, float64 or time.Duration; a missing key reads
// as the zero value. The zero Settings holds no values.
type Settings struct {
	Values map[string]any
	// Name spells a key for messages (the command line: "--supply-mv
	// (meter.supply_mv)"); nil: "meter.KEY".
	Name func(key string) string
}

// Where names key for a message.
func (s Settings) Where(key string) string {
	if s.Name != nil {
		return s.Name(key)
	}
	return "meter." + key
}

// Usagef returns an ErrUsage error (for a driver's check of its settings).
func (s Settings) Usagef(format string, a ...any) error { return usage(nil, format, a...) }

func get[T any](s Settings, key string) T {
	v, _ := s.Values[key].(T)
	return v
}

// String returns key's string value.
func (s Settings) String(key string) string { return get[string](s, key) }

// Bool returns key's bool value.
func (s Settings) Bool(key string) bool { return get[bool](s, key) }

// Int returns key's int value.
func (s Settings) Int(key string) int { return get[int](s, key) }

// Float returns key's float64 value.
func (s Settings) Float(key string) float64 { return get[float64](s, key) }

// Duration returns key's time.Duration value.
func (s Settings) Duration(key string) time.Duration { return get[time.Duration](s, key) }

// MarshalJSON writes the values set (non-zero), by key: a capture header
// records the settings a meter was opened with.
func (s Settings) MarshalJSON() ([]byte, error) {
	m := map[string]any{}
	for k, v := range s.Values {
		switch x := v.(type) {
		case string:
			if x == "" {
				continue
			}
		case bool:
			if !x {
				continue
			}
		case int:
			if x == 0 {
				continue
			}
		case float64:
			if x == 0 {
				continue
			}
		case time.Duration:
			if x == 0 {
				continue
			}
		}
		m[k] = v
	}
	return json.Marshal(m)
}
