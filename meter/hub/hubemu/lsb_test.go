package hubemu

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/units"
)

// gridSink keeps channel 0's currents.
type gridSink struct{ i []float64 }

func (s *gridSink) Samples(b *meter.Block) error {
	if b.Channel == 0 {
		for _, x := range b.I {
			s.i = append(s.i, float64(x))
		}
	}
	return nil
}
func (s *gridSink) Gap(meter.Gap) error       { return nil }
func (s *gridSink) Mark(meter.MarkEcho) error { return nil }
func (s *gridSink) Event(meter.Event) error   { return nil }

// noisyDrive is a constant current with a hashed ±spread around it, so
// readings fall on many counts.
type noisyDrive struct {
	i, spread float64
}

func (d noisyDrive) Render(t0 time.Duration, rate units.Hertz, v5 []units.Volts, i5 []units.Amps, v12 []units.Volts, i12 []units.Amps) {
	for k := range i5 {
		x := math.Sin(float64(k)*12.9898+float64(t0)*1e-6) * 43758.5453
		v5[k], v12[k], i12[k] = 5, 12, 0
		i5[k] = units.Amps(d.i + d.spread*(2*(x-math.Floor(x))-1))
	}
}
func (noisyDrive) SetDevSlp(time.Duration, bool) {}
func (noisyDrive) SetPower(time.Duration, bool)  {}

// A hub with a chosen LSB states it (the capture header takes it from
// READ_CAL) and every reading is a whole number of it; a floor under one
// LSB with noise under one LSB reads 0 or 1 count, never between.
func TestChosenLSBQuantises(t *testing.T) {
	for _, c := range []struct {
		name    string
		formats uint8
		lsb     units.Amps
		wide    bool
	}{
		{"16-bit 40 µA", hub.FormatBit16, 40e-6, false},
		{"20-bit 2.5 µA", 0, 2.5e-6, true},
	} {
		o := Options{Ports: 1, Rate: 1000, Formats: c.formats, Drives: []meter.SimDrive{noisyDrive{i: 0.7 * float64(c.lsb), spread: 0.4 * float64(c.lsb)}}}
		if c.wide {
			o.WideLSB[0] = c.lsb
		} else {
			o.CurrentLSB[0] = c.lsb
		}
		var buf bytes.Buffer
		if err := WriteFast(&buf, o, time.Second); err != nil {
			t.Fatal(err)
		}
		var s gridSink
		info, _, err := hub.DecodeStream(&buf, &s)
		if err != nil {
			t.Fatal(err)
		}
		lsb := float64(info.Channels[0].CurrentLSB)
		if math.Abs(lsb/float64(c.lsb)-1) > 0.005 {
			t.Errorf("%s: the hub states an LSB of %g A", c.name, lsb)
		}
		counts := map[float64]int{}
		for _, x := range s.i {
			q := x / lsb
			if math.Abs(q-math.Round(q)) > 1e-6 {
				t.Fatalf("%s: a reading of %g A is %g LSBs, off the grid", c.name, x, q)
			}
			counts[math.Round(q)]++
		}
		// 0.7 ± 0.4 LSB: 0 (below 0.5) or 1 count.
		if len(counts) != 2 || counts[0] == 0 || counts[1] == 0 || len(s.i) != 1000 {
			t.Errorf("%s: counts %v over %d samples, want 0 and 1 only", c.name, counts, len(s.i))
		}
	}
	for _, bad := range []Options{{CurrentLSB: [3]units.Amps{1e-6}}, {WideLSB: [3]units.Amps{20e-6}}, {CurrentLSB: [3]units.Amps{1e-3}}} {
		if err := bad.validate(); err == nil {
			t.Errorf("LSBs %v / %v accepted", bad.CurrentLSB, bad.WideLSB)
		}
	}
}
