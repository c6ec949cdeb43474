package ppk2

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
)

// markEvery is how often Stream synthesises a MarkEcho: the PPK2 has no mark
// command, so the receive time of a read and the index of its last sample
// are the only tie between the clocks (analysis picks the earliest ones).
const markEvery = time.Second

// Stream implements meter.Meter. cfg.Rate must divide 100 kS/s (10 kS/s
// averages 10 raw samples); cfg.Ports may name only port 1. For a device it
// returns nil when ctx is done; for a dump, at the end of the file.
func (p *PPK2) Stream(ctx context.Context, cfg meter.StreamConfig, sink meter.Sink) error {
	n, err := samplesPer(cfg.Rate)
	if err != nil {
		return err
	}
	for _, port := range cfg.Ports {
		if port != 1 {
			return fmt.Errorf("ppk2: port %d: %w (one port)", port, meter.ErrUnsupported)
		}
	}
	if !p.streaming.CompareAndSwap(false, true) {
		return fmt.Errorf("ppk2: already streaming")
	}
	defer p.streaming.Store(false)
	pl := newPipeline(sink, NewConverter(p.meta.Calibration, p.vddMV), !p.opts.NoSpikeFilter, n, p.volts)
	s := &syncer{out: pl}
	if p.rw == nil {
		return p.streamDump(ctx, s, pl)
	}
	return p.streamDevice(ctx, s, pl)
}

func (p *PPK2) streamDump(ctx context.Context, s *syncer, pl *pipeline) error {
	t0 := hostclock.Now()
	buf := make([]byte, 1<<20)
	var nextMark uint64 = SampleRate
	var id uint32
	for {
		if ctx.Err() != nil {
			return nil
		}
		k, err := io.ReadFull(p.dump, buf)
		if k > 0 {
			pl.recv = t0 + hostclock.Time(int64(s.next)*1e9/SampleRate)
			s.feed(buf[:k])
			// A dump has no receive times; marks follow the nominal rate so
			// the capture still carries a (trivial) clock fit.
			for s.next >= nextMark && pl.err == nil {
				id++
				pl.mark(meter.MarkEcho{ID: id, HostSent: t0 + hostclock.Time(int64(nextMark)*1e9/SampleRate),
					HostRecv: t0 + hostclock.Time(int64(nextMark)*1e9/SampleRate), MeterIndex: nextMark / pl.n, Synthetic: true})
				nextMark += SampleRate
			}
			pl.flush()
			p.updateStats(s)
			if pl.err != nil {
				return pl.err
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("ppk2: dump %s: %w", p.path, err)
		}
	}
}

func (p *PPK2) streamDevice(ctx context.Context, s *syncer, pl *pipeline) error {
	d, hasDeadline := p.rw.(deadliner)
	if !hasDeadline {
		if c, ok := p.rw.(io.Closer); ok {
			stop := context.AfterFunc(ctx, func() { c.Close() })
			defer stop()
		}
	}
	if err := p.write(CmdAverageStart); err != nil {
		return fmt.Errorf("ppk2: %w: %v", meter.ErrDisconnected, err)
	}
	buf := make([]byte, 64<<10)
	var id uint32
	lastMark := hostclock.Time(0)
	for {
		if ctx.Err() != nil {
			pl.flush()
			_ = p.write(CmdAverageStop)
			return pl.err
		}
		if hasDeadline {
			_ = d.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		}
		k, err := p.rw.Read(buf)
		now := hostclock.Now()
		if k > 0 {
			pl.recv = now
			s.feed(buf[:k])
			p.outIndex.Store(pl.next)
			if now.Sub(lastMark) >= markEvery && s.next > 0 {
				id++
				lastMark = now
				pl.mark(meter.MarkEcho{ID: id, HostSent: now, HostRecv: now, MeterIndex: (s.next - 1) / pl.n, Synthetic: true})
			}
		}
		p.deliverEvents(pl)
		pl.flush()
		p.updateStats(s)
		if pl.err != nil {
			_ = p.write(CmdAverageStop)
			return pl.err
		}
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			if ctx.Err() != nil {
				return nil
			}
			pl.event(meter.Event{Kind: meter.EventDisconnect, Port: 1, Index: pl.next, HostRecv: now})
			return fmt.Errorf("ppk2: %s: %w: %v", p.path, meter.ErrDisconnected, err)
		}
	}
}

func (p *PPK2) deliverEvents(pl *pipeline) {
	p.mu.Lock()
	evs := p.events
	p.events = nil
	p.mu.Unlock()
	for _, e := range evs {
		pl.event(e)
	}
}

func (p *PPK2) updateStats(s *syncer) {
	p.mu.Lock()
	p.stats = meter.Stats{Frames: s.frames, Resyncs: s.resyncs, BytesDiscarded: s.discarded, SamplesLost: s.lost}
	p.mu.Unlock()
}
