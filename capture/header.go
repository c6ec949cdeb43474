package capture

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/idlewatt/idlewatt/meter"
)

// Bounds a header must respect (docs/capture-format.md, "Header"). Readers
// refuse a header outside them and the Writer refuses to write one, so no
// stage downstream divides by a zero period or indexes a missing channel.
const (
	// MinRateHz is one sample per 1000 s: slower than any meter idlewatt
	// drives (the laptop battery meter samples at 1 Hz).
	MinRateHz = 1e-3
	// MaxRateHz is 10 MS/s, a period of 100 ns: a hundred times the fastest
	// meter idlewatt drives (the PPK2's 100 kS/s), and far from the point
	// where a period rounds to zero nanoseconds.
	MaxRateHz = 1e7
	// MaxChannels bounds the stream's channels (a hub has 4 ports × 2 rails).
	MaxChannels = 4096
	// MaxPort bounds a channel's port number (0 is a channel that is no
	// drive's, e.g. the battery meter's CPU package).
	MaxPort = 4096

	// MaxNameBytes bounds every name and identity string of the header —
	// created, tool, the meter's kind, model, firmware, serial and
	// capabilities, a drive's name, profile, model, firmware and interface —
	// in bytes of UTF-8: a drive name of 10 MB made 217 MB of report files
	// and 20 MB of terminal output. A real name is tens of bytes.
	MaxNameBytes = 256
	// MaxPathBytes bounds a drive's target (a device or file path; PATH_MAX).
	MaxPathBytes = 4096
	// MaxConfigBytes bounds the run's configuration kept verbatim (a config
	// file of a few drives and profiles is a few KiB).
	MaxConfigBytes = 1 << 20
	// MaxListEntries bounds the header's other lists: drives, the meter's
	// channels (as the stream's), rates and capabilities.
	MaxListEntries = 4096
)

// ErrInvalid: a chunk's bytes are intact (its CRC matches) but what they say
// is impossible — a header whose rate is not a number of samples per second,
// no channels, an unknown rail. Errors matching it name the field and the
// byte offset.
var ErrInvalid = errors.New("invalid capture")

// HeaderError says which header field is impossible and where it is.
type HeaderError struct {
	Field  string // JSON path, e.g. "rate_hz" or "channels[2].rail"
	Offset int64  // byte offset of the field's value in the file (of the header payload when unknown)
	Reason string
}

func (e *HeaderError) Error() string {
	if e.Offset <= 0 {
		return fmt.Sprintf("capture header: %s: %s", e.Field, e.Reason)
	}
	return fmt.Sprintf("capture header: %s at byte %d: %s", e.Field, e.Offset, e.Reason)
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *HeaderError) Is(target error) bool { return target == ErrInvalid }

// ValidateHeader checks h against the bounds above. payload, when not nil,
// is the header chunk's JSON starting at file offset base; it is used only to
// say where in the file a bad field is.
func ValidateHeader(h *Header, payload []byte, base int64) error {
	bad := func(reason string, path ...any) error {
		name := ""
		for _, p := range path {
			switch p := p.(type) {
			case string:
				if name != "" {
					name += "."
				}
				name += p
			case int:
				name += fmt.Sprintf("[%d]", p)
			}
		}
		off := base
		if o := jsonOffset(payload, path...); o >= 0 {
			off += o
		}
		return &HeaderError{Field: name, Offset: off, Reason: reason}
	}
	if r := float64(h.RateHz); math.IsNaN(r) || math.IsInf(r, 0) || r < MinRateHz || r > MaxRateHz {
		return bad(fmt.Sprintf("sample rate %g Hz is outside %g … %g Hz", r, MinRateHz, MaxRateHz), "rate_hz")
	}
	n := len(h.Channels)
	if n == 0 {
		return bad("no channels: a capture needs at least one measured rail", "channels")
	}
	if n > MaxChannels {
		return bad(fmt.Sprintf("%d channels, at most %d", n, MaxChannels), "channels")
	}
	if err := validateStrings(h, bad); err != nil {
		return err
	}
	for i, c := range h.Channels {
		if c.Port < 0 || c.Port > MaxPort {
			return bad(fmt.Sprintf("port %d is outside 0 … %d", c.Port, MaxPort), "channels", i, "port")
		}
		switch c.Rail {
		case meter.RailOther, meter.Rail5V, meter.Rail12V, meter.Rail3V3:
		default:
			return bad(fmt.Sprintf("rail %d is not a known rail (0 other, 1 = 5 V, 2 = 12 V, 3 = 3.3 V)", c.Rail), "channels", i, "rail")
		}
		// Whether an LSB is plausible for its meter is the meter driver's
		// to judge; the format needs it finite and not negative.
		if v := float64(c.VoltLSB); math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return bad(fmt.Sprintf("voltage LSB %g V is negative or not finite", v), "channels", i, "volt_lsb_v")
		}
		if a := float64(c.CurrentLSB); math.IsNaN(a) || math.IsInf(a, 0) || a < 0 {
			return bad(fmt.Sprintf("current LSB %g A is negative or not finite", a), "channels", i, "current_lsb_a")
		}
		if err := validCalibration(c, i, bad); err != nil {
			return err
		}
	}
	return nil
}

// validateStrings checks the header's strings and lists against their
// bounds (bad names the field).
func validateStrings(h *Header, bad func(string, ...any) error) error {
	str := func(v string, limit int, path ...any) error {
		if len(v) > limit {
			return bad(fmt.Sprintf("%d bytes, at most %d", len(v), limit), path...)
		}
		return nil
	}
	list := func(n int, path ...any) error {
		if n > MaxListEntries {
			return bad(fmt.Sprintf("%d entries, at most %d", n, MaxListEntries), path...)
		}
		return nil
	}
	m := &h.Meter
	for _, c := range []struct {
		v    string
		path []any
	}{{h.Created, []any{"created"}}, {h.Tool, []any{"tool"}}, {m.Kind, []any{"meter", "kind"}}, {m.Model, []any{"meter", "model"}},
		{m.Firmware, []any{"meter", "firmware"}}, {m.Serial, []any{"meter", "serial"}}} {
		if err := str(c.v, MaxNameBytes, c.path...); err != nil {
			return err
		}
	}
	if err := list(len(m.Channels), "meter", "channels"); err != nil {
		return err
	}
	if err := list(len(m.Rates), "meter", "rates_hz"); err != nil {
		return err
	}
	if err := list(len(m.Capabilities), "meter", "capabilities"); err != nil {
		return err
	}
	for i, c := range m.Capabilities {
		if err := str(c, MaxNameBytes, "meter", "capabilities", i); err != nil {
			return err
		}
	}
	if err := list(len(h.Drives), "drives"); err != nil {
		return err
	}
	for i, d := range h.Drives {
		for _, f := range []struct {
			name, v string
			limit   int
		}{{"name", d.Name, MaxNameBytes}, {"profile", d.Profile, MaxNameBytes}, {"target", d.Target, MaxPathBytes},
			{"model", d.Model, MaxNameBytes}, {"firmware", d.Firmware, MaxNameBytes}, {"interface", d.Interface, MaxNameBytes}} {
			if err := str(f.v, f.limit, "drives", i, f.name); err != nil {
				return err
			}
		}
	}
	if len(h.Config) > MaxConfigBytes {
		return bad(fmt.Sprintf("%d bytes, at most %d", len(h.Config), MaxConfigBytes), "config")
	}
	return nil
}

// DuplicateKey returns a *HeaderError naming the first key that appears
// twice in one JSON object of the header payload js (file offset base), nil
// when there is none or js is not JSON (Unmarshal says why). encoding/json
// takes the last of two keys, and matches keys to fields without regard to
// case, so "rate_hz" twice — or "rate_hz" and "RATE_HZ" — would be read as
// whichever came last (a second rate_hz turned 12 J into 120 005 J); keys
// are compared as json compares them.
func DuplicateKey(js []byte, base int64) error {
	type object struct {
		path string
		keys map[string]int64 // folded key → offset of its first appearance
		n    int              // array index (arrays only)
		arr  bool
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	var stack []*object
	expectKey := false
	child := func() string { // path of the value about to be read
		if len(stack) == 0 {
			return ""
		}
		top := stack[len(stack)-1]
		if top.arr {
			p := fmt.Sprintf("%s[%d]", top.path, top.n)
			top.n++
			return p
		}
		return top.path
	}
	var key string
	for {
		at := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil // the end, or not JSON: Unmarshal reports that
		}
		if expectKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				expectKey = len(stack) > 0 && !stack[len(stack)-1].arr
				continue
			}
			k, _ := tok.(string)
			top := stack[len(stack)-1]
			fold := strings.ToLower(strings.ToUpper(k))
			off := valueStart(js, at)
			path := k
			if top.path != "" {
				path = top.path + "." + k
			}
			if first, dup := top.keys[fold]; dup {
				return &HeaderError{Field: path, Offset: base + off,
					Reason: fmt.Sprintf("key %q appears twice in one object (first at byte %d); a reader would take the second", k, base+first)}
			}
			top.keys[fold] = off
			key, expectKey = path, false
			continue
		}
		path := key
		if len(stack) > 0 && stack[len(stack)-1].arr {
			path = child()
		}
		key = ""
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &object{path: path, keys: map[string]int64{}})
			expectKey = true
			continue
		case json.Delim('['):
			stack = append(stack, &object{path: path, arr: true})
			continue
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		// A value (or the end of an array) ends; in an object the next token
		// is a key or its end.
		expectKey = len(stack) > 0 && !stack[len(stack)-1].arr
	}
}

// jsonOffset returns the offset in js where the value at path (object keys
// and array indices) begins, or -1 if it cannot be found.
func jsonOffset(js []byte, path ...any) int64 {
	if len(js) == 0 || len(path) == 0 {
		return -1
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	off, ok := findJSON(dec, js, path)
	if !ok {
		return -1
	}
	return off
}

func findJSON(dec *json.Decoder, js []byte, path []any) (int64, bool) {
	tok, err := dec.Token()
	if err != nil {
		return 0, false
	}
	skip := func() bool { var raw json.RawMessage; return dec.Decode(&raw) == nil }
	switch want := path[0].(type) {
	case string:
		if tok != json.Delim('{') {
			return 0, false
		}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return 0, false
			}
			if k == want {
				if len(path) == 1 {
					return valueStart(js, dec.InputOffset()), true
				}
				return findJSON(dec, js, path[1:])
			}
			if !skip() {
				return 0, false
			}
		}
	case int:
		if tok != json.Delim('[') {
			return 0, false
		}
		for i := 0; dec.More(); i++ {
			if i == want {
				if len(path) == 1 {
					return valueStart(js, dec.InputOffset()), true
				}
				return findJSON(dec, js, path[1:])
			}
			if !skip() {
				return 0, false
			}
		}
	}
	return 0, false
}

// valueStart moves from off past whitespace, ':' and ',' to a value's first byte.
func valueStart(js []byte, off int64) int64 {
	for off < int64(len(js)) && bytes.IndexByte([]byte(" \t\r\n:,"), js[off]) >= 0 {
		off++
	}
	return off
}

// validCalibration checks channel i's stated calibration limits: finite,
// not negative, a gain error under 100 %.
func validCalibration(c meter.Channel, i int, bad func(string, ...any) error) error {
	for _, g := range []struct {
		v   float64
		key string
	}{{c.VoltGainErr, "volt_gain_error"}, {c.CurrentGainErr, "current_gain_error"}} {
		if math.IsNaN(g.v) || math.IsInf(g.v, 0) || g.v < 0 || g.v >= 1 {
			return bad(fmt.Sprintf("gain error limit %g is not a fraction in [0, 1)", g.v), "channels", i, g.key)
		}
	}
	if a := float64(c.CurrentOffset); math.IsNaN(a) || math.IsInf(a, 0) || a < 0 {
		return bad(fmt.Sprintf("current offset limit %g A is negative or not finite", a), "channels", i, "current_offset_a")
	}
	return nil
}
