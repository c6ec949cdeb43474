package main

// Settings are declared beside the code that checks them (internal/settings):
// a driver's in its meter/registry entry, the hub emulator's in app/emuhub,
// replay's in workload/replay, and so on. A command declares the flags of
// the declarations it takes (declare) and hands the packages a Getter
// (get) that resolves each: the flag if given, else its config key (file
// or IDLEWATT_* env), else the flag's default.

import (
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/meter/registry"
)

// annKey is the flag annotation that holds its config key.
const annKey = settings.AnnKey

// declare adds the declared flags to fs, each with its config key.
func declare(fs *pflag.FlagSet, flags ...settings.Flag) { settings.Declare(fs, flags...) }

// getter is a command's settings.Getter.
type getter struct{ cmd *cobra.Command }

// get returns cmd's Getter.
func get(cmd *cobra.Command) settings.Getter { return getter{cmd} }

// key is the config key of flag ("" = none). The drivers' settings have
// their keys whether the command has their flags or not: measure reads
// meter.mode without a --mode.
func (g getter) key(flag string) string {
	if f := g.cmd.Flags().Lookup(flag); f != nil {
		if k := f.Annotations[annKey]; len(k) == 1 {
			return k[0]
		}
		return ""
	}
	for _, d := range registry.Flags() {
		if d.Name == flag {
			return d.Key
		}
	}
	return ""
}

// String is the flag if the user set it, else the config key (file or
// IDLEWATT_<KEY> env), else the flag's default.
func (g getter) String(flag string) string {
	f := g.cmd.Flags().Lookup(flag)
	if f != nil && f.Changed {
		return f.Value.String()
	}
	if cfg, key := cliOf(g.cmd).cfg, g.key(flag); key != "" && cfg.IsSet(key) {
		return cfg.GetString(key)
	}
	if f != nil {
		return f.Value.String()
	}
	return ""
}

// Bool reads a boolean strictly: loadConfig has already refused a key or
// IDLEWATT_* value that strconv.ParseBool does not take, and pflag parses
// the flag.
func (g getter) Bool(flag string) bool {
	b, _ := strconv.ParseBool(strings.TrimSpace(g.String(flag)))
	return b
}

func (g getter) Int(flag string) (int, error) {
	s := g.String(flag)
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, usageErr("%s: %q is not an integer", g.Where(flag), s)
	}
	return n, nil
}

func (g getter) Float(flag string) (float64, error) {
	s := g.String(flag)
	x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, usageErr("%s: %q is not a number", g.Where(flag), s)
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, usageErr("%s: %q is not a finite number", g.Where(flag), s)
	}
	return x, nil
}

// Duration reads a duration in the one grammar (settings.ParseDuration),
// negative only where the flag is a signed one; a flag of pflag's own
// duration (settings.GoDuration) as pflag parsed it.
func (g getter) Duration(flag string) (time.Duration, error) {
	f := g.cmd.Flags().Lookup(flag)
	if f != nil {
		if _, ours := f.Value.(settings.DurationValue); !ours && f.Value.Type() == "duration" {
			return g.cmd.Flags().GetDuration(flag)
		}
	}
	s := g.String(flag)
	d, err := settings.ParseDuration(s)
	if err != nil {
		return 0, usageErr("%s: %v", g.Where(flag), err)
	}
	if d < 0 {
		if dv, ok := flagValue(f).(settings.DurationValue); !ok || !dv.Signed {
			return 0, usageErr("%s: %s is negative", g.Where(flag), s)
		}
	}
	return d, nil
}

// flagValue is f's value (nil without the flag).
func flagValue(f *pflag.Flag) pflag.Value {
	if f == nil {
		return nil
	}
	return f.Value
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

// Set reports whether the flag was given or its key set.
func (g getter) Set(flag string) bool {
	return g.Changed(flag) || (g.key(flag) != "" && cliOf(g.cmd).cfg.IsSet(g.key(flag)))
}

func (g getter) Has(flag string) bool { return g.cmd.Flags().Lookup(flag) != nil }

func (g getter) Changed(flag string) bool {
	f := g.cmd.Flags().Lookup(flag)
	return f != nil && f.Changed
}

// Where names the source of a setting for error messages.
func (g getter) Where(flag string) string {
	if g.Changed(flag) {
		return "--" + flag
	}
	if key := g.key(flag); key != "" {
		if _, ok := os.LookupEnv(settings.EnvName(key)); ok {
			return settings.EnvName(key) + " (" + key + ")"
		}
		if cliOf(g.cmd).cfg.IsSet(key) {
			return "config key " + key
		}
	}
	return "--" + flag
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
				return registry.WriteList(cmd.OutOrStdout(), get(cmd).Bool("json"))
			},
		}
		c.Flags().Bool("json", false, "print JSON")
		return c
	})
}
