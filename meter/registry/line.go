package registry

import (
	"strings"

	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/linemeter"
	"github.com/idlewatt/idlewatt/units"
)

// line: meters that print one reading per line (INA2xx sketches,
// CurrentRanger), live or a recorded log. Settings: columns (required),
// voltage_v (without a voltage column), rate_hz (nominal lines per
// second), baud.
func init() {
	open := func(path string, s Settings) (meter.Meter, error) {
		opts, err := lineOptions(s)
		if err != nil {
			return nil, err
		}
		return linemeter.Open(path, opts)
	}
	Register(Driver{Doc: lineDoc, Kind: "line", Aliases: []string{"linemeter"}, OnePort: true, Flags: lineFlags, Open: open, Replay: open})
}

func lineOptions(s Settings) (linemeter.Options, error) {
	var opts linemeter.Options
	cols, v, rate, baud := s.String("columns"), s.Float("voltage_v"), s.Float("rate_hz"), s.Int("baud")
	if strings.TrimSpace(cols) == "" {
		return opts, s.Usagef("line meters need %s: e.g. millis,loadV,current_mA or currentranger", s.Where("columns"))
	}
	c, err := linemeter.ParseColumns(cols)
	if err != nil {
		return opts, s.Usagef("%s %q: %v", s.Where("columns"), cols, err)
	}
	if c.Voltage < 0 && v <= 0 {
		return opts, s.Usagef("columns %q have no voltage column: give the rail's voltage with %s", cols, s.Where("voltage_v"))
	}
	if baud < 0 || v < 0 || rate < 0 {
		return opts, s.Usagef("%s, %s and %s must not be negative", s.Where("baud"), s.Where("voltage_v"), s.Where("rate_hz"))
	}
	return linemeter.Options{Columns: c, Voltage: units.Volts(v), Rate: units.Hertz(rate), Baud: uint32(baud),
		Rail: RailOf(units.Volts(v))}, nil
}

// RailOf names the rail a stated voltage is nominally on (other if none).
func RailOf(v units.Volts) meter.Rail {
	for _, r := range []meter.Rail{meter.Rail3V3, meter.Rail5V, meter.Rail12V} {
		if d := float64(v - r.Nominal()); d > -0.05*float64(r.Nominal()) && d < 0.05*float64(r.Nominal()) {
			return r
		}
	}
	return meter.RailOther
}

var lineDoc = Doc{
	What:    "line-streaming meters: INA219/INA226 sketches, LowPowerLab CurrentRanger (alias: linemeter)",
	Connect: "--port /dev/ttyUSB0 (raw 8N1) or a recorded log file", MaxRateHz: 1000,
	Options: []string{"--columns (meter.columns, required): e.g. millis,loadV,current_mA or currentranger",
		"--rate (meter.rate_hz, required): nominal lines per second (a line meter has no sample clock)",
		"--voltage V (meter.voltage_v): when the map has no voltage column", "--baud 115200 (meter.baud)"},
	Record: "idlewatt record --meter line --port /dev/ttyUSB0 --columns millis,loadV,current_mA --rate 500 --duration 10m --out ina.iwcap",
}

var lineFlags = []settings.Flag{
	{Name: "columns", Key: "meter.columns", Kind: settings.String, Help: "column map, e.g. millis,loadV,current_mA or currentranger"},
	baudFlag, voltageFlag,
}

// baudFlag and voltageFlag are settings of line and scpi meters alike.
var (
	baudFlag    = settings.Flag{Name: "baud", Key: "meter.baud", Kind: settings.Int, Default: 115200, Help: "serial baud rate"}
	voltageFlag = settings.Flag{Name: "voltage", Key: "meter.voltage_v", Kind: settings.Float, Help: "rail voltage when the meter measures current only"}
)
