package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/app/config"
	"github.com/idlewatt/idlewatt/app/emuhub"
	"github.com/idlewatt/idlewatt/internal/ctxio"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/textsafe"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
	"github.com/idlewatt/idlewatt/states/drivesim"
	"github.com/idlewatt/idlewatt/units"
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
	fast := optBool(cmd, "fast", "emulate.fast")
	out := optString(cmd, "out", "emulate.out")
	oo := outOptions(cmd, "")
	if fast && out != "" {
		if err := outfile.Check(out, oo); err != nil { // before the truth files are made
			return usageErr("hub emulate: --out %w", err)
		}
	}
	o, truth, err := emuhub.Read(get(cmd), emuhub.ReadOptions{Out: outOptions(cmd, ""),
		Profiles: func() (map[string]drivesim.Profile, error) { return config.Profiles(cliOf(cmd).cfg) }})
	if err != nil {
		return err
	}
	if err := serveHub(cmd, o, fast, out, oo); err != nil {
		return err
	}
	return truth.Finish()
}

// serveHub serves the emulated hub of o on a pty until a signal, or with
// fast writes its byte stream to out.
func serveHub(cmd *cobra.Command, o hubemu.Options, fast bool, out string, oo outfile.Options) error {
	if fast {
		d, err := optDuration(cmd, "duration", "emulate.duration")
		if err != nil {
			return err
		}
		if out == "" {
			return usageErr("--fast needs --out FILE")
		}
		f, err := outfile.Create(out, oo)
		if err != nil {
			return usageErr("hub emulate: --out %w", err)
		}
		defer f.Abort() // no-op after Commit
		if err := hubemu.WriteFast(ctxio.Writer{Ctx: cmd.Context(), W: f}, o, d); err != nil {
			return usageErr("hub emulate --fast: %w", err)
		}
		if err := f.Commit(); err != nil {
			return failErr("hub emulate --fast: %w", err)
		}
		return nil
	}
	if o.Symlink != "" {
		// The pty link is the emulator's output: a file there is never
		// replaced, an old link only with --overwrite.
		if fi, err := os.Lstat(o.Symlink); err == nil {
			if fi.Mode()&os.ModeSymlink == 0 {
				return usageErr("hub emulate: --symlink %s exists and is not a symbolic link; refusing to replace it", o.Symlink)
			}
			if !oo.Overwrite {
				return usageErr("hub emulate: --symlink %s exists (a link left by another emulator?); refusing to replace it (use --overwrite to replace the link)", o.Symlink)
			}
		}
	}
	e, err := hubemu.New(o)
	if err != nil {
		return usageErr("hub emulate: %v", err)
	}
	defer e.Close()
	fmt.Fprintln(cmd.OutOrStdout(), e.Path())
	if f, ok := cmd.OutOrStdout().(*os.File); ok {
		f.Sync() //nolint:errcheck // a pipe cannot sync; the line is written either way
	}
	<-cmd.Context().Done()
	return nil
}

func newHubInfoCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "info",
		Short: "Print a hub's identity and calibration",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path := optString(cmd, "port", "meter.port")
			if path == "" {
				return usageErr("--port is required")
			}
			timeout, err := optDuration(cmd, "timeout", "meter.timeout")
			if err != nil {
				return err
			}
			if fi, err := os.Stat(path); err != nil {
				return usageErr("--port %s: %v", path, err)
			} else if fi.IsDir() {
				return usageErr("--port %s is a directory, not a serial port or pty", path)
			} else if fi.Mode().IsRegular() {
				// A recorded stream has no one to answer IDENTIFY (it
				// waited --timeout, then exit 1 "not a terminal").
				return usageErr("--port %s is a regular file (a recorded stream); hub info asks a live hub (record --port reads a stream)", path)
			}
			// hub.Open waits up to --timeout for an answer; a signal
			// stops the wait (the open finishes, and is closed, behind).
			type opened struct {
				h   *hub.Hub
				err error
			}
			ch := make(chan opened, 1)
			goSafe(cmd.ErrOrStderr(), func() {
				h, err := hub.Open(path, hub.Options{Timeout: timeout})
				ch <- opened{h, err}
			})
			var o opened
			select {
			case o = <-ch:
			case <-cmd.Context().Done():
				goSafe(cmd.ErrOrStderr(), func() {
					if o := <-ch; o.h != nil {
						o.h.Close()
					}
				})
				return fmt.Errorf("--port %s: %w", path, context.Cause(cmd.Context()))
			}
			h, err := o.h, o.err
			if err != nil {
				return meterOpenErr(fmt.Errorf("--port %s: %w", path, err))
			}
			defer h.Close()
			return printHubInfo(cmd.OutOrStdout(), h, optBool(cmd, "json", ""))
		},
	}
	c.Flags().String("port", "", "serial port or pty of the hub")
	c.Flags().Bool("json", false, "print JSON")
	durationFlag(c.Flags(), "timeout", 2*time.Second, "how long to wait for the hub to answer")
	return c
}

func printHubInfo(w io.Writer, h *hub.Hub, asJSON bool) error {
	info, id := h.Info(), h.Identity()
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			meter.Info
			LinkBytesPerS uint32 `json:"link_bytes_per_s"`
		}{info, id.LinkBytesSec})
	}
	fmt.Fprintf(w, "model:     %s\nfirmware:  %s\nserial:    %s\nprotocol:  %d\nports:     %d\n",
		textsafe.Terminal(info.Model), textsafe.Terminal(info.Firmware), textsafe.Terminal(info.Serial), info.ProtocolVersion, info.Ports)
	fmt.Fprintf(w, "rates:     ")
	for i, r := range info.Rates {
		if i > 0 {
			fmt.Fprint(w, ", ")
		}
		fmt.Fprint(w, r)
	}
	f := h.SampleFormat()
	fmt.Fprintf(w, "\nlink:      %d B/s\ncaps:      %v\nsamples:   %s (full scale %d counts)\nchannels:\n",
		id.LinkBytesSec, info.Capabilities, hub.FormatName(f), hub.FormatFullScale(f))
	for _, c := range info.Channels {
		// The LSBs are the agreed format's; so is its full scale (a 20-bit
		// hub's is 2¹⁹ − 1 counts of its 20-bit LSB, not 32767).
		fmt.Fprintf(w, "  %-7s  volt LSB %s  current LSB %s  full scale %s", c.Name(), c.VoltLSB, c.CurrentLSB,
			c.CurrentLSB*units.Amps(hub.FormatFullScale(f)))
		if c.VoltGainErr != 0 || c.CurrentGainErr != 0 || c.CurrentOffset != 0 {
			fmt.Fprintf(w, "  accuracy: volt ±%g %%, current ±%g %% ± %s", 100*c.VoltGainErr, 100*c.CurrentGainErr, c.CurrentOffset)
		}
		fmt.Fprintln(w)
	}
	if h.Accuracy() == nil {
		fmt.Fprintln(w, "accuracy:  not stated (READ_ACCURACY: unknown command) — intervals will not hold the meter's calibration")
	}
	return nil
}
