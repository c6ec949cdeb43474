package battery

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// Options configure Open. The zero value polls the first battery once a
// second and marks readings stale after two minutes without change.
type Options struct {
	Name       string        // power_supply entry, e.g. "BAT0"; default the first Battery
	Interval   time.Duration // poll interval; default 1 s
	StaleAfter time.Duration // default 2 min
	RAPL       bool          // add the CPU package channel (port 0)
}

// Battery is a laptop battery's fuel gauge as a slow meter.
type Battery struct {
	opts Options
	dir  string
	root string
	rapl *RAPL

	// clock is the poll's host time (nil: hostclock.Now); tests give a
	// virtual one.
	clock func() hostclock.Time

	mu    sync.Mutex
	est   Estimator
	stats meter.Stats
}

var _ meter.Meter = (*Battery)(nil)

// Open checks that the battery under sysRoot (a /sys tree; "" = /sys) can be
// read and is discharging.
func Open(sysRoot string, opts Options) (*Battery, error) {
	if sysRoot == "" {
		sysRoot = "/sys"
	}
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	if opts.StaleAfter <= 0 {
		opts.StaleAfter = 2 * time.Minute
	}
	name := opts.Name
	if name == "" {
		var err error
		if name, err = FindBattery(sysRoot); err != nil {
			return nil, fmt.Errorf("%w: %v", meter.ErrNoDevice, err)
		}
	}
	b := &Battery{opts: opts, root: sysRoot, dir: filepath.Join(sysRoot, "class", "power_supply", name)}
	b.est.Interval = opts.Interval
	if _, err := Read(b.dir, 0); err != nil {
		return nil, err
	}
	if opts.RAPL {
		r, err := OpenRAPL(sysRoot)
		if err != nil {
			return nil, err
		}
		b.rapl = r
	}
	return b, nil
}

// Info implements meter.Meter. Channel 0 is the battery (port 1); with RAPL,
// channel 1 is the CPU package (port 0, never drive power). Power-only
// channels carry V = 1 and I = watts.
func (b *Battery) Info() meter.Info {
	ch := []meter.Channel{{Port: 1, Rail: meter.RailOther}}
	if b.rapl != nil {
		ch = append(ch, meter.Channel{Port: 0, Rail: meter.RailOther})
	}
	model := "laptop battery " + filepath.Base(b.dir)
	if b.rapl != nil {
		model += " + CPU package (RAPL)"
	}
	return meter.Info{Kind: "battery", Model: model, Serial: b.dir, Ports: 1, Channels: ch,
		Rates: []units.Hertz{units.Hertz(time.Second) / units.Hertz(b.opts.Interval)}}
}

// Stats implements meter.Meter.
func (b *Battery) Stats() meter.Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stats
}

// Estimate returns the long-window estimate over everything streamed so far.
func (b *Battery) Estimate() (Estimate, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.est.Result()
}

// Close implements meter.Meter.
func (b *Battery) Close() error { return nil }

// Stream polls every Interval until ctx is done. It fails with
// ErrNotDischarging as soon as the battery stops discharging: the readings
// would no longer be the laptop's draw. cfg.Rate is ignored (the poll
// interval sets the rate).
func (b *Battery) Stream(ctx context.Context, cfg meter.StreamConfig, sink meter.Sink) error {
	chans := meter.Channels(b.Info(), cfg)
	wantRAPL := b.rapl != nil && len(chans) == 2
	clock := b.clock
	if clock == nil {
		clock = hostclock.Now
	}
	t0 := hostclock.Time(0) // the first poll's time
	tick := time.NewTicker(b.opts.Interval)
	defer tick.Stop()
	st := stepper{stale: b.opts.StaleAfter}
	next := uint64(0) // the first index not yet given out
	for {
		now := clock()
		if next == 0 {
			t0 = now
		}
		// The sample index is the poll's time on the poll grid, not a count
		// of polls: a tick the ticker dropped (a stalled host) leaves a gap
		// of the indices it would have had, so index × Interval stays the
		// time since the first poll.
		k := uint64(math.Round(float64(now-t0) / float64(b.opts.Interval)))
		if k < next {
			k = next
		}
		if k > next {
			b.mu.Lock()
			b.stats.SamplesLost += k - next
			b.mu.Unlock()
			for ch := range chans {
				if err := sink.Gap(meter.Gap{Channel: ch, Start: next, Count: k - next, Reason: "late"}); err != nil {
					return err
				}
			}
		}
		next = k + 1
		r, err := Read(b.dir, time.Duration(now-t0))
		implausible := errors.Is(err, meter.ErrCalibration)
		if err != nil && !implausible {
			return err
		}
		var p float64
		var reason string
		if implausible {
			reason = "implausible"
		} else {
			b.mu.Lock()
			b.est.Add(r)
			b.mu.Unlock()
			p, reason = st.step(r)
		}
		if reason != "" {
			b.mu.Lock()
			b.stats.SamplesLost++
			b.mu.Unlock()
			err = sink.Gap(meter.Gap{Channel: 0, Start: k, Count: 1, Reason: reason})
		} else {
			v := r.Voltage
			if v <= 0 {
				v = 1
			}
			err = sink.Samples(&meter.Block{Channel: 0, Start: k, V: []units.Volts{units.Volts(v)}, I: []units.Amps{units.Amps(p / v)}})
			b.mu.Lock()
			b.stats.Frames++
			b.mu.Unlock()
		}
		if err == nil && wantRAPL {
			err = b.raplSample(k, sink)
		}
		if err == nil {
			err = sink.Mark(meter.MarkEcho{ID: uint32(k), HostSent: now, HostRecv: now, MeterIndex: k, Synthetic: true})
		}
		if err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

func (b *Battery) raplSample(k uint64, sink meter.Sink) error {
	j, err := b.rapl.Delta()
	if err != nil {
		return err
	}
	if k == 0 {
		return sink.Gap(meter.Gap{Channel: 1, Start: 0, Count: 1, Reason: "warmup"})
	}
	return sink.Samples(&meter.Block{Channel: 1, Start: k, V: []units.Volts{1}, I: []units.Amps{units.Amps(j / b.opts.Interval.Seconds())}})
}

// stepper turns readings into per-poll power, or the reason there is none:
// "warmup" until energy deltas have a full interval between two steps,
// "stale" once the gauge has not changed for longer than stale.
type stepper struct {
	stale      time.Duration
	lastVal    float64
	lastChange time.Duration
	have       bool
	stepAt     time.Duration // time of the last energy step
	stepE      float64
	steps      int
	power      float64
}

func (s *stepper) step(r Reading) (float64, string) {
	val := r.Power
	if r.Method == MethodEnergy || r.Method == MethodCharge {
		val = r.Energy
	}
	changed := s.have && val != s.lastVal
	if changed || !s.have {
		s.lastVal, s.lastChange, s.have = val, r.At, true
	}
	if r.Method == MethodEnergy || r.Method == MethodCharge {
		// The first reading is not a step: the value may have held for a
		// while already. Power needs two real steps.
		if changed {
			if s.steps > 0 && r.At > s.stepAt {
				s.power = (s.stepE - r.Energy) / (r.At - s.stepAt).Seconds()
			}
			s.stepAt, s.stepE = r.At, r.Energy
			s.steps++
		}
		if s.steps < 2 {
			return 0, "warmup"
		}
	} else {
		s.power = r.Power
	}
	if r.At-s.lastChange > s.stale {
		return 0, "stale"
	}
	return s.power, ""
}

// ResolveConfig fills cfg's rate with the poll rate (1 / Options.Interval,
// which alone sets it) and rejects any other rate and ports the battery
// does not have (1 = battery, 0 = CPU package with RAPL).
func ResolveConfig(info meter.Info, cfg meter.StreamConfig) (meter.StreamConfig, error) {
	if len(info.Rates) == 0 {
		return cfg, fmt.Errorf("battery: %w: no poll rate", meter.ErrProtocol)
	}
	poll := info.Rates[0]
	if cfg.Rate != 0 && math.Abs(float64(cfg.Rate-poll)) > 1e-9*float64(poll) {
		return cfg, fmt.Errorf("battery: rate %g Hz: %w (the poll interval sets the rate: %g Hz)", float64(cfg.Rate), meter.ErrUnsupported, float64(poll))
	}
	cfg.Rate = poll
	for _, p := range cfg.Ports {
		if !slices.ContainsFunc(info.Channels, func(c meter.Channel) bool { return c.Port == p }) {
			return cfg, fmt.Errorf("battery: port %d: %w (1 = battery, 0 = CPU package with RAPL)", p, meter.ErrUnsupported)
		}
	}
	return cfg, nil
}

// ResolveConfig is meter.Resolver: ResolveConfig against the battery's Info.
func (b *Battery) ResolveConfig(cfg meter.StreamConfig) (meter.StreamConfig, error) {
	return ResolveConfig(b.Info(), cfg)
}
