package settings

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// AnnKey is the annotation of a declared flag that holds its config key.
const AnnKey = "idlewatt/key"

// Declare adds the declared flags to fs, each of its Kind's type with its
// config key in its AnnKey annotation. A default not of the Kind's Go type
// is a bug in the declaration: it panics when the command is built.
func Declare(fs *pflag.FlagSet, flags ...Flag) {
	for _, d := range flags {
		switch d.Kind {
		case String:
			fs.String(d.Name, def[string](d), d.Help)
		case Bool:
			fs.Bool(d.Name, def[bool](d), d.Help)
		case Int:
			fs.Int(d.Name, def[int](d), d.Help)
		case Int64:
			fs.Int64(d.Name, def[int64](d), d.Help)
		case Uint64:
			fs.Uint64(d.Name, def[uint64](d), d.Help)
		case Float:
			fs.Float64(d.Name, def[float64](d), d.Help)
		case Duration, SignedDuration:
			v := def[time.Duration](d)
			fs.Var(DurationValue{D: &v, Signed: d.Kind == SignedDuration}, d.Name, d.Help)
		case GoDuration:
			fs.Duration(d.Name, def[time.Duration](d), d.Help)
		case Strings:
			fs.StringSlice(d.Name, def[[]string](d), d.Help)
		case StringArray:
			fs.StringArray(d.Name, def[[]string](d), d.Help)
		case Ints:
			fs.IntSlice(d.Name, def[[]int](d), d.Help)
		default:
			panic(fmt.Sprintf("flag --%s: kind %v has no flag", d.Name, d.Kind))
		}
		if d.Key != "" {
			_ = fs.SetAnnotation(d.Name, AnnKey, []string{d.Key})
		}
		if d.NoOptDefault != "" {
			fs.Lookup(d.Name).NoOptDefVal = d.NoOptDefault
		}
	}
}

func def[T any](d Flag) T {
	var zero T
	if d.Default == nil {
		return zero
	}
	v, ok := d.Default.(T)
	if !ok {
		panic(fmt.Sprintf("flag --%s: default %T, want %T", d.Name, d.Default, zero))
	}
	return v
}
