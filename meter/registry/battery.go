package registry

import (
	"time"

	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/battery"
)

// battery: the laptop's own fuel gauge under a sysfs root (default /sys).
// Settings: battery (power_supply name), interval (poll), rapl.
func init() {
	Register(Driver{Doc: batteryDoc,
		Kind:    "battery",
		Port:    "/sys",
		OnePort: true,
		DirPort: true,
		Flags:   batteryFlags,
		Open: func(path string, s Settings) (meter.Meter, error) {
			iv := s.Duration("interval")
			if iv < 0 {
				return nil, s.Usagef("%s: %v is negative", s.Where("interval"), iv)
			}
			return battery.Open(path, battery.Options{Name: s.String("battery"), Interval: iv, RAPL: s.Bool("rapl")})
		},
	})
}

var batteryDoc = Doc{
	What:    "the laptop's own battery gauge (whole-laptop draw, discharging only) + optional RAPL CPU package channel",
	Connect: "--port /sys (the default; a sysfs root, a fixture tree in tests)", MaxRateHz: 1,
	Options: []string{"--battery BAT0 (meter.battery; default the first Battery)", "--interval 1s (meter.interval): poll interval, sets the rate",
		"--rapl (meter.rapl): CPU package channel as port 0 (root since Linux 5.10)"},
	Record: "idlewatt record --meter battery --duration 30m --out laptop.iwcap",
}

var batteryFlags = []settings.Flag{
	{Name: "battery", Key: "meter.battery", Kind: settings.String, Help: "power_supply name (default the first Battery)"},
	{Name: "interval", Key: "meter.interval", Kind: settings.Duration, Default: time.Second, Help: "poll interval"},
	{Name: "rapl", Key: "meter.rapl", Kind: settings.Bool, Help: "add the CPU package (RAPL) channel as port 0"},
}
