package hub_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
	"github.com/idlewatt/idlewatt/units"
)

// noisyDrive is a drive at a steady level with Gaussian sensor noise of
// sigmaA on each rail's current and 1.25 mV (one bus count) on each bus
// voltage: what a converter's counts look like, and what packing sees.
type noisyDrive struct {
	i5, i12 float64
	sigmaA  float64
	mu      *sync.Mutex
	rng     *rand.Rand
}

func (d noisyDrive) Render(_ time.Duration, _ units.Hertz, v5 []units.Volts, i5 []units.Amps, v12 []units.Volts, i12 []units.Amps) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for k := range i5 {
		v5[k] = units.Volts(5 + d.rng.NormFloat64()*1.25e-3)
		v12[k] = units.Volts(12 + d.rng.NormFloat64()*1.25e-3)
		i5[k] = units.Amps(d.i5 + d.rng.NormFloat64()*d.sigmaA)
		i12[k] = units.Amps(d.i12 + d.rng.NormFloat64()*d.sigmaA)
	}
}
func (noisyDrive) SetDevSlp(time.Duration, bool) {}
func (noisyDrive) SetPower(time.Duration, bool)  {}

type uartSink struct {
	mu       sync.Mutex
	got, gap uint64 // channel-0 samples, gap samples
}

func (s *uartSink) Samples(b *meter.Block) error {
	if b.Channel == 0 {
		s.mu.Lock()
		s.got += uint64(b.Len())
		s.mu.Unlock()
	}
	return nil
}
func (s *uartSink) Gap(g meter.Gap) error {
	s.mu.Lock()
	s.gap += g.Count
	s.mu.Unlock()
	return nil
}
func (s *uartSink) Mark(meter.MarkEcho) error { return nil }
func (s *uartSink) Event(meter.Event) error   { return nil }

// TestUARTBandwidthLive measures what each sample format costs on a
// 921,600-baud UART: the live emulator paced at 92,160 B/s on a pty
// (hubemu.Options.Pace), streaming 1, 2 or 4 ports of noisy drives
// (IDLEWATT_UART_NOISE_MA, default 0.5 mA, the built-in SSD profiles'
// sensor noise) at each rate for IDLEWATT_UART_SECONDS (default 3) —
// link bytes per sample set, link bytes/s, and whether START was
// admitted. Runs only with IDLEWATT_CAMPAIGN=1; prints a Markdown table
// (docs/hub-protocol.md § Bandwidth, version 2).
func TestUARTBandwidthLive(t *testing.T) {
	if os.Getenv("IDLEWATT_CAMPAIGN") == "" {
		t.Skip("set IDLEWATT_CAMPAIGN=1")
	}
	secs, noise := 3.0, 0.5
	if v, err := strconv.ParseFloat(os.Getenv("IDLEWATT_UART_SECONDS"), 64); err == nil && v > 0 {
		secs = v
	}
	if v, err := strconv.ParseFloat(os.Getenv("IDLEWATT_UART_NOISE_MA"), 64); err == nil && v >= 0 {
		noise = v
	}
	fmt.Printf("| format | ports × rails | rate (Hz) | START | link B per sample set | link B/s | of 92,160 B/s | samples in the capture %% |\n|---|---|---|---|---|---|---|---|\n")
	for _, f := range []struct {
		name   string
		proto  int
		format uint8
	}{{"v1 16-bit", 1, 0}, {"v2 20-bit", 2, hub.Format20}, {"v2 packed 20-bit", 2, hub.FormatPacked}} {
		for _, ports := range []int{1, 2, 4} {
			for _, rate := range []int{1000, 2000, 5000, 10000} {
				uartRow(t, f.name, f.proto, f.format, ports, rate, noise, time.Duration(secs*float64(time.Second)))
			}
		}
	}
}

func uartRow(t *testing.T, name string, proto int, format uint8, ports, rate int, noiseMA float64, d time.Duration) {
	mu := new(sync.Mutex)
	var drives []meter.SimDrive
	for p := range ports {
		drives = append(drives, noisyDrive{i5: 0.08 + 0.1*float64(p), i12: 0.02, sigmaA: noiseMA * 1e-3, mu: mu, rng: rand.New(rand.NewSource(int64(p)))})
	}
	emu, err := hubemu.New(hubemu.Options{Ports: ports, Seed: 17, Protocol: proto, Link: hub.LinkUART921600, Pace: true, Drives: drives})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	h, err := hub.Open(emu.Path(), hub.Options{Format: format})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	sink := &uartSink{}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	err = h.Stream(ctx, meter.StreamConfig{Rate: units.Hertz(rate)}, sink)
	row := fmt.Sprintf("| %s | %d × 2 | %d |", name, ports, rate)
	if errors.Is(err, meter.ErrUnsupported) {
		// The host's own check (hub.FitsLink, FitsLink2), the hub's NAK
		// BANDWIDTH: the same numbers.
		fmt.Printf("%s refused: %.0f B/s needed | | | | |\n", row, need(proto, format, ports, rate))
		return
	}
	if err != nil {
		t.Errorf("%s: %v", row, err)
		return
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	ls := h.LinkStats()
	perSet := float64(ls.LiveBytes) / float64(sink.got)
	bps := perSet * float64(rate)
	share := 100 * float64(sink.got) / float64(sink.got+sink.gap)
	fmt.Printf("%s admitted | %.2f | %.0f | %.0f %% | %.3f |\n", row, perSet, bps, 100*bps/hub.LinkUART921600, share)
}

func need(proto int, format uint8, ports, rate int) float64 {
	if proto == 1 {
		return hub.StreamBytesPerSec(rate, 2*ports)
	}
	return hub.StreamBytesPerSec2(rate, 2*ports, format, hub.DefaultMaxFrame)
}
