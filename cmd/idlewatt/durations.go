package main

// One grammar for every time and duration, flag or config key, whatever the
// command: a Go duration (500ms, 1.5s, 2m, 1h30m) or bare seconds (90, 1.5).
// Times on a capture (--from, --to) are durations from its first sample.
// Durations are never negative except a clock offset (emulator.offset,
// --offset); a negative one is bad input naming the flag or key.

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

const durationSyntax = "a Go duration such as 500ms, 1.5s, 2m, or bare seconds such as 90 or 1.5"

// parseDuration parses s in the one grammar.
func parseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if x, err := strconv.ParseFloat(t, 64); err == nil {
		return secondsDuration(x, s)
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (%s)", s, durationSyntax)
	}
	return d, nil
}

// secondsDuration converts a number of seconds, refusing NaN and overflow.
func secondsDuration(x float64, orig string) (time.Duration, error) {
	if math.IsNaN(x) || math.Abs(x) > float64(math.MaxInt64)/1e9 {
		return 0, fmt.Errorf("%q is not a duration (%s)", orig, durationSyntax)
	}
	return time.Duration(math.Round(x * 1e9)), nil
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

// durationHook decodes config durations in the one grammar (a bare number
// is seconds, not nanoseconds).
func durationHook(from, to reflect.Type, data any) (any, error) {
	if to != reflect.TypeOf(time.Duration(0)) {
		return data, nil
	}
	switch x := data.(type) {
	case string:
		return parseDuration(x)
	case int:
		return secondsDuration(float64(x), fmt.Sprint(x))
	case int64:
		return secondsDuration(float64(x), fmt.Sprint(x))
	case float64:
		return secondsDuration(x, fmt.Sprint(x))
	}
	return data, nil
}

// durationHook must be a hook mapstructure calls: ComposeDecodeHookFunc takes
// any, and a hook of another type would fail only when a config is decoded.
var _ mapstructure.DecodeHookFuncType = durationHook
