package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/idlewatt/idlewatt/app/config"
	"github.com/idlewatt/idlewatt/internal/ctxio"
	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/internal/suggest"
	"github.com/idlewatt/idlewatt/internal/textsafe"
)

// version is set at build time with -ldflags "-X main.version=..."; otherwise
// version.go fills it from the build info (module version, VCS revision).
var version = "dev"

// errCobraUsage marks flag/argument errors from cobra (exit 2).
var errCobraUsage = errors.New("usage")

// commands registered by the files of this package (one file per command
// group); see register.
var commands []func() *cobra.Command

// register adds a top-level command constructor. Each command file calls it
// from init.
func register(f func() *cobra.Command) { commands = append(commands, f) }

// cli is one command line being run: its merged configuration (config
// file, IDLEWATT_* environment; flags are read from the command itself),
// its output streams, and how far cobra got. newCLI builds one per command
// line; execute hands it to the command through the command's context
// (cliOf), so two command lines can run in one process at once. Nothing
// outside cmd imports viper.
type cli struct {
	cfg            *viper.Viper
	stdout, stderr io.Writer
	// preRunDone is set when cobra has parsed the flags and arguments and
	// the command is about to run; an error before that is cobra's (unknown
	// command or flag, bad flag value, wrong arguments): bad usage.
	preRunDone bool
	// placed is set once a command has put its outputs in place: a signal
	// after that is not one that cut the job short (see runMain).
	placed bool
}

// outputsPlaced records that cmd's outputs are all under their names.
func outputsPlaced(cmd *cobra.Command) { cliOf(cmd).placed = true }

func newCLI(stdout, stderr io.Writer) *cli {
	return &cli{cfg: viper.New(), stdout: stdout, stderr: stderr}
}

type cliKey struct{}

// withCLI returns ctx carrying c, for a command's context.
func withCLI(ctx context.Context, c *cli) context.Context { return context.WithValue(ctx, cliKey{}, c) }

// cliOf returns the command line cmd runs in. Every command runs through
// execute, which puts it in the context; a command without one is a bug.
func cliOf(cmd *cobra.Command) *cli {
	if ctx := cmd.Context(); ctx != nil {
		if c, ok := ctx.Value(cliKey{}).(*cli); ok {
			return c
		}
	}
	panic("idlewatt: command " + cmd.CommandPath() + " runs without its cli value")
}

// execute runs args as one command line of c under ctx and returns the
// command cobra ran (nil if it found none) and its error.
func (c *cli) execute(ctx context.Context, args []string) (*cobra.Command, error) {
	root := newRootCmd(c)
	root.SetArgs(args)
	root.SetOut(c.stdout)
	root.SetErr(c.stderr)
	return root.ExecuteContextC(withCLI(ctx, c))
}

// exitCode prints err (if any) to the command line's stderr and returns
// the exit code for it.
func (c *cli) exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	// Messages built from cmd.CommandPath() (flag and argument errors,
	// some commands' own) begin "idlewatt CMD:"; the prefix below already
	// says idlewatt once.
	// Every message can hold a user's string (a file name, a drive name,
	// what a device said): its control characters are shown, not acted on.
	fmt.Fprintln(c.stderr, "idlewatt:", textsafe.Lines(strings.TrimPrefix(err.Error(), "idlewatt ")))
	return classify(err, c.preRunDone)
}

func newRootCmd(c *cli) *cobra.Command {
	c.preRunDone = false
	root := &cobra.Command{
		Use:           "idlewatt",
		Short:         "Measure the power storage drives draw and prove they reach their idle states",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			c.preRunDone = true
			return loadConfig(cmd)
		},
	}
	root.PersistentFlags().String("config", "", "YAML config file (env IDLEWATT_CONFIG)")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return &codedError{code: exitUsage, err: fmt.Errorf("%s: %s%s", cmd.CommandPath(), plainFlagError(err.Error()), flagSuggestion(cmd, err.Error()))}
	})
	for _, f := range commands {
		sub := f()
		wrapArgs(sub)
		root.AddCommand(sub)
	}
	return root
}

// unknownFlag is pflag's message for a flag the command does not have.
var unknownFlag = regexp.MustCompile(`^unknown (?:shorthand )?flag: '?-{1,2}([^' =]+)`)

// flagSuggestion is " (did you mean --overwrite?)" for a mistyped flag
// that is close to one the command has (its own, inherited and global),
// as config keys get; "" otherwise.
func flagSuggestion(cmd *cobra.Command, msg string) string {
	m := unknownFlag.FindStringSubmatch(msg)
	if m == nil || len(m[1]) < 2 {
		return ""
	}
	var names []string
	add := func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	}
	cmd.Flags().VisitAll(add)
	cmd.InheritedFlags().VisitAll(add)
	best := suggest.Nearest(m[1], names, func(best string) int { return max(2, len(best)/3) })
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean --%s?)", best)
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
	cfg := cliOf(cmd).cfg
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
		data, err := ctxio.ReadFile(cmd.Context(), path, maxConfigBytes, "a config file")
		if err != nil {
			return usageErr("config %s: %w", path, err)
		}
		if err := cfg.ReadConfig(bytes.NewReader(data)); err != nil {
			return usageErr("config %s: %v", path, err)
		}
		// The file's own values, without the IDLEWATT_* variables that
		// override them (AutomaticEnv): a bad variable is named as the
		// variable (below), not blamed on the file.
		file := viper.New()
		file.SetConfigType("yaml")
		if err := file.ReadConfig(bytes.NewReader(data)); err != nil {
			return usageErr("config %s: %v", path, err)
		}
		if err := config.CheckFile(file, path); err != nil {
			return err
		}
	}
	return config.CheckEnv(os.Environ(), func(key, env string) error { return cfg.BindEnv(key, env) })
}

// The opt* helpers resolve one setting: the flag if the user set it, else
// the config key (file or IDLEWATT_<KEY> env), else the flag's default. key
// is a dotted config key such as "meter.port"; env is IDLEWATT_METER_PORT.

func optString(cmd *cobra.Command, flag, key string) string {
	if f := cmd.Flags().Lookup(flag); f != nil && f.Changed {
		return f.Value.String()
	}
	if cfg := cliOf(cmd).cfg; key != "" && cfg.IsSet(key) {
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

// optDuration reads a duration in the one grammar (settings.ParseDuration);
// it is negative only where the flag is a signed one.
func optDuration(cmd *cobra.Command, flag, key string) (time.Duration, error) {
	s := optString(cmd, flag, key)
	d, err := settings.ParseDuration(s)
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
	dv, ok := v.(settings.DurationValue)
	return ok && dv.Signed
}

// optSet reports whether the flag was given or its key set.
func optSet(cmd *cobra.Command, flag, key string) bool {
	if f := cmd.Flags().Lookup(flag); f != nil && f.Changed {
		return true
	}
	return key != "" && cliOf(cmd).cfg.IsSet(key)
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
		if _, ok := os.LookupEnv(settings.EnvName(key)); ok {
			return settings.EnvName(key) + " (" + key + ")"
		}
		if cliOf(cmd).cfg.IsSet(key) {
			return "config key " + key
		}
	}
	return "--" + flag
}

// maxConfigBytes bounds a config file (a YAML file of drives and profiles
// is a few KiB; a bigger one is a mistake, such as a capture passed as
// --config).
const maxConfigBytes = 16 << 20
