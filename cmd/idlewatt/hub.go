package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/app/config"
	"github.com/idlewatt/idlewatt/app/emuhub"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
	"github.com/idlewatt/idlewatt/meter/registry"
	"github.com/idlewatt/idlewatt/report"
	"github.com/idlewatt/idlewatt/states/drivesim"
)

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{
			Use:   "hub",
			Short: "Talk to, or emulate, the SATA power hub (docs/hub-protocol.md)",
		}
		c.AddCommand(newHubEmulateCmd(), newHubInfoCmd())
		return c
	})
}

func newHubEmulateCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "emulate",
		Short: "Serve the hub protocol on a pseudo-terminal; prints its path first",
		Long: `Serve the hub protocol on a new pseudo-terminal. The first line of stdout is
the pty path to pass as --port; the emulator serves until SIGINT/SIGTERM.
With --fast --duration D --out FILE it instead writes the exact byte stream it
would have sent over D of streaming (every port, at --rate) to FILE, unpaced.`,
		Args: cobra.NoArgs,
		RunE: runHubEmulate,
		// serves until SIGINT; --fast checks the context itself
		Annotations: map[string]string{annSignalEnds: "true"},
	}
	declare(c.Flags(), emuhub.Flags...)
	return c
}

func runHubEmulate(cmd *cobra.Command, _ []string) error {
	fast := get(cmd).Bool("fast")
	out := get(cmd).String("out")
	oo := outOptions(cmd)
	if fast && out != "" {
		if err := outfile.Check(out, oo); err != nil { // before the truth files are made
			return usageErr("hub emulate: --out %w", err)
		}
	}
	o, truth, err := emuhub.Read(get(cmd), emuhub.ReadOptions{Out: outOptions(cmd),
		Profiles: func() (map[string]drivesim.Profile, error) { return config.Profiles(cliOf(cmd).cfg) }})
	if err != nil {
		return err
	}
	if fast {
		err = emuhub.WriteFast(cmd.Context(), get(cmd), o, out, oo)
	} else {
		err = serveHub(cmd, o, oo)
	}
	if err != nil {
		return err
	}
	return truth.Finish()
}

// serveHub serves the emulated hub of o on a pty until a signal.
func serveHub(cmd *cobra.Command, o hubemu.Options, oo outfile.Options) error {
	if err := emuhub.CheckSymlink(o.Symlink, oo.Overwrite); err != nil {
		return err
	}
	e, err := hubemu.New(o)
	if err != nil {
		return usageErr("hub emulate: %v", err)
	}
	defer e.Close()
	return serveUntilDone(cmd, e.Path())
}

func newHubInfoCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "info",
		Short: "Print a hub's identity and calibration",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, timeout, err := report.HubPort(get(cmd))
			if err != nil {
				return err
			}
			// hub.Open waits up to --timeout for an answer; a signal
			// stops the wait (the open finishes, and is closed, behind).
			h, err := openCtx(cmd, path, func() (*hub.Hub, error) { return hub.Open(path, hub.Options{Timeout: timeout}) })
			if err != nil {
				if cmd.Context().Err() != nil {
					return err
				}
				return registry.DeviceError(fmt.Errorf("--port %s: %w", path, err))
			}
			defer h.Close()
			return report.WriteHubInfo(cmd.OutOrStdout(), h, get(cmd).Bool("json"))
		},
	}
	declare(c.Flags(), report.HubInfoFlags...)
	return c
}
