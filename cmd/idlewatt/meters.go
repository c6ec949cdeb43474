package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/idlewatt/idlewatt/internal/serialport"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/battery"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/linemeter"
	"github.com/idlewatt/idlewatt/meter/ppk2"
	"github.com/idlewatt/idlewatt/meter/scpi"
	"github.com/idlewatt/idlewatt/units"
)

// meterKind is how the command line opens one kind of meter. One entry per
// driver, registered in init below with registerMeter.
type meterKind struct {
	// open connects to a live meter at path (serial port, pty, sysfs root).
	// An error that is already a usage error (bad options) passes through;
	// any other is a device failure.
	open func(path string, o meterOptions) (meter.Meter, error)
	// replay decodes a recorded raw byte stream in a regular file, unpaced;
	// nil if the kind has no recorded-stream format.
	replay func(path string, o meterOptions) (meter.Meter, error)
	// resolve fills a StreamConfig's defaults (rate, ports) the way the
	// driver will, and rejects combinations the meter cannot do; nil means
	// the config is used as given.
	resolve func(info meter.Info, cfg meter.StreamConfig) (meter.StreamConfig, error)
	// port is used when --port and meter.port are empty ("" = required).
	port string
}

var meterKinds = map[string]meterKind{}

// meterAliases are other names accepted for a kind.
var meterAliases = map[string]string{"linemeter": "line"}

// meterOptions are the kind-specific settings of the commands that open a
// meter (flags from addMeterFlags, resolved by readMeterOptions). Each kind
// reads only its own; JSON names match the config keys under meter.
type meterOptions struct {
	Mode     string        `json:"mode,omitempty"`      // ppk2: ampere|source ("" = source; a dump's own mode); scpi: poll|array|array-binary
	SupplyMV int           `json:"supply_mv,omitempty"` // ppk2: regulator (source) or external supply (ampere)
	Metadata string        `json:"metadata,omitempty"`  // ppk2: nordic|zero-r-only
	NoSpike  bool          `json:"no_spike_filter,omitempty"`
	Columns  string        `json:"columns,omitempty"`   // line: column spec or "currentranger"
	Baud     int           `json:"baud,omitempty"`      // line, scpi
	Voltage  float64       `json:"voltage_v,omitempty"` // line without a voltage column; current-only SCPI
	Rate     float64       `json:"rate_hz,omitempty"`   // line: nominal lines per second
	Family   string        `json:"family,omitempty"`    // scpi: "" or "auto" = from *IDN?
	Channel  int           `json:"channel,omitempty"`   // scpi: instrument output channel
	Battery  string        `json:"battery,omitempty"`   // battery: power_supply name
	Interval time.Duration `json:"interval,omitempty"`  // battery: poll interval
	RAPL     bool          `json:"rapl,omitempty"`      // battery: add the CPU package channel
}

func init() {
	registerMeter("hub", meterKind{
		open:    func(path string, _ meterOptions) (meter.Meter, error) { return hub.Open(path, hub.Options{}) },
		replay:  func(path string, _ meterOptions) (meter.Meter, error) { return hub.OpenReplay(path) },
		resolve: hub.ResolveConfig,
	})
	// ppk2.Open itself tells a tty from a dump file.
	openPPK2 := func(path string, o meterOptions) (meter.Meter, error) {
		opts, err := ppk2Options(o)
		if err != nil {
			return nil, err
		}
		return ppk2.Open(path, opts)
	}
	registerMeter("ppk2", meterKind{open: openPPK2, replay: openPPK2, resolve: ppk2.ResolveConfig})
	registerMeter("battery", meterKind{
		open: func(path string, o meterOptions) (meter.Meter, error) {
			if o.Interval < 0 {
				return nil, usageErr("--interval (meter.interval): %v is negative", o.Interval)
			}
			return battery.Open(path, battery.Options{Name: o.Battery, Interval: o.Interval, RAPL: o.RAPL})
		},
		resolve: battery.ResolveConfig,
		port:    "/sys",
	})
	openLine := func(path string, o meterOptions) (meter.Meter, error) {
		opts, err := lineOptions(o)
		if err != nil {
			return nil, err
		}
		return linemeter.Open(path, opts)
	}
	registerMeter("line", meterKind{open: openLine, replay: openLine,
		resolve: func(info meter.Info, cfg meter.StreamConfig) (meter.StreamConfig, error) {
			cfg, err := linemeter.ResolveConfig(info, cfg)
			if err != nil && cfg.Rate <= 0 {
				err = fmt.Errorf("%w: give --rate (config key meter.rate_hz)", err)
			}
			return cfg, err
		}})
	registerMeter("scpi", meterKind{
		open: func(path string, o meterOptions) (meter.Meter, error) {
			opts, err := scpiOptions(o)
			if err != nil {
				return nil, err
			}
			in, err := scpi.Open(path, opts)
			if err == nil && in.Family().MeasVolt == "" && opts.Voltage <= 0 {
				in.Close()
				return nil, usageErr("--port %s: the %s family measures current only: give the rail's voltage with --voltage (meter.voltage_v)", path, in.Family().Name)
			}
			return in, err
		},
		resolve: scpi.ResolveConfig,
	})
}

func ppk2Options(o meterOptions) (ppk2.Options, error) {
	var opts ppk2.Options
	switch strings.ToLower(o.Mode) {
	case "":
	case "source":
		opts.Mode = ppk2.SourceMeter
	case "ampere":
		opts.Mode = ppk2.AmpereMeter
	default:
		return opts, usageErr("--mode (meter.mode) %q: a PPK2 is an ampere or a source meter", o.Mode)
	}
	switch {
	case o.SupplyMV < 0:
		return opts, usageErr("--supply-mv (meter.supply_mv) %d is negative", o.SupplyMV)
	case opts.Mode == ppk2.AmpereMeter && o.SupplyMV == 0:
		return opts, usageErr("--mode ampere needs --supply-mv (meter.supply_mv): the PPK2 cannot measure the external supply's voltage")
	case opts.Mode != ppk2.AmpereMeter && o.SupplyMV != 0 && (o.SupplyMV < 800 || o.SupplyMV > 5000):
		return opts, usageErr("--supply-mv (meter.supply_mv) %d: the PPK2's regulator sets 800–5000 mV", o.SupplyMV)
	}
	opts.Supply = units.Volts(float64(o.SupplyMV) / 1000)
	switch strings.ToLower(o.Metadata) {
	case "", "nordic":
	case "zero-r-only":
		opts.Behaviour = ppk2.ZeroROnly
	default:
		return opts, usageErr("--metadata (meter.metadata) %q: nordic or zero-r-only", o.Metadata)
	}
	opts.NoSpikeFilter = o.NoSpike
	return opts, nil
}

func lineOptions(o meterOptions) (linemeter.Options, error) {
	var opts linemeter.Options
	if strings.TrimSpace(o.Columns) == "" {
		return opts, usageErr("line meters need --columns (meter.columns): e.g. millis,loadV,current_mA or currentranger")
	}
	c, err := linemeter.ParseColumns(o.Columns)
	if err != nil {
		return opts, usageErr("--columns (meter.columns) %q: %v", o.Columns, err)
	}
	if c.Voltage < 0 && o.Voltage <= 0 {
		return opts, usageErr("--columns %q has no voltage column: give the rail's voltage with --voltage (meter.voltage_v)", o.Columns)
	}
	if o.Baud < 0 || o.Voltage < 0 || o.Rate < 0 {
		return opts, usageErr("--baud, --voltage and --rate must not be negative")
	}
	opts = linemeter.Options{Columns: c, Voltage: units.Volts(o.Voltage), Rate: units.Hertz(o.Rate), Baud: uint32(o.Baud),
		Rail: railOf(units.Volts(o.Voltage))}
	return opts, nil
}

func scpiOptions(o meterOptions) (scpi.Options, error) {
	opts := scpi.Options{Channel: o.Channel, Baud: uint32(max(o.Baud, 0)), Voltage: units.Volts(o.Voltage)}
	if o.Baud < 0 || o.Channel < 0 || o.Voltage < 0 {
		return opts, usageErr("--baud, --channel and --voltage must not be negative")
	}
	switch strings.ToLower(o.Mode) {
	case "", "poll":
	case "array", "array-binary":
		// --rate asks for the array's sample interval; the instrument's
		// rounding of it becomes the stream's rate.
		opts.Array, opts.ArrayBinary = true, strings.EqualFold(o.Mode, "array-binary")
		if o.Rate > 0 {
			opts.ArrayInterval = time.Duration(float64(time.Second) / o.Rate)
		}
	default:
		return opts, usageErr("--mode (meter.mode) %q: a SCPI instrument is polled (poll) or fetched in buffered arrays (array, array-binary)", o.Mode)
	}
	if f := strings.ToLower(o.Family); f != "" && f != "auto" {
		if _, err := scpi.FamilyByName(f); err != nil {
			var names []string
			for _, fam := range scpi.Families {
				names = append(names, fam.Name)
			}
			return opts, usageErr("--family (meter.family) %q: known families: auto, %s", o.Family, strings.Join(names, ", "))
		}
		opts.Family = f
	}
	return opts, nil
}

// railOf names the rail a stated voltage is nominally on (other if none).
func railOf(v units.Volts) meter.Rail {
	for _, r := range []meter.Rail{meter.Rail3V3, meter.Rail5V, meter.Rail12V} {
		if d := float64(v - r.Nominal()); d > -0.05*float64(r.Nominal()) && d < 0.05*float64(r.Nominal()) {
			return r
		}
	}
	return meter.RailOther
}

func registerMeter(name string, k meterKind) { meterKinds[name] = k }

func meterKindNames() string {
	var names []string
	for n := range meterKinds {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
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
// meter. > IDLEWATT_METER_* > default). rate is the command's --rate, the
// nominal rate of meters without a clock.
func readMeterOptions(cmd *cobra.Command, rate float64) (meterOptions, error) {
	o := meterOptions{
		Mode: optString(cmd, "mode", "meter.mode"), Columns: optString(cmd, "columns", "meter.columns"),
		Family: optString(cmd, "family", "meter.family"), Battery: optString(cmd, "battery", "meter.battery"),
		RAPL: optBool(cmd, "rapl", "meter.rapl"), Rate: rate,
		Metadata: optString(cmd, "metadata", "meter.metadata"), NoSpike: optBool(cmd, "no-spike-filter", "meter.no_spike_filter"),
	}
	var err error
	if o.SupplyMV, err = optInt(cmd, "supply-mv", "meter.supply_mv"); err != nil {
		return o, err
	}
	if o.Baud, err = optInt(cmd, "baud", "meter.baud"); err != nil {
		return o, err
	}
	if o.Channel, err = optInt(cmd, "channel", "meter.channel"); err != nil {
		return o, err
	}
	if o.Voltage, err = optFloat(cmd, "voltage", "meter.voltage_v"); err != nil {
		return o, err
	}
	if o.Interval, err = optDuration(cmd, "interval", "meter.interval"); err != nil {
		return o, err
	}
	return o, nil
}

// meterPort returns path, or the kind's default port when path is empty.
func meterPort(kind, path string) string {
	if path != "" {
		return path
	}
	if a, ok := meterAliases[kind]; ok {
		kind = a
	}
	return meterKinds[kind].port
}

// openMeter opens a meter of kind at path with default options.
func openMeter(kind, path string) (meter.Meter, meterKind, bool, error) {
	return openMeterWith(kind, path, meterOptions{})
}

// openMeterWith opens a meter of kind at path (or the kind's default port).
// A regular file is replayed when the kind supports it; replayed says so. A
// path that does not exist, or bad options, is a usage error; a device that
// does not answer properly is a failure.
func openMeterWith(kind, path string, o meterOptions) (m meter.Meter, k meterKind, replayed bool, err error) {
	if a, ok := meterAliases[kind]; ok {
		kind = a
	}
	k, ok := meterKinds[kind]
	if !ok {
		return nil, k, false, usageErr("--meter %q: unknown meter kind (known: %s)", kind, meterKindNames())
	}
	if path == "" {
		path = k.port
	}
	if path == "" {
		return nil, k, false, usageErr("--port is required (a serial port, pty, or recorded %s stream)", kind)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, k, false, usageErr("--port %s: %v", path, err)
	}
	var coded *codedError
	if fi.Mode().IsRegular() {
		if k.replay == nil {
			return nil, k, false, usageErr("--port %s is a regular file, and %s meters have no recorded-stream format", path, kind)
		}
		m, err = k.replay(path, o)
		if errors.As(err, &coded) {
			return nil, k, true, err
		}
		if err != nil {
			return nil, k, true, inputErr(fmt.Errorf("--port %s: %w", path, err))
		}
		return m, k, true, nil
	}
	m, err = k.open(path, o)
	if errors.As(err, &coded) {
		return nil, k, false, err
	}
	if err != nil {
		return nil, k, false, meterOpenErr(fmt.Errorf("--port %s: %w", path, err))
	}
	return m, k, false, nil
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
