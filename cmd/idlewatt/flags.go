package main

// Settings are declared beside the code that checks them (internal/settings):
// a driver's in its meter/registry entry, the hub emulator's in app/emuhub,
// replay's in workload/replay, and so on. A command declares the flags of
// the declarations it takes (declare) and hands the packages a Getter
// (get) that resolves each: the flag if given, else its config key (file
// or IDLEWATT_* env), else the flag's default.

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/meter/registry"
)

// annKey is the flag annotation that holds its config key.
const annKey = "idlewatt/key"

// declare adds the declared flags to fs, each with its config key.
func declare(fs *pflag.FlagSet, flags ...settings.Flag) {
	for _, d := range flags {
		switch d.Kind {
		case settings.String:
			fs.String(d.Name, def[string](d), d.Help)
		case settings.Bool:
			fs.Bool(d.Name, def[bool](d), d.Help)
		case settings.Int:
			fs.Int(d.Name, def[int](d), d.Help)
		case settings.Int64:
			fs.Int64(d.Name, def[int64](d), d.Help)
		case settings.Uint64:
			fs.Uint64(d.Name, def[uint64](d), d.Help)
		case settings.Float:
			fs.Float64(d.Name, def[float64](d), d.Help)
		case settings.Duration, settings.SignedDuration:
			v := def[time.Duration](d)
			fs.Var(settings.DurationValue{D: &v, Signed: d.Kind == settings.SignedDuration}, d.Name, d.Help)
		case settings.GoDuration:
			fs.Duration(d.Name, def[time.Duration](d), d.Help)
		case settings.Strings:
			fs.StringSlice(d.Name, def[[]string](d), d.Help)
		case settings.StringArray:
			fs.StringArray(d.Name, def[[]string](d), d.Help)
		case settings.Ints:
			fs.IntSlice(d.Name, def[[]int](d), d.Help)
		default:
			panic(fmt.Sprintf("flag --%s: kind %v has no flag", d.Name, d.Kind))
		}
		if d.Key != "" {
			_ = fs.SetAnnotation(d.Name, annKey, []string{d.Key})
		}
		if d.NoOptDefault != "" {
			fs.Lookup(d.Name).NoOptDefVal = d.NoOptDefault
		}
	}
}

// def is a declaration's default as T; a default of another type is a
// bug in the declaration, found when the command tree is built.
func def[T any](d settings.Flag) T {
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

// getter is a command's settings.Getter. extra declares settings the
// command may have no flag for, whose config keys are read all the same:
// the drivers' (measure reads meter.mode without a --mode).
type getter struct {
	cmd   *cobra.Command
	extra []settings.Flag
}

// get returns cmd's Getter.
func get(cmd *cobra.Command) settings.Getter { return getter{cmd, registry.Flags()} }

// key is the config key of flag ("" = none).
func (g getter) key(flag string) string {
	if f := g.cmd.Flags().Lookup(flag); f != nil {
		if k := f.Annotations[annKey]; len(k) == 1 {
			return k[0]
		}
		return ""
	}
	for _, d := range g.extra {
		if d.Name == flag {
			return d.Key
		}
	}
	return ""
}

func (g getter) String(flag string) string { return optString(g.cmd, flag, g.key(flag)) }
func (g getter) Bool(flag string) bool     { return optBool(g.cmd, flag, g.key(flag)) }
func (g getter) Int(flag string) (int, error) {
	return optInt(g.cmd, flag, g.key(flag))
}
func (g getter) Float(flag string) (float64, error) { return optFloat(g.cmd, flag, g.key(flag)) }
func (g getter) Duration(flag string) (time.Duration, error) {
	return optDuration(g.cmd, flag, g.key(flag))
}
func (g getter) List(flag string) []string {
	if f := g.cmd.Flags().Lookup(flag); f != nil {
		if v, ok := f.Value.(pflag.SliceValue); ok {
			return v.GetSlice()
		}
	}
	return nil
}
func (g getter) Ints(flag string) []int {
	v, _ := g.cmd.Flags().GetIntSlice(flag)
	return v
}
func (g getter) Set(flag string) bool     { return optSet(g.cmd, flag, g.key(flag)) }
func (g getter) Where(flag string) string { return where(g.cmd, flag, g.key(flag)) }
func (g getter) Has(flag string) bool     { return g.cmd.Flags().Lookup(flag) != nil }
func (g getter) Changed(flag string) bool {
	f := g.cmd.Flags().Lookup(flag)
	return f != nil && f.Changed
}

// durationFlag defines a duration flag ≥ 0 in the one grammar.
func durationFlag(f *pflag.FlagSet, name string, d time.Duration, usage string) {
	f.Var(settings.DurationValue{D: &d}, name, usage)
}

// signedDurationFlag defines a duration flag that may be negative.
func signedDurationFlag(f *pflag.FlagSet, name string, d time.Duration, usage string) {
	f.Var(settings.DurationValue{D: &d, Signed: true}, name, usage)
}

// addMeterFlags adds the drivers' flags (meter/registry) to a command that
// opens a meter.
func addMeterFlags(f *pflag.FlagSet) { declare(f, registry.Flags()...) }

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{
			Use:   "meters",
			Short: "List the meter kinds and how to connect each",
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				return registry.WriteList(cmd.OutOrStdout(), optBool(cmd, "json", ""))
			},
		}
		c.Flags().Bool("json", false, "print JSON")
		return c
	})
}
