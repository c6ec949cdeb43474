package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/idlewatt/idlewatt/internal/serialport"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/registry"
)

// meterFlags maps the kind-specific flags (addMeterFlags) to their config
// keys under meter., which are the drivers' setting keys (meter/registry).
var meterFlags = []struct{ flag, key string }{
	{"mode", "mode"}, {"supply-mv", "supply_mv"}, {"metadata", "metadata"}, {"no-spike-filter", "no_spike_filter"},
	{"columns", "columns"}, {"baud", "baud"}, {"voltage", "voltage_v"}, {"family", "family"}, {"channel", "channel"},
	{"battery", "battery"}, {"interval", "interval"}, {"rapl", "rapl"}, {"rate", "rate_hz"},
}

// meterWhere spells a setting for messages: "--supply-mv (meter.supply_mv)".
func meterWhere(key string) string {
	if key == "port" {
		return "--port"
	}
	for _, f := range meterFlags {
		if f.key == key {
			return "--" + f.flag + " (meter." + key + ")"
		}
	}
	return "meter." + key
}

// addMeterFlags adds the kind-specific flags of commands that open a meter.
func addMeterFlags(f *pflag.FlagSet) {
	f.String("mode", "", "ppk2: ampere|source (default source; a dump's own mode); scpi: poll|array|array-binary (default poll)")
	f.Int("supply-mv", 0, "ppk2: regulator set-point in source mode (default the metadata's VDD); the external supply in ampere mode (required)")
	f.String("metadata", "nordic", "ppk2: how missing calibration values are read: nordic (Nordic's app) or zero-r-only")
	f.Bool("no-spike-filter", false, "ppk2: keep the samples at a range switch as measured")
	f.String("columns", "", "line: column map, e.g. millis,loadV,current_mA or currentranger")
	f.Int("baud", 115200, "line, scpi: serial baud rate")
	f.Float64("voltage", 0, "line, scpi: rail voltage when the meter measures current only")
	f.String("family", "", "scpi: auto|n6705|k2450|k2280s|dp800|sdm (default from *IDN?)")
	f.Int("channel", 1, "scpi: instrument output channel")
	f.String("battery", "", "battery: power_supply name (default the first Battery)")
	durationFlag(f, "interval", time.Second, "battery: poll interval")
	f.Bool("rapl", false, "battery: add the CPU package (RAPL) channel as port 0")
}

// readMeterOptions resolves addMeterFlags' settings (flag > config key under
// meter. > IDLEWATT_METER_* > default) for the driver; a command without
// the flags (measure, devslp verify, demo) passes the config keys only. rate is the
// command's --rate, the nominal rate of meters without a clock.
func readMeterOptions(cmd *cobra.Command, rate float64) (registry.Settings, error) {
	s := registry.Settings{Values: map[string]any{"rate_hz": rate}, Name: func(key string) string {
		w := meterWhere(key)
		if flag, _, _ := strings.Cut(strings.TrimPrefix(w, "--"), " "); cmd.Flags().Lookup(flag) == nil {
			return "meter." + key // a command without the flag names the key only
		}
		return w
	}}
	for _, f := range meterFlags {
		key := "meter." + f.key
		var v any
		var err error
		if f.key == "rate_hz" {
			continue
		}
		if cmd.Flags().Lookup(f.flag) == nil && !cliOf(cmd).cfg.IsSet(key) {
			continue // a command without the flag (measure): the driver's default
		}
		switch f.key {
		case "no_spike_filter", "rapl":
			v = optBool(cmd, f.flag, key)
		case "supply_mv", "baud", "channel":
			v, err = optInt(cmd, f.flag, key)
		case "voltage_v":
			v, err = optFloat(cmd, f.flag, key)
		case "interval":
			v, err = optDuration(cmd, f.flag, key)
		default:
			v = optString(cmd, f.flag, key)
		}
		if err != nil {
			return s, err
		}
		s.Values[f.key] = v
	}
	return s, nil
}

// openMeterWith opens a meter of kind at path (or the kind's default port)
// through meter/registry. A regular file is replayed when the kind supports
// it; replayed says so. Bad usage or a recorded stream that does not decode
// is a usage error (exit 2); a device that does not answer properly is a
// failure.
func openMeterWith(kind, path string, s registry.Settings) (m meter.Meter, replayed bool, err error) {
	m, replayed, err = registry.Open(kind, path, s)
	if err == nil {
		return m, replayed, nil
	}
	path = registry.DefaultPort(kind, path)
	switch {
	case errors.Is(err, registry.ErrUnknownKind):
		return nil, replayed, usageErr("--meter %v", err)
	case errors.Is(err, registry.ErrUsage):
		return nil, replayed, inputErr(err)
	case replayed:
		return nil, replayed, inputErr(fmt.Errorf("--port %s: %w", path, err))
	}
	return nil, replayed, meterOpenErr(fmt.Errorf("--port %s: %w", path, err))
}

// meterOpenErr gives a failure to open a meter its exit code: a port another
// process holds, or a meter whose calibration is out of its physical bounds,
// is bad input (exit 2: nothing was measured, and retrying will not help
// until the user acts); anything else is a device failure (exit 1).
func meterOpenErr(err error) error {
	if errors.Is(err, serialport.ErrInUse) || errors.Is(err, meter.ErrCalibration) {
		return inputErr(err)
	}
	return &codedError{code: exitFailure, err: err}
}

// foreignMeterFlags refuses a kind-specific flag given on the command line
// that the meter kind does not read: record --meter hub --supply-mv 3300
// recorded the hub and ignored the flag. Config keys under meter. are not
// checked (a config file may serve several kinds).
func foreignMeterFlags(cmd *cobra.Command, kind string) error {
	d, ok := registry.Lookup(kind)
	if !ok {
		return nil // the open names an unknown kind; the emulator is not in the registry
	}
	for _, f := range meterFlags {
		if fl := cmd.Flags().Lookup(f.flag); fl == nil || !fl.Changed || d.Takes(f.key) {
			continue
		}
		var takers []string
		for _, k := range registry.Kinds() {
			if o, _ := registry.Lookup(k); o.Takes(f.key) {
				takers = append(takers, k)
			}
		}
		return usageErr("--%s: a setting of %s meters; a %s meter does not take it (see idlewatt meters)", f.flag, strings.Join(takers, " and "), d.Kind)
	}
	return nil
}
