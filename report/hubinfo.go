package report

// `idlewatt hub info`: a live hub's identity, calibration and stated
// accuracy, as text or JSON.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/internal/textsafe"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/units"
)

// HubInfoFlags are `hub info`'s settings.
var HubInfoFlags = []settings.Flag{
	{Name: "port", Key: "meter.port", Kind: settings.String, Help: "serial port or pty of the hub"},
	{Name: "json", Kind: settings.Bool, Help: "print JSON"},
	{Name: "timeout", Key: "meter.timeout", Kind: settings.Duration, Default: 2 * time.Second, Help: "how long to wait for the hub to answer"},
}

// HubPort reads and checks hub info's port (a live hub: a regular file, a
// recorded stream, has no one to answer IDENTIFY) and how long to wait.
func HubPort(g settings.Getter) (string, time.Duration, error) {
	path := g.String("port")
	if path == "" {
		return "", 0, settings.Usagef("--port is required")
	}
	timeout, err := g.Duration("timeout")
	if err != nil {
		return "", 0, err
	}
	if fi, err := os.Stat(path); err != nil {
		return "", 0, settings.Usagef("--port %s: %v", path, err)
	} else if fi.IsDir() {
		return "", 0, settings.Usagef("--port %s is a directory, not a serial port or pty", path)
	} else if fi.Mode().IsRegular() {
		// It waited --timeout, then exit 1 "not a terminal".
		return "", 0, settings.Usagef("--port %s is a regular file (a recorded stream); hub info asks a live hub (record --port reads a stream)", path)
	}
	return path, timeout, nil
}

// WriteHubInfo writes h's identity as text or JSON.
func WriteHubInfo(w io.Writer, h *hub.Hub, asJSON bool) error {
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
