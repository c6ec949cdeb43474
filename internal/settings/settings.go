package settings

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Kind is the type of a setting: the flag's type on the command line,
// and what a config value must hold.
type Kind int

const (
	String         Kind = iota // any scalar
	Bool                       // true/false (also 1/0, t/f, TRUE/FALSE: strconv.ParseBool)
	Int                        // a whole number
	Float                      // a finite number
	Duration                   // a duration ≥ 0 in the one grammar (ParseDuration)
	SignedDuration             // a duration of either sign (a clock offset)
	List                       // a YAML list (config file only)
	Map                        // a YAML mapping (config file only)
	// Flag-only kinds: the command line's types that no config key has.
	Int64
	Uint64
	GoDuration  // a duration in time.ParseDuration's grammar (pflag's own)
	Strings     // comma-separated, repeatable (pflag StringSlice)
	StringArray // repeatable, taken whole (pflag StringArray)
	Ints        // comma-separated integers (pflag IntSlice)
)

// String names the kind as messages say it ("want a duration").
func (k Kind) String() string {
	switch k {
	case String:
		return "string"
	case Bool:
		return "boolean"
	case Int, Int64, Uint64:
		return "integer"
	case Float:
		return "number"
	case Duration, SignedDuration, GoDuration:
		return "duration"
	case List, Strings, StringArray, Ints:
		return "list"
	case Map:
		return "map"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Flag declares one setting. Name is the flag (without "--"); Key the
// dotted config key ("" = the flag only). Default has the Kind's Go type:
// string, bool, int, float64, time.Duration, int64, uint64, []string or
// []int (nil for the zero value). NoOptDefault, when set, is the value of
// the flag given without one (--nvme alone).
type Flag struct {
	Name, Key    string
	Kind         Kind
	Default      any
	Help         string
	NoOptDefault string
}

// Getter reads settings back by flag name, as the command line resolved
// them: the flag if given, else the config key (file or IDLEWATT_* env),
// else the flag's default. The numeric getters fail with a usage error
// naming the source (Where) for a value that does not parse.
type Getter interface {
	String(flag string) string
	Bool(flag string) bool
	Int(flag string) (int, error)
	Float(flag string) (float64, error)
	Duration(flag string) (time.Duration, error)
	// List is a list flag's values (Strings, StringArray); Ints an Ints
	// flag's.
	List(flag string) []string
	Ints(flag string) []int
	// Set reports whether the flag was given or its key set.
	Set(flag string) bool
	// Changed reports whether the flag was given on the command line.
	Changed(flag string) bool
	// Has reports whether the command has the flag at all (a setting
	// whose flag it lacks is read from its config key only).
	Has(flag string) bool
	// Where names the source of the setting for a message: "--ports",
	// "IDLEWATT_EMULATE_PORTS (emulate.ports)" or "config key emulate.ports".
	Where(flag string) string
}

// ErrUsage is the class of bad usage or bad input (errors.Is): a value out
// of range, settings that contradict, an input that is not what it should
// be. The command line exits 2 for it.
var ErrUsage = errors.New("bad usage")

// Error is an error of class ErrUsage; it unwraps to its cause.
type Error struct{ err error }

func (e *Error) Error() string        { return e.err.Error() }
func (e *Error) Unwrap() error        { return e.err }
func (e *Error) Is(target error) bool { return target == ErrUsage }

// Usagef returns an ErrUsage error; %w keeps the cause for errors.Is/As.
func Usagef(format string, a ...any) error { return &Error{fmt.Errorf(format, a...)} }

// Input marks err as bad input (ErrUsage), keeping it for errors.Is/As
// (nil stays nil).
func Input(err error) error {
	if err == nil {
		return nil
	}
	return &Error{err}
}

// EnvName is the environment variable of a config key:
// meter.supply_mv is IDLEWATT_METER_SUPPLY_MV.
func EnvName(key string) string {
	return "IDLEWATT_" + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(key))
}
