package registry

import (
	"fmt"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/scpi"
	"github.com/idlewatt/idlewatt/units"
)

// scpi: SCPI bench instruments over serial. Settings: mode
// (poll|array|array-binary), rate_hz (polls/s, or the array's interval),
// family ("" or auto = from *IDN?), channel, voltage_v (current-only
// families), baud.
func init() {
	Register(Driver{Doc: scpiDoc,
		Kind:    "scpi",
		OnePort: true,
		Flags:   scpiFlags,
		Open: func(path string, s Settings) (meter.Meter, error) {
			opts, err := scpiOptions(s)
			if err != nil {
				return nil, err
			}
			in, err := scpi.Open(path, opts)
			if err == nil && in.Family().MeasVolt == "" && opts.Voltage <= 0 {
				in.Close()
				return nil, s.Usagef("%s %s: the %s family measures current only: give the rail's voltage with %s",
					s.Where("port"), path, in.Family().Name, s.Where("voltage_v"))
			}
			return in, err
		},
	})
}

func scpiOptions(s Settings) (scpi.Options, error) {
	baud, ch, v, rate := s.Int("baud"), s.Int("channel"), s.Float("voltage_v"), s.Float("rate_hz")
	opts := scpi.Options{Channel: ch, Baud: uint32(max(baud, 0)), Voltage: units.Volts(v)}
	if baud < 0 || ch < 0 || v < 0 {
		return opts, s.Usagef("%s, %s and %s must not be negative", s.Where("baud"), s.Where("channel"), s.Where("voltage_v"))
	}
	switch mode := s.String("mode"); strings.ToLower(mode) {
	case "", "poll":
	case "array", "array-binary":
		// rate_hz asks for the array's sample interval; the instrument's
		// rounding of it becomes the stream's rate.
		opts.Array, opts.ArrayBinary = true, strings.EqualFold(mode, "array-binary")
		if rate > 0 {
			opts.ArrayInterval = time.Duration(float64(time.Second) / rate)
		}
	default:
		return opts, s.Usagef("%s %q: a SCPI instrument is polled (poll) or fetched in buffered arrays (array, array-binary)", s.Where("mode"), mode)
	}
	if f := strings.ToLower(s.String("family")); f != "" && f != "auto" {
		if _, err := scpi.FamilyByName(f); err != nil {
			var names []string
			for _, fam := range scpi.Families {
				names = append(names, fam.Name)
			}
			return opts, s.Usagef("%s %q: known families: auto, %s", s.Where("family"), s.String("family"), strings.Join(names, ", "))
		}
		opts.Family = f
	}
	return opts, nil
}

var scpiDoc = Doc{
	What:    "SCPI bench instruments: Keysight N6705, Keithley 2450/2280S, Rigol DP800, Siglent SDM",
	Connect: "--port /dev/ttyUSB0 (serial, \\n-terminated; *IDN? picks the family) or a pty from `idlewatt scpi emulate [--family F]`", MaxRateHz: 250,
	Options: []string{"--family auto|n6705|k2450|k2280s|dp800|sdm (meter.family)", "--channel 1 (meter.channel)",
		"--rate (meter.rate_hz): polls/s, default–maximum per family: " + scpiRates(),
		"--mode poll|array|array-binary (meter.mode): array = the instrument's buffered acquisition (N6705 MEAS:ARR, 2280S trace buffer); --rate then asks for the sample interval",
		"--voltage V (meter.voltage_v): for current-only families (sdm)", "--baud 115200 (meter.baud)"},
	Record: "idlewatt record --meter scpi --port /dev/ttyUSB0 --duration 10m --out bench.iwcap",
}

// scpiRates lists each SCPI family's default and maximum polling rate.
func scpiRates() string {
	var s []string
	for _, f := range scpi.Families {
		s = append(s, fmt.Sprintf("%s %g–%g", f.Name, f.Rate, f.MaxRate))
	}
	return strings.Join(s, ", ")
}

var scpiFlags = []settings.Flag{
	{Name: "mode", Key: "meter.mode", Kind: settings.String, Help: "poll|array|array-binary (default poll)"},
	{Name: "family", Key: "meter.family", Kind: settings.String, Help: "auto|n6705|k2450|k2280s|dp800|sdm (default from *IDN?)"},
	{Name: "channel", Key: "meter.channel", Kind: settings.Int, Default: 1, Help: "instrument output channel"},
	voltageFlag, baudFlag,
}
