package meter_test

import (
	"context"
	"fmt"
	"log"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/units"
)

// mean is a meter.Sink that averages each channel's power.
type mean struct {
	samples []int
	watts   []float64 // sum of V·I
	gaps    int
}

func (e *mean) Samples(b *meter.Block) error {
	for k := range b.I { // b is the driver's: read it now, copy what you keep
		e.samples[b.Channel]++
		e.watts[b.Channel] += float64(b.Power(k))
	}
	return nil
}
func (e *mean) Gap(g meter.Gap) error     { e.gaps++; return nil }
func (e *mean) Mark(meter.MarkEcho) error { return nil }
func (e *mean) Event(ev meter.Event) error {
	fmt.Println("event:", ev.Kind, "port", ev.Port)
	return nil
}

// Open a meter and stream it into a Sink. Every driver is a meter.Meter; here
// the hub driver replays a recorded byte stream (hub.OpenMeter replays a
// regular file and opens anything else as a serial port, such as the pty of
// `idlewatt hub emulate` or a real hub's /dev/ttyACM0), so the output is
// exact. A live meter streams until ctx is cancelled; a replay ends at the
// end of the file.
func Example() {
	m, err := hub.OpenMeter("../fixtures/hostile/hub-100ms.bin", hub.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	info := m.Info()
	cfg := meter.StreamConfig{} // every channel at the meter's default rate
	chans := meter.Channels(info, cfg)
	fmt.Printf("%s %s: %d channels\n", info.Kind, info.Model, len(chans))

	sink := &mean{samples: make([]int, len(chans)), watts: make([]float64, len(chans))}
	if err := m.Stream(context.Background(), cfg, sink); err != nil {
		log.Fatal(err)
	}
	for i, c := range chans {
		fmt.Printf("%s: %d samples, mean %s\n", c.Name(), sink.samples[i], units.Watts(sink.watts[i]/float64(sink.samples[i])).Readout())
	}
	st := m.Stats()
	fmt.Printf("frames %d, CRC errors %d, gaps %d\n", st.Frames, st.CRCErrors, sink.gaps)
	// Output:
	// hub idlewatt hubemu: 4 channels
	// p1.5v: 100 samples, mean 399.9 mW
	// p1.12v: 100 samples, mean 0.0 mW
	// p2.5v: 100 samples, mean 399.9 mW
	// p2.12v: 100 samples, mean 0.0 mW
	// frames 13, CRC errors 0, gaps 0
}
