package scpi

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// markEvery is how often Stream synthesises a clock mark: polls are paced
// by the host's clock, so marks only need to pin the start and any drift of
// the instrument's reply latency, not every sample.
const markEvery = time.Second

// Stream polls current (and voltage) once per period of cfg.Rate (default
// the family's Rate; above its MaxRate is ErrUnsupported). Sample k belongs
// to the k-th period after the start: a poll that starts late in its period
// is still that one sample, and periods that pass without a poll (the
// previous one ran long) are one "late" gap of exactly their count. A poll
// that fails (timeout, over-range, an error in the queue) is a one-sample
// gap with the reason; three in a row end the stream with the error. About
// once a second a synthetic mark ties a sample to the host times that
// bracket its current query. In array mode (Options.Array) Stream fetches
// arrays back to back instead (streamArray; the package doc says how).
func (in *Instrument) Stream(ctx context.Context, cfg meter.StreamConfig, sink meter.Sink) error {
	cfg, err := ResolveConfig(in.Info(), cfg)
	if err != nil {
		return err
	}
	if in.arr != nil {
		return in.streamArray(ctx, sink)
	}
	period := time.Duration(float64(time.Second) / float64(cfg.Rate))
	tick := time.NewTicker(period)
	defer tick.Stop()
	start := time.Now()
	var (
		fails    int
		k        uint64 // the period being polled
		lastMark hostclock.Time
		markID   uint32
	)
	for {
		i, v, sent, recv, err := in.poll()
		if err != nil {
			in.tally(0, 1)
			if fails++; fails >= 3 {
				return err
			}
			if serr := sink.Gap(meter.Gap{Channel: 0, Start: k, Count: 1, Reason: trunc(err.Error())}); serr != nil {
				return serr
			}
		} else {
			fails = 0
			in.tally(1, 0)
			if err := sink.Samples(&meter.Block{Start: k, V: []units.Volts{units.Volts(v)}, I: []units.Amps{units.Amps(i)}}); err != nil {
				return err
			}
			if markID == 0 || recv.Sub(lastMark) >= markEvery {
				markID++
				lastMark = recv
				if err := sink.Mark(meter.MarkEcho{ID: markID, HostSent: sent, HostRecv: recv, MeterIndex: k, Synthetic: true}); err != nil {
					return err
				}
			}
		}
		// Wait for a period after k. A tick the Ticker kept while the poll
		// ran may still be in its period: then wait for the next.
		next := k
		for next <= k {
			select {
			case <-ctx.Done():
				return nil
			case <-tick.C:
			}
			next = uint64(time.Since(start) / period)
		}
		if missed := next - k - 1; missed > 0 {
			in.tally(0, missed)
			if err := sink.Gap(meter.Gap{Channel: 0, Start: k + 1, Count: missed, Reason: "late"}); err != nil {
				return err
			}
		}
		k = next
	}
}

// poll reads current and, where the family measures it, voltage.
func (in *Instrument) poll() (i, v float64, sent, recv hostclock.Time, err error) {
	i, sent, recv, err = in.measure(in.fam.MeasCurr)
	v = float64(in.opts.Voltage)
	if err == nil && in.fam.MeasVolt != "" {
		v, _, _, err = in.measure(in.fam.MeasVolt)
	}
	if err == nil {
		err = plausible(i, v)
	}
	return i, v, sent, recv, err
}

// tally adds good polls and lost samples (failed polls, missed periods).
func (in *Instrument) tally(good, lost uint64) {
	in.mu.Lock()
	in.stats.Frames += good
	in.stats.SamplesLost += lost
	in.mu.Unlock()
}

// ResolveConfig sets cfg's rate to the family's polling rate (info.Rates[0])
// unless it asks for one up to the family's maximum (info.Rates[1]). In
// array mode (CapArray) the interval set at open is the rate, whatever cfg
// asks up to the maximum (the request was rounded to the instrument's
// timebase there). Only port 1 exists.
func ResolveConfig(info meter.Info, cfg meter.StreamConfig) (meter.StreamConfig, error) {
	if len(info.Rates) < 2 || info.Rates[0] <= 0 || info.Rates[1] < info.Rates[0] {
		return cfg, fmt.Errorf("scpi: %w: no nominal and maximum polling rates", meter.ErrProtocol)
	}
	nominal, most := info.Rates[0], info.Rates[1]
	array := slices.Contains(info.Capabilities, CapArray)
	switch r := float64(cfg.Rate); {
	case array && r >= 0 && r <= float64(most):
		cfg.Rate = nominal
	case r == 0:
		cfg.Rate = nominal
	case r < 0 || math.IsNaN(r) || math.IsInf(r, 0) || r > float64(most):
		return cfg, fmt.Errorf("scpi: rate %g Hz: %w (this family polls at up to %g Hz; default %g Hz)", r, meter.ErrUnsupported, float64(most), float64(nominal))
	case 1/r > time.Hour.Seconds():
		return cfg, fmt.Errorf("scpi: rate %g Hz: %w (one poll an hour at the least)", r, meter.ErrUnsupported)
	}
	for _, p := range cfg.Ports {
		if p != 1 {
			return cfg, fmt.Errorf("scpi: port %d: %w (one port)", p, meter.ErrUnsupported)
		}
	}
	return cfg, nil
}

// ResolveConfig is meter.Resolver: ResolveConfig against the instrument's Info.
func (in *Instrument) ResolveConfig(cfg meter.StreamConfig) (meter.StreamConfig, error) {
	return ResolveConfig(in.Info(), cfg)
}
