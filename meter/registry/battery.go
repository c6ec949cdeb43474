package registry

import (
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/battery"
)

// battery: the laptop's own fuel gauge under a sysfs root (default /sys).
// Settings: battery (power_supply name), interval (poll), rapl.
func init() {
	Register(Driver{
		Kind:    "battery",
		Port:    "/sys",
		OnePort: true,
		Open: func(path string, s Settings) (meter.Meter, error) {
			iv := s.Duration("interval")
			if iv < 0 {
				return nil, s.Usagef("%s: %v is negative", s.Where("interval"), iv)
			}
			return battery.Open(path, battery.Options{Name: s.String("battery"), Interval: iv, RAPL: s.Bool("rapl")})
		},
	})
}
