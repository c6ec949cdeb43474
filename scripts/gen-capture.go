//go:build ignore

// gen-capture writes a long synthetic capture straight through
// capture.Writer (format 2 unless -format 1): drives of 5 V + 12 V at
// -rate, a 0.4 W idle level with 2 s bursts every 60 s, Gaussian current
// noise of -noise-ma on the 5 V rail, the hub's LSBs (1.25 mV, 50 µA), a
// clock mark every second. For the scale goals (scripts/scale-24h.sh): it
// makes a 24-hour capture in minutes instead of a day.
//
//	go run scripts/gen-capture.go -hours 24 -drives 2 -out /tmp/day.iwcap
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"time"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

func main() {
	hours := flag.Float64("hours", 24, "length")
	drives := flag.Int("drives", 2, "drives (ports)")
	rate := flag.Float64("rate", 10000, "samples per second per channel")
	noise := flag.Float64("noise-ma", 0.5, "5 V current noise σ, mA")
	out := flag.String("out", "", "capture to create")
	format := flag.Int("format", 2, "capture format")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "gen-capture: -out is required")
		os.Exit(2)
	}
	const lsbV, lsbI = 0.00125, 0.00005
	var chans []meter.Channel
	var di []capture.DriveInfo
	for p := 1; p <= *drives; p++ {
		chans = append(chans, meter.Channel{Port: p, Rail: meter.Rail5V, VoltLSB: lsbV, CurrentLSB: lsbI},
			meter.Channel{Port: p, Rail: meter.Rail12V, VoltLSB: lsbV, CurrentLSB: 0.0001})
		di = append(di, capture.DriveInfo{Port: p, Name: fmt.Sprintf("synthetic %d", p)})
	}
	h := capture.Header{Created: time.Now().UTC().Format(time.RFC3339), Meter: meter.Info{Kind: "hub", Model: "gen-capture"},
		Channels: chans, RateHz: units.Hertz(*rate), StartHost: 1e12, Drives: di, Tool: "gen-capture"}
	w, err := capture.Create(*out, h, capture.Options{Version: *format, FlushEvery: time.Hour})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	block := int(*rate / 4) // a 250 ms flush's worth, as record writes
	total := uint64(*hours * 3600 * *rate)
	b := &meter.Block{V: make([]units.Volts, block), I: make([]units.Amps, block)}
	sig := *noise / 1e3 / lsbI
	for idx := uint64(0); idx < total; idx += uint64(block) {
		n := int(min(uint64(block), total-idx))
		for c, ch := range chans {
			b.Channel, b.Start, b.V, b.I = c, idx, b.V[:n], b.I[:n]
			for k := range n {
				t := float64(idx+uint64(k)) / *rate
				vc := 4000 + rng.IntN(3) - 1
				ic := 0
				if ch.Rail == meter.Rail5V {
					level := 0.08 + float64(ch.Port-1)*0.02 // A
					if math.Mod(t, 60) < 2 {
						level = 0.4
					}
					ic = int(math.Round(level/lsbI + rng.NormFloat64()*sig))
				}
				b.V[k] = units.Volts(float32(float64(vc) * float64(ch.VoltLSB)))
				b.I[k] = units.Amps(float32(float64(ic) * float64(ch.CurrentLSB)))
			}
			if err := w.Samples(b); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		if idx%uint64(*rate) == 0 {
			host := hostclock.Time(1e12 + float64(idx) / *rate * 1e9)
			_ = w.Mark(meter.MarkEcho{ID: uint32(idx / uint64(*rate)), HostSent: host - 50_000, HostRecv: host + 50_000, MeterIndex: idx})
		}
	}
	if err := w.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
