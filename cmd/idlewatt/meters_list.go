package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/meter/registry"
	"github.com/idlewatt/idlewatt/units"
)

// meterDoc says how to connect one meter kind; docs/meters.md has the
// details (wiring, limits, uncertainty).
type meterDoc struct {
	Kind       string      `json:"kind"`
	What       string      `json:"what"`
	Connect    string      `json:"connect"`
	MaxRateHz  units.Hertz `json:"max_rate_hz"`
	Options    []string    `json:"options"`
	Record     string      `json:"record"`     // an example record invocation
	Registered bool        `json:"registered"` // usable with record --meter (every kind in meter/registry is)
}

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{
			Use:   "meters",
			Short: "List the meter kinds and how to connect each",
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, args []string) error {
				var docs []meterDoc
				for _, d := range registry.Drivers() {
					docs = append(docs, meterDoc{Kind: d.Kind, What: d.Doc.What, Connect: d.Doc.Connect, MaxRateHz: d.Doc.MaxRateHz,
						Options: d.Doc.Options, Record: d.Doc.Record, Registered: true})
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
					fmt.Fprintf(tw, "%s\t%s (usable with record)\n\tconnect: %s\n\trate: %s\n", d.Kind, d.What, d.Connect, rate)
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
