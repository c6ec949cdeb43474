package settings

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
)

// DurationSyntax says what the grammar takes, for messages.
const DurationSyntax = "a duration with its unit, such as 500ms, 1.5s, 2m or 1h30m"

// ParseDuration parses s in the one grammar.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if x, err := strconv.ParseFloat(t, 64); err == nil {
		return bareNumber(x, t)
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (%s)", s, DurationSyntax)
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
		return 0, fmt.Errorf("%q is not a duration (%s)", t, DurationSyntax)
	}
	return 0, fmt.Errorf("%s: write %sms or %ss (a duration needs its unit)", t, t, t)
}

// DurationValue is a flag value (pflag.Value) in the one grammar; a
// negative one is refused unless Signed.
type DurationValue struct {
	D      *time.Duration
	Signed bool
}

func (v DurationValue) String() string { return v.D.String() }
func (v DurationValue) Type() string   { return "duration" }
func (v DurationValue) Set(s string) error {
	d, err := ParseDuration(s)
	if err != nil {
		return err
	}
	if d < 0 && !v.Signed {
		return fmt.Errorf("%s is negative", strings.TrimSpace(s))
	}
	*v.D = d
	return nil
}

// DurationHook decodes config durations in the one grammar (a
// mapstructure.DecodeHookFuncType): a YAML number (devslp.hold: 300) is a
// bare number, refused unless 0, never taken as seconds or nanoseconds.
func DurationHook(from, to reflect.Type, data any) (any, error) {
	if to != reflect.TypeOf(time.Duration(0)) {
		return data, nil
	}
	switch x := data.(type) {
	case string:
		return ParseDuration(x)
	case int:
		return bareNumber(float64(x), fmt.Sprint(x))
	case int64:
		return bareNumber(float64(x), fmt.Sprint(x))
	case float64:
		return bareNumber(x, fmt.Sprint(x))
	}
	return data, nil
}
