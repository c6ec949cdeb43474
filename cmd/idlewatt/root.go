package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/idlewatt/idlewatt/app/config"
	"github.com/idlewatt/idlewatt/internal/ctxio"
	"github.com/idlewatt/idlewatt/internal/settings"
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
		return &codedError{code: exitUsage, err: fmt.Errorf("%s: %s%s", cmd.CommandPath(), settings.PlainFlagError(err.Error()), flagSuggestion(cmd, err.Error()))}
	})
	for _, f := range commands {
		sub := f()
		wrapArgs(sub)
		root.AddCommand(sub)
	}
	return root
}

// flagSuggestion is " (did you mean --overwrite?)" for a mistyped flag
// close to one cmd has (its own, inherited and global).
func flagSuggestion(cmd *cobra.Command, msg string) string {
	var names []string
	add := func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	}
	cmd.Flags().VisitAll(add)
	cmd.InheritedFlags().VisitAll(add)
	return settings.FlagSuggestion(msg, names)
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

// maxConfigBytes bounds a config file (a YAML file of drives and profiles
// is a few KiB; a bigger one is a mistake, such as a capture passed as
// --config).
const maxConfigBytes = 16 << 20
