package registry_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/registry"
	"github.com/idlewatt/idlewatt/units"
)

// count is a meter.Sink that counts samples and sums power.
type count struct {
	samples int
	joules  float64 // Σ V·I per sample, divided by the rate at the end
}

func (c *count) Samples(b *meter.Block) error {
	c.samples += b.Len()
	c.joules += b.PowerSum()
	return nil
}
func (c *count) Gap(meter.Gap) error       { return nil }
func (c *count) Mark(meter.MarkEcho) error { return nil }
func (c *count) Event(meter.Event) error   { return nil }

// Open a meter by its kind, the way `idlewatt record --meter KIND --port
// PATH` does: the registry picks the driver, and a regular file is a
// recorded byte stream, replayed unpaced (a serial port or pty would open
// the live meter). Settings carry a driver's own options by config key;
// the hub needs none. An unknown kind is a usage error that lists the
// known ones.
func Example() {
	d, _ := registry.Lookup("hub")
	fmt.Printf("%s: default port %q, one port only %v\n", d.Kind, d.Port, d.OnePort)

	m, replayed, err := registry.Open("hub", "../../fixtures/hostile/hub-100ms.bin", registry.Settings{})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	cfg, err := meter.Resolve(m, meter.StreamConfig{}) // the meter's default rate, every port
	if err != nil {
		log.Fatal(err)
	}
	var c count
	if err := m.Stream(context.Background(), cfg, &c); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s meter, replayed %v: %d samples at %v, mean %s a channel (two 5 V rails at 400 mW, two idle 12 V rails)\n",
		m.Info().Kind, replayed, c.samples, cfg.Rate, units.Watts(c.joules/float64(c.samples)).Readout())

	_, _, err = registry.Open("nosuch", "/dev/null", registry.Settings{})
	fmt.Println(errors.Is(err, registry.ErrUsage))
	// Output:
	// hub: default port "", one port only false
	// hub meter, replayed true: 400 samples at 1 kHz, mean 200.0 mW a channel (two 5 V rails at 400 mW, two idle 12 V rails)
	// true
}
