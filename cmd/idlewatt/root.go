package main

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// errCobraUsage marks flag/argument errors from cobra (exit 2).
var errCobraUsage = errors.New("usage")

// commands registered by the files of this package (one file per command
// group); see register.
var commands []func() *cobra.Command

// register adds a top-level command constructor. Each command file calls it
// from init.
func register(f func() *cobra.Command) { commands = append(commands, f) }

// cfg is the merged configuration: config file, IDLEWATT_* environment, flags.
// It is the only viper instance; nothing outside cmd imports viper.
var cfg = viper.New()

func newRootCmd() *cobra.Command {
	preRunDone = false
	root := &cobra.Command{
		Use:           "idlewatt",
		Short:         "Measure the power storage drives draw and prove they reach their idle states",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			preRunDone = true
			return loadConfig(cmd)
		},
	}
	root.PersistentFlags().String("config", "", "YAML config file (env IDLEWATT_CONFIG)")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &codedError{code: exitUsage, err: fmt.Errorf("%s: %s", cmd.CommandPath(), plainFlagError(err.Error()))}
	})
	for _, f := range commands {
		c := f()
		wrapArgs(c)
		root.AddCommand(c)
	}
	return root
}

// strconvMsg is what pflag passes on from strconv for a malformed number.
var strconvMsg = regexp.MustCompile(`strconv\.Parse(Int|Uint|Float|Bool): parsing "[^"]*": (invalid syntax|value out of range)`)

// plainFlagError says "not an integer" where pflag says "strconv.ParseInt:
// parsing "x": invalid syntax".
func plainFlagError(msg string) string {
	return strconvMsg.ReplaceAllStringFunc(msg, func(m string) string {
		sub := strconvMsg.FindStringSubmatch(m)
		if sub[2] == "value out of range" {
			return "out of range"
		}
		return map[string]string{"Int": "not an integer", "Uint": "not a whole number ≥ 0", "Float": "not a number",
			"Bool": "not a boolean (true or false)"}[sub[1]]
	})
}

// wrapArgs makes cobra's positional-argument errors exit 2, recursively.
func wrapArgs(c *cobra.Command) {
	if a := c.Args; a != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := a(cmd, args); err != nil {
				return &codedError{code: exitUsage, err: fmt.Errorf("%s: %w", cmd.CommandPath(), err)}
			}
			return nil
		}
	}
	for _, s := range c.Commands() {
		wrapArgs(s)
	}
}

func loadConfig(cmd *cobra.Command) error {
	cfg.SetEnvPrefix("IDLEWATT")
	cfg.SetEnvKeyReplacer(strings.NewReplacer(".", "_", "-", "_"))
	cfg.AutomaticEnv()
	path, _ := cmd.Flags().GetString("config")
	if path == "" {
		path = os.Getenv("IDLEWATT_CONFIG")
	}
	if path != "" {
		cfg.SetConfigFile(path)
		cfg.SetConfigType("yaml")
		data, err := readInput(cmd.Context(), path, maxConfigBytes)
		if err != nil {
			return usageErr("config %s: %w", path, err)
		}
		if err := cfg.ReadConfig(bytes.NewReader(data)); err != nil {
			return usageErr("config %s: %v", path, err)
		}
		if err := checkConfigFile(path); err != nil {
			return err
		}
	}
	return checkEnv()
}

// The opt* helpers resolve one setting: the flag if the user set it, else
// the config key (file or IDLEWATT_<KEY> env), else the flag's default. key
// is a dotted config key such as "meter.port"; env is IDLEWATT_METER_PORT.

func optString(cmd *cobra.Command, flag, key string) string {
	if f := cmd.Flags().Lookup(flag); f != nil && f.Changed {
		return f.Value.String()
	}
	if key != "" && cfg.IsSet(key) {
		return cfg.GetString(key)
	}
	if f := cmd.Flags().Lookup(flag); f != nil {
		return f.Value.String()
	}
	return ""
}

func optInt(cmd *cobra.Command, flag, key string) (int, error) {
	s := optString(cmd, flag, key)
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, usageErr("%s: %q is not an integer", where(cmd, flag, key), s)
	}
	return n, nil
}

func optFloat(cmd *cobra.Command, flag, key string) (float64, error) {
	s := optString(cmd, flag, key)
	x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, usageErr("%s: %q is not a number", where(cmd, flag, key), s)
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, usageErr("%s: %q is not a finite number", where(cmd, flag, key), s)
	}
	return x, nil
}

// optDuration reads a duration in the one grammar (durations.go); it is
// negative only where the flag is a signedDurationFlag.
func optDuration(cmd *cobra.Command, flag, key string) (time.Duration, error) {
	s := optString(cmd, flag, key)
	d, err := parseDuration(s)
	if err != nil {
		return 0, usageErr("%s: %v", where(cmd, flag, key), err)
	}
	if d < 0 {
		if f := cmd.Flags().Lookup(flag); f == nil || !isSigned(f.Value) {
			return 0, usageErr("%s: %s is negative", where(cmd, flag, key), s)
		}
	}
	return d, nil
}

func isSigned(v pflag.Value) bool {
	dv, ok := v.(durationValue)
	return ok && dv.signed
}

// optSet reports whether the flag was given or its key set.
func optSet(cmd *cobra.Command, flag, key string) bool {
	if f := cmd.Flags().Lookup(flag); f != nil && f.Changed {
		return true
	}
	return key != "" && cfg.IsSet(key)
}

// optBool reads a boolean strictly: loadConfig has already refused a key
// or IDLEWATT_* value that strconv.ParseBool does not take, and pflag
// parses the flag.
func optBool(cmd *cobra.Command, flag, key string) bool {
	b, _ := strconv.ParseBool(strings.TrimSpace(optString(cmd, flag, key)))
	return b
}

// where names the source of a setting for error messages.
func where(cmd *cobra.Command, flag, key string) string {
	if f := cmd.Flags().Lookup(flag); f != nil && f.Changed {
		return "--" + flag
	}
	if key != "" {
		if _, ok := os.LookupEnv(envName(key)); ok {
			return envName(key) + " (" + key + ")"
		}
		if cfg.IsSet(key) {
			return "config key " + key
		}
	}
	return "--" + flag
}
