package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/idlewatt/idlewatt/internal/serialport"
	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// rateFlag is the setting every kind takes: the rate, the command's own
// --rate flag (config meter.rate_hz), declared by each command.
var rateFlag = settings.Flag{Name: "rate", Key: "meter.rate_hz", Kind: settings.Float}

// Flags returns the drivers' flags, each once, in the order of the kinds
// and of their declarations: a flag several kinds share has their help
// under both names ("line, scpi: serial baud rate"), or each kind's own
// ("ppk2: …; scpi: …") where they differ, and the first kind's default.
func Flags() []settings.Flag {
	type part struct{ kinds, help string }
	var out []settings.Flag
	parts := map[string][]part{}
	for _, d := range Drivers() {
		for _, f := range d.Flags {
			ps, seen := parts[f.Name]
			if !seen {
				out = append(out, f)
			}
			i := 0
			for i < len(ps) && ps[i].help != f.Help {
				i++
			}
			if i == len(ps) {
				ps = append(ps, part{d.Kind, f.Help})
			} else {
				ps[i].kinds += ", " + d.Kind
			}
			parts[f.Name] = ps
		}
	}
	for i := range out {
		var hs []string
		for _, p := range parts[out[i].Name] {
			hs = append(hs, p.kinds+": "+p.help)
		}
		out[i].Help = strings.Join(hs, "; ")
	}
	return out
}

// flagOf is the flag of a setting key (rate_hz included).
func flagOf(key string) (settings.Flag, bool) {
	for _, f := range append(Flags(), rateFlag) {
		if f.Key == "meter."+key {
			return f, true
		}
	}
	return settings.Flag{}, false
}

// Read resolves the drivers' settings through g for a command: a flag the
// command has (g.Has) is read whatever its source; one it has not (measure)
// only when its config key is set, else the driver keeps its default. rate
// is the command's rate (rate_hz). A setting is named in messages as the
// command knows it: "--supply-mv (meter.supply_mv)", or "meter.supply_mv"
// where the command has no such flag.
func Read(g settings.Getter, rate float64) (Settings, error) {
	s := Settings{Values: map[string]any{"rate_hz": rate}, Name: func(key string) string {
		if key == "port" && g.Has("port") {
			return "--port"
		}
		if f, ok := flagOf(key); ok && g.Has(f.Name) {
			return "--" + f.Name + " (meter." + key + ")"
		}
		return "meter." + key
	}}
	for _, f := range Flags() {
		if !g.Has(f.Name) && !g.Set(f.Name) {
			continue // a command without the flag (measure): the driver's default
		}
		var v any
		var err error
		switch f.Kind {
		case settings.Bool:
			v = g.Bool(f.Name)
		case settings.Int:
			v, err = g.Int(f.Name)
		case settings.Float:
			v, err = g.Float(f.Name)
		case settings.Duration:
			v, err = g.Duration(f.Name)
		default:
			v = g.String(f.Name)
		}
		if err != nil {
			return s, err
		}
		s.Values[strings.TrimPrefix(f.Key, "meter.")] = v
	}
	return s, nil
}

// Foreign refuses a driver flag given on the command line (g.Changed)
// that kind does not read: record --meter hub --supply-mv 3300 recorded the
// hub and ignored the flag. Config keys under meter. are not checked (a
// config file may serve several kinds); nor is a kind the registry does
// not hold (its open names it; the emulator is not here).
func Foreign(kind string, g settings.Getter) error {
	d, ok := Lookup(kind)
	if !ok {
		return nil
	}
	for _, f := range Flags() {
		key := strings.TrimPrefix(f.Key, "meter.")
		if !g.Changed(f.Name) || d.Takes(key) {
			continue
		}
		var takers []string
		for _, k := range Kinds() {
			if o, _ := Lookup(k); o.Takes(key) {
				takers = append(takers, k)
			}
		}
		return settings.Usagef("--%s: a setting of %s meters; a %s meter does not take it (see idlewatt meters)", f.Name, strings.Join(takers, " and "), d.Kind)
	}
	return nil
}

// ListEntry is one kind in `idlewatt meters`: how to connect it
// (docs/meters.md has the details: wiring, limits, uncertainty).
type ListEntry struct {
	Kind       string      `json:"kind"`
	What       string      `json:"what"`
	Connect    string      `json:"connect"`
	MaxRateHz  units.Hertz `json:"max_rate_hz"`
	Options    []string    `json:"options"`
	Record     string      `json:"record"`     // an example record invocation
	Registered bool        `json:"registered"` // usable with record --meter (every kind here is)
}

// WriteList writes every kind's Doc, as text or as JSON
// (idlewatt.meters/v1).
func WriteList(w io.Writer, asJSON bool) error {
	var docs []ListEntry
	for _, d := range Drivers() {
		docs = append(docs, ListEntry{Kind: d.Kind, What: d.Doc.What, Connect: d.Doc.Connect, MaxRateHz: d.Doc.MaxRateHz,
			Options: d.Doc.Options, Record: d.Doc.Record, Registered: true})
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Schema string      `json:"schema"`
			Meters []ListEntry `json:"meters"`
		}{"idlewatt.meters/v1", docs})
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
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
}

// OpenFor is Open for a command line: an unknown kind, bad settings or a
// recorded stream that does not decode is bad usage or input
// (settings.ErrUsage), and so is a device DeviceError calls so; the error
// names the port (the kind's default when path is empty).
func OpenFor(kind, path string, s Settings) (m meter.Meter, replayed bool, err error) {
	m, replayed, err = Open(kind, path, s)
	if err == nil {
		return m, replayed, nil
	}
	path = DefaultPort(kind, path)
	switch {
	case errors.Is(err, ErrUnknownKind):
		return nil, replayed, settings.Usagef("--meter %v", err)
	case errors.Is(err, ErrUsage):
		return nil, replayed, settings.Input(err)
	case replayed:
		return nil, replayed, settings.Input(fmt.Errorf("--port %s: %w", path, err))
	}
	return nil, replayed, DeviceError(fmt.Errorf("--port %s: %w", path, err))
}

// DeviceError classes a failure to open a meter: a port another process
// holds, or a meter whose calibration is out of its physical bounds, is
// bad input (settings.ErrUsage: nothing was measured, and retrying will
// not help until the user acts); anything else stays a device failure.
func DeviceError(err error) error {
	if errors.Is(err, serialport.ErrInUse) || errors.Is(err, meter.ErrCalibration) {
		return settings.Input(err)
	}
	return err
}
