package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/app/emuhub"
	"github.com/idlewatt/idlewatt/internal/ctxio"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/textsafe"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
	"github.com/idlewatt/idlewatt/states/nvme"
	nvmesim "github.com/idlewatt/idlewatt/states/nvme/sim"
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
	f := c.Flags()
	f.Int("ports", 2, "drive ports (1–8), each with a 5 V and a 12 V rail")
	f.Float64("rate", float64(hub.DefaultRate), "sample rate for --fast, Hz")
	f.Int64("seed", 1, "seed for faults and calibration trims")
	f.String("link", "usb", "link to emulate for bandwidth checks: usb (1 MB/s) or uart (921600 baud)")
	f.Float64("corrupt-rate", 0, "probability per byte sent of corruption")
	f.Float64("drop-rate", 0, "probability per byte sent of being dropped")
	f.Float64("truncate-rate", 0, "probability per frame of being cut short")
	durationFlag(f, "stall-every", 0, "stall the output every D …")
	durationFlag(f, "stall-for", 0, "… for this long (samples buffered, then overrun)")
	durationFlag(f, "disconnect-every", 0, "drop the link every D …")
	durationFlag(f, "disconnect-for", 0, "… for this long (nothing sent or answered; the sample index keeps counting)")
	f.Bool("reenumerate", false, "make disconnects real: close the pty and remove the path, then reappear at the same path")
	f.String("symlink", "", "keep the pty's path as a symlink here (default: a new temporary directory)")
	f.String("accuracy", "", "GAIN_PCT,OFFSET_UA: the accuracy the hub states of every channel (READ_ACCURACY), e.g. 0.1,10 for ±0.1 % and ±10 µA (default: it states none)")
	f.Int("buffer", 0, "hub output buffer in bytes (default 1 MiB); blocks that do not fit are lost with an OVERRUN")
	f.Int("protocol", 2, "hub protocol version to speak: 2 (LINK, split frames, RESEND ring, 20-bit samples), 3 (2 with a 3.3 V rail; the default with --rail-3v3 or --nvme) or 1")
	f.Bool("rail-3v3", false, "give every port a 3.3 V rail (an M.2 interposer's supply; protocol 3, at most 5 ports)")
	f.String("nvme", "", "simulated NVMe drives on M.2 interposers: PORT=PROFILE[,PORT=PROFILE…] (980pro-1tb, 660p-1tb); implies --rail-3v3")
	f.String("nvme-latency-us", "100000", "latency tolerance the simulated NVMe drives' APST tables are planned for (µs, auto or any)")
	f.Int("ring", 1<<20, "protocol 2: ring buffer of recent samples RESEND reads from, bytes (0 = none)")
	f.Int("max-frame", 4096, "protocol 2: largest frame the hub sends or takes, bytes (64–4096)")
	f.Float64("drift-ppm", 0, "emulator clock drift against the host, ppm")
	signedDurationFlag(f, "offset", 0, "emulator clock offset against the host")
	f.Bool("fast", false, "write the byte stream unpaced to --out and exit")
	durationFlag(f, "duration", 10*time.Second, "streaming time for --fast")
	f.String("out", "", "output file for --fast")
	addOverwriteFlag(f, "the --out file, truth files and an old --symlink link")
	addProfileFlags(c) // the simulated drives behind the ports (profiles.go)
	return c
}

func hubEmulatorOptions(cmd *cobra.Command) (hubemu.Options, error) {
	var o hubemu.Options
	var err error
	geti := func(flag, key string, dst *int) {
		if err == nil {
			*dst, err = optInt(cmd, flag, key)
		}
	}
	getf := func(flag, key string, dst *float64) {
		if err == nil {
			*dst, err = optFloat(cmd, flag, key)
		}
	}
	getd := func(flag, key string, dst *time.Duration) {
		if err == nil {
			*dst, err = optDuration(cmd, flag, key)
		}
	}
	var rate float64
	var seed int
	geti("ports", "emulate.ports", &o.Ports)
	getf("rate", "emulate.rate", &rate)
	geti("seed", "emulate.seed", &seed)
	getf("corrupt-rate", "emulate.corrupt_rate", &o.Faults.CorruptRate)
	getf("drop-rate", "emulate.drop_rate", &o.Faults.DropRate)
	getf("truncate-rate", "emulate.truncate_rate", &o.Faults.TruncateRate)
	getd("stall-every", "emulate.stall_every", &o.Faults.StallEvery)
	getd("stall-for", "emulate.stall_for", &o.Faults.StallFor)
	getd("disconnect-every", "emulate.disconnect_every", &o.Faults.DisconnectEvery)
	getd("disconnect-for", "emulate.disconnect_for", &o.Faults.DisconnectFor)
	geti("buffer", "emulate.buffer_bytes", &o.BufferBytes)
	geti("protocol", "emulate.protocol", &o.Protocol)
	geti("ring", "emulate.ring_bytes", &o.RingBytes)
	geti("max-frame", "emulate.max_frame", &o.MaxFrame)
	getf("drift-ppm", "emulate.drift_ppm", &o.DriftPPM)
	getd("offset", "emulate.offset", &o.ClockOffset)
	if err != nil {
		return o, err
	}
	o.Rate, o.Seed = units.Hertz(rate), int64(seed)
	o.Faults.Reenumerate = optBool(cmd, "reenumerate", "emulate.reenumerate")
	o.Symlink = optString(cmd, "symlink", "emulate.symlink")
	if spec := optString(cmd, "accuracy", "emulate.accuracy"); spec != "" {
		if o.Accuracy, err = parseAccuracy(spec, o.Ports, o.Rail3V3 || optBool(cmd, "rail-3v3", "emulate.rail_3v3") || optString(cmd, "nvme", "emulate.nvme") != ""); err != nil {
			return o, usageErr("%s: %v", where(cmd, "accuracy", "emulate.accuracy"), err)
		}
	}
	if o.BufferBytes < 0 {
		return o, usageErr("%s: %d bytes is negative", where(cmd, "buffer", "emulate.buffer_bytes"), o.BufferBytes)
	}
	nvmeSpec := optString(cmd, "nvme", "emulate.nvme")
	o.Rail3V3 = optBool(cmd, "rail-3v3", "emulate.rail_3v3") || strings.TrimSpace(nvmeSpec) != ""
	if o.Rail3V3 && !cmd.Flags().Changed("protocol") {
		o.Protocol = 3
	}
	if o.Protocol < 1 || o.Protocol > 3 {
		return o, usageErr("%s: %d (1, 2 or 3)", where(cmd, "protocol", "emulate.protocol"), o.Protocol)
	}
	if o.Rail3V3 && (o.Protocol != 3 || o.Ports > 5) {
		return o, usageErr("--rail-3v3/--nvme: a 3.3 V rail needs --protocol 3 and at most 5 ports (have %d, %d ports)", o.Protocol, o.Ports)
	}
	if o.Protocol == 1 { // a version 1 hub has neither: the setting would do nothing
		for _, k := range [][2]string{{"ring", "emulate.ring_bytes"}, {"max-frame", "emulate.max_frame"}} {
			if f := cmd.Flags().Lookup(k[0]); (f != nil && f.Changed) || cliOf(cmd).cfg.IsSet(k[1]) {
				return o, usageErr("%s: a protocol 2 and 3 setting; %s is 1 (no RESEND ring, no LINK frame size)", where(cmd, k[0], k[1]), where(cmd, "protocol", "emulate.protocol"))
			}
		}
	}
	switch {
	case o.RingBytes < 0:
		return o, usageErr("%s: %d bytes is negative", where(cmd, "ring", "emulate.ring_bytes"), o.RingBytes)
	case o.RingBytes == 0:
		o.RingBytes = -1 // no ring: IDENTITY says 0, RESEND is refused
	}
	if o.MaxFrame < hub.MinMaxFrame || o.MaxFrame > hub.MaxFrame {
		return o, usageErr("%s: %d bytes (%d–%d)", where(cmd, "max-frame", "emulate.max_frame"), o.MaxFrame, hub.MinMaxFrame, hub.MaxFrame)
	}
	if o.DriftPPM < -1e5 || o.DriftPPM > 1e5 {
		return o, usageErr("%s: %g ppm is not a plausible clock drift (±100000 at most)", where(cmd, "drift-ppm", "emulate.drift_ppm"), o.DriftPPM)
	}
	if o.Ports < 1 || o.Ports > 8 {
		return o, usageErr("%s: %d ports (1–8 allowed)", where(cmd, "ports", "emulate.ports"), o.Ports)
	}
	switch link := optString(cmd, "link", "emulate.link"); link {
	case "usb":
		o.Link = hub.LinkUSBCDC
	case "uart":
		o.Link = hub.LinkUART921600
	default:
		return o, usageErr("%s: %q (want usb or uart)", where(cmd, "link", "emulate.link"), link)
	}
	if (o.Faults.StallEvery > 0) != (o.Faults.StallFor > 0) {
		return o, usageErr("--stall-every and --stall-for go together")
	}
	if (o.Faults.DisconnectEvery > 0) != (o.Faults.DisconnectFor > 0) {
		return o, usageErr("--disconnect-every and --disconnect-for go together")
	}
	ports, err := hubPortDrives(cmd, o.Ports, nvmeSpec, int64(seed))
	if err != nil {
		return o, err
	}
	return emuhub.Options(o, ports), nil
}

// hubPortDrives is the simulated drive behind each port: --profile's
// (profiles.go), or without it hubemu's constant 5 V 80 mA / 12 V 0 mA
// drive, and --nvme's NVMe drives on the ports it names.
func hubPortDrives(cmd *cobra.Command, n int, nvmeSpec string, seed int64) ([]meter.SimDrive, error) {
	d, err := hubProfileDrives(cmd, n)
	if err != nil {
		return nil, err
	}
	ports := make([]meter.SimDrive, n)
	for i := range ports {
		ports[i] = hubemu.DefaultDrive
		if d != nil {
			ports[i] = d[i]
		}
	}
	if err := hubNVMeDrives(cmd, ports, nvmeSpec, seed); err != nil {
		return nil, err
	}
	return ports, nil
}

// hubNVMeDrives puts the simulated NVMe drives of --nvme behind their
// ports (states/nvme/sim.HubDrive on the 3.3 V rail); the other ports keep
// what --profile gave them.
func hubNVMeDrives(cmd *cobra.Command, ports []meter.SimDrive, spec string, seed int64) error {
	if strings.TrimSpace(spec) == "" {
		return nil
	}
	if optString(cmd, "truth-dir", "emulate.truth_dir") != "" {
		// A --profile drive the NVMe drive replaced would still write its
		// truth file, for a drive no port renders.
		return usageErr("%s with %s: the simulated NVMe drives write no truth file; drop one", where(cmd, "nvme", "emulate.nvme"), where(cmd, "truth-dir", "emulate.truth_dir"))
	}
	tol, err := nvme.ParseTolerance(optString(cmd, "nvme-latency-us", "emulate.nvme_latency_us"))
	if err != nil {
		return usageErr("%s: %v", where(cmd, "nvme-latency-us", "emulate.nvme_latency_us"), err)
	}
	seen := map[int]bool{}
	for _, item := range strings.Split(spec, ",") {
		ps, name, ok := strings.Cut(strings.TrimSpace(item), "=")
		port, perr := strconv.Atoi(ps)
		if !ok || perr != nil || port < 1 || port > len(ports) || seen[port] {
			return usageErr("%s: %q: want PORT=PROFILE with a port 1–%d, each once", where(cmd, "nvme", "emulate.nvme"), item, len(ports))
		}
		p, ok := nvmesim.ProfileByName(name)
		if !ok {
			var names []string
			for _, q := range nvmesim.Profiles() {
				names = append(names, q.Name)
			}
			return usageErr("%s: no simulated NVMe profile %q (have %s)", where(cmd, "nvme", "emulate.nvme"), name, strings.Join(names, ", "))
		}
		seen[port] = true
		ports[port-1] = emuhub.NVMeDrive(p, tol.Us, uint64(seed)+uint64(port))
	}
	return nil
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
	o, err := hubEmulatorOptions(cmd)
	if err != nil {
		return err
	}
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

// parseAccuracy reads --accuracy GAIN_PCT,OFFSET_UA into the READ_ACCURACY
// entries of every channel of ports hub ports (a 3.3 V rail with rail3v3).
func parseAccuracy(spec string, ports int, rail3v3 bool) ([]hub.AccEntry, error) {
	g, o, ok := strings.Cut(spec, ",")
	gain, err1 := strconv.ParseFloat(strings.TrimSpace(g), 64)
	off, err2 := strconv.ParseFloat(strings.TrimSpace(o), 64)
	switch {
	case !ok || err1 != nil || err2 != nil:
		return nil, fmt.Errorf("%q: want GAIN_PCT,OFFSET_UA (e.g. 0.1,10)", spec)
	case !(gain >= 0 && gain <= 5):
		return nil, fmt.Errorf("gain %g %%: 0–5 %%", gain)
	case !(off >= 0 && off <= 1e6):
		return nil, fmt.Errorf("offset %g µA: 0–1 000 000 µA", off)
	}
	rails := []meter.Rail{meter.Rail5V, meter.Rail12V}
	if rail3v3 {
		rails = append(rails, meter.Rail3V3)
	}
	var out []hub.AccEntry
	for p := 1; p <= ports; p++ {
		for _, r := range rails {
			ppm := uint16(math.Round(gain * 1e4))
			out = append(out, hub.AccEntry{Port: uint8(p), Rail: r, VoltGainPPM: ppm, CurrentGainPPM: ppm, CurrentOffsetNA: uint32(math.Round(off * 1e3))})
		}
	}
	return out, nil
}
