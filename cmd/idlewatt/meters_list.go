package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/meter/registry"
	"github.com/idlewatt/idlewatt/meter/scpi"
)

// meterDoc says how to connect one meter kind; docs/meters.md has the
// details (wiring, limits, uncertainty).
type meterDoc struct {
	Kind       string   `json:"kind"`
	What       string   `json:"what"`
	Connect    string   `json:"connect"`
	MaxRateHz  float64  `json:"max_rate_hz"`
	Options    []string `json:"options"`
	Record     string   `json:"record"`     // an example record invocation
	Registered bool     `json:"registered"` // usable with record --meter now
}

var meterDocs = []meterDoc{
	{Kind: "hub", What: "inline SATA power hub: 5 V and 12 V per port, DEVSLP pins, port power",
		Connect: "--port /dev/ttyUSB0 (or a pty from `idlewatt hub emulate`, or a recorded stream file)", MaxRateHz: 0,
		Options: []string{"--ports 1,2 (meter.ports)", "--rate (meter.rate_hz): one the hub lists"},
		Record:  "idlewatt record --meter hub --port /dev/ttyUSB0 --duration 10m --out hub.iwcap"},
	{Kind: "ppk2", What: "Nordic Power Profiler Kit II: one channel, 100 kS/s, 200 nA–1 A, 8 logic inputs, DUT power",
		Connect:   "--port /dev/ttyACM0 (USB 1915:c00a, CDC-ACM), a pty from `idlewatt ppk2 emulate [--ma X | --profile NAME]`, or a raw device→host dump file (metadata through END, then sample words)",
		MaxRateHz: 100_000,
		Options: []string{"--mode source|ampere (meter.mode; default source, a dump's own mode)",
			"--supply-mv MV (meter.supply_mv): regulator 800–5000 mV in source mode (default the metadata's VDD); the external supply in ampere mode (required)",
			"--rate (meter.rate_hz): 100 kS/s ÷ N, host-side averaging (default 100000)",
			"--metadata nordic|zero-r-only (meter.metadata): which reference host's reading of missing calibration values",
			"--no-spike-filter (meter.no_spike_filter): keep range-switch samples as measured"},
		Record: "idlewatt record --meter ppk2 --port /dev/ttyACM0 --supply-mv 3300 --rate 10000 --duration 10m --out ppk2.iwcap"},
	{Kind: "battery", What: "the laptop's own battery gauge (whole-laptop draw, discharging only) + optional RAPL CPU package channel",
		Connect: "--port /sys (the default; a sysfs root, a fixture tree in tests)", MaxRateHz: 1,
		Options: []string{"--battery BAT0 (meter.battery; default the first Battery)", "--interval 1s (meter.interval): poll interval, sets the rate",
			"--rapl (meter.rapl): CPU package channel as port 0 (root since Linux 5.10)"},
		Record: "idlewatt record --meter battery --duration 30m --out laptop.iwcap"},
	{Kind: "line", What: "line-streaming meters: INA219/INA226 sketches, LowPowerLab CurrentRanger (alias: linemeter)",
		Connect: "--port /dev/ttyUSB0 (raw 8N1) or a recorded log file", MaxRateHz: 1000,
		Options: []string{"--columns (meter.columns, required): e.g. millis,loadV,current_mA or currentranger",
			"--rate (meter.rate_hz, required): nominal lines per second (a line meter has no sample clock)",
			"--voltage V (meter.voltage_v): when the map has no voltage column", "--baud 115200 (meter.baud)"},
		Record: "idlewatt record --meter line --port /dev/ttyUSB0 --columns millis,loadV,current_mA --rate 500 --duration 10m --out ina.iwcap"},
	{Kind: "scpi", What: "SCPI bench instruments: Keysight N6705, Keithley 2450/2280S, Rigol DP800, Siglent SDM",
		Connect: "--port /dev/ttyUSB0 (serial, \\n-terminated; *IDN? picks the family) or a pty from `idlewatt scpi emulate [--family F]`", MaxRateHz: 250,
		Options: []string{"--family auto|n6705|k2450|k2280s|dp800|sdm (meter.family)", "--channel 1 (meter.channel)",
			"--rate (meter.rate_hz): polls/s, default–maximum per family: " + scpiRates(),
			"--mode poll|array|array-binary (meter.mode): array = the instrument's buffered acquisition (N6705 MEAS:ARR, 2280S trace buffer); --rate then asks for the sample interval",
			"--voltage V (meter.voltage_v): for current-only families (sdm)", "--baud 115200 (meter.baud)"},
		Record: "idlewatt record --meter scpi --port /dev/ttyUSB0 --duration 10m --out bench.iwcap"},
}

// scpiRates lists each SCPI family's default and maximum polling rate.
func scpiRates() string {
	var s []string
	for _, f := range scpi.Families {
		s = append(s, fmt.Sprintf("%s %g–%g", f.Name, f.Rate, f.MaxRate))
	}
	return strings.Join(s, ", ")
}

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{
			Use:   "meters",
			Short: "List the meter kinds and how to connect each",
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				docs := make([]meterDoc, len(meterDocs))
				copy(docs, meterDocs)
				for k := range docs {
					_, docs[k].Registered = registry.Lookup(docs[k].Kind)
				}
				out := cmd.OutOrStdout()
				if optBool(cmd, "json", "") {
					enc := json.NewEncoder(out)
					enc.SetIndent("", "  ")
					return enc.Encode(struct {
						Schema string     `json:"schema"`
						Meters []meterDoc `json:"meters"`
					}{"idlewatt.meters/v1", docs})
				}
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				for _, d := range docs {
					rate := "-"
					if d.MaxRateHz > 0 {
						rate = fmt.Sprintf("≤ %g S/s", d.MaxRateHz)
					}
					ready := " (usable with record)"
					if !d.Registered {
						ready = " (not yet usable with record)"
					}
					fmt.Fprintf(tw, "%s\t%s%s\n\tconnect: %s\n\trate: %s\n", d.Kind, d.What, ready, d.Connect, rate)
					for _, o := range d.Options {
						fmt.Fprintf(tw, "\toption: %s\n", o)
					}
					fmt.Fprintf(tw, "\trecord: %s\n", d.Record)
				}
				return tw.Flush()
			},
		}
		c.Flags().Bool("json", false, "print JSON")
		return c
	})
}
