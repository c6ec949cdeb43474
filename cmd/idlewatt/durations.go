package main

// One grammar for every time and duration, flag, config key or IDLEWATT_*
// variable, whatever the command: a Go duration with its unit (500ms, 1.5s,
// 2m, 1h30m). A bare number other than 0 is refused, with both readings
// spelled out ("300: write 300ms or 300s"): `devslp.hold: 300` used to be
// taken as 300 s where the user meant 300 ms, like every other DevSlp
// figure, and held the pin for five minutes per cycle. Times on a capture
// (--from, --to) are durations from its first sample. Durations are never
// negative except a clock offset (emulator.offset, --offset); a negative one
// is bad input naming the flag or key.

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/pflag"
)

const durationSyntax = "a duration with its unit, such as 500ms, 1.5s, 2m or 1h30m"

// parseDuration parses s in the one grammar.
func parseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if x, err := strconv.ParseFloat(t, 64); err == nil {
		return bareNumber(x, t)
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (%s)", s, durationSyntax)
	}
	return d, nil
}

// bareNumber is a duration written without a unit: 0 (the same in every
// unit), else refused with the two readings a user may have meant.
func bareNumber(x float64, t string) (time.Duration, error) {
	if x == 0 {
		return 0, nil
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%q is not a duration (%s)", t, durationSyntax)
	}
	return 0, fmt.Errorf("%s: write %sms or %ss (a duration needs its unit)", t, t, t)
}

// durationValue is a pflag.Value in the one grammar.
type durationValue struct {
	d      *time.Duration
	signed bool
}

func (v durationValue) String() string { return v.d.String() }
func (v durationValue) Type() string   { return "duration" }
func (v durationValue) Set(s string) error {
	d, err := parseDuration(s)
	if err != nil {
		return err
	}
	if d < 0 && !v.signed {
		return fmt.Errorf("%s is negative", strings.TrimSpace(s))
	}
	*v.d = d
	return nil
}

// durationFlag defines a duration flag ≥ 0 in the one grammar.
func durationFlag(f *pflag.FlagSet, name string, def time.Duration, usage string) {
	d := def
	f.Var(durationValue{d: &d}, name, usage)
}

// signedDurationFlag defines a duration flag that may be negative.
func signedDurationFlag(f *pflag.FlagSet, name string, def time.Duration, usage string) {
	d := def
	f.Var(durationValue{d: &d, signed: true}, name, usage)
}

// durationHook decodes config durations in the one grammar: a YAML number
// (devslp.hold: 300) is a bare number, refused unless 0, never taken as
// seconds or nanoseconds.
func durationHook(from, to reflect.Type, data any) (any, error) {
	if to != reflect.TypeOf(time.Duration(0)) {
		return data, nil
	}
	switch x := data.(type) {
	case string:
		return parseDuration(x)
	case int:
		return bareNumber(float64(x), fmt.Sprint(x))
	case int64:
		return bareNumber(float64(x), fmt.Sprint(x))
	case float64:
		return bareNumber(x, fmt.Sprint(x))
	}
	return data, nil
}

// durationHook must be a hook mapstructure calls: ComposeDecodeHookFunc takes
// any, and a hook of another type would fail only when a config is decoded.
var _ mapstructure.DecodeHookFuncType = durationHook
