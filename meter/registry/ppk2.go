package registry

import (
	"strings"

	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/ppk2"
	"github.com/idlewatt/idlewatt/units"
)

// ppk2: Nordic's Power Profiler Kit II; ppk2.Open itself tells a tty from
// a dump file. Settings: mode (source|ampere), supply_mv, metadata
// (nordic|zero-r-only), no_spike_filter.
func init() {
	open := func(path string, s Settings) (meter.Meter, error) {
		opts, err := ppk2Options(s)
		if err != nil {
			return nil, err
		}
		return ppk2.Open(path, opts)
	}
	Register(Driver{Doc: ppk2Doc, Kind: "ppk2", OnePort: true, Flags: ppk2Flags, Open: open, Replay: open})
}

func ppk2Options(s Settings) (ppk2.Options, error) {
	var opts ppk2.Options
	switch mode := s.String("mode"); strings.ToLower(mode) {
	case "":
	case "source":
		opts.Mode = ppk2.SourceMeter
	case "ampere":
		opts.Mode = ppk2.AmpereMeter
	default:
		return opts, s.Usagef("%s %q: a PPK2 is an ampere or a source meter", s.Where("mode"), mode)
	}
	mv := s.Int("supply_mv")
	switch {
	case mv < 0:
		return opts, s.Usagef("%s %d is negative", s.Where("supply_mv"), mv)
	case opts.Mode == ppk2.AmpereMeter && mv == 0:
		return opts, s.Usagef("ampere mode needs %s: the PPK2 cannot measure the external supply's voltage", s.Where("supply_mv"))
	case opts.Mode != ppk2.AmpereMeter && mv != 0 && (mv < 800 || mv > 5000):
		return opts, s.Usagef("%s %d: the PPK2's regulator sets 800–5000 mV", s.Where("supply_mv"), mv)
	}
	opts.Supply = units.Volts(float64(mv) / 1000)
	switch md := s.String("metadata"); strings.ToLower(md) {
	case "", "nordic":
	case "zero-r-only":
		opts.Behaviour = ppk2.ZeroROnly
	default:
		return opts, s.Usagef("%s %q: nordic or zero-r-only", s.Where("metadata"), md)
	}
	opts.NoSpikeFilter = s.Bool("no_spike_filter")
	return opts, nil
}

var ppk2Doc = Doc{
	What:      "Nordic Power Profiler Kit II: one channel, 100 kS/s, 200 nA–1 A, 8 logic inputs, DUT power",
	Connect:   "--port /dev/ttyACM0 (USB 1915:c00a, CDC-ACM), a pty from `idlewatt ppk2 emulate [--ma X | --profile NAME]`, or a raw device→host dump file (metadata through END, then sample words)",
	MaxRateHz: 100_000,
	Options: []string{"--mode source|ampere (meter.mode; default source, a dump's own mode)",
		"--supply-mv MV (meter.supply_mv): regulator 800–5000 mV in source mode (default the metadata's VDD); the external supply in ampere mode (required)",
		"--rate (meter.rate_hz): 100 kS/s ÷ N, host-side averaging (default 100000)",
		"--metadata nordic|zero-r-only (meter.metadata): which reference host's reading of missing calibration values",
		"--no-spike-filter (meter.no_spike_filter): keep range-switch samples as measured"},
	Record: "idlewatt record --meter ppk2 --port /dev/ttyACM0 --supply-mv 3300 --rate 10000 --duration 10m --out ppk2.iwcap",
}

var ppk2Flags = []settings.Flag{
	{Name: "mode", Key: "meter.mode", Kind: settings.String, Help: "ampere|source (default source; a dump's own mode)"},
	{Name: "supply-mv", Key: "meter.supply_mv", Kind: settings.Int, Help: "regulator set-point in source mode (default the metadata's VDD); the external supply in ampere mode (required)"},
	{Name: "metadata", Key: "meter.metadata", Kind: settings.String, Default: "nordic", Help: "how missing calibration values are read: nordic (Nordic's app) or zero-r-only"},
	{Name: "no-spike-filter", Key: "meter.no_spike_filter", Kind: settings.Bool, Help: "keep the samples at a range switch as measured"},
}
