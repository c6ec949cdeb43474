package rig

import (
	"sync"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
)

// liveSink records everything and keeps each port's recent power for the
// progress line.
type liveSink struct {
	w     *capture.Writer
	chans []meter.Channel
	obs   Observer // nil: none

	mu  sync.Mutex
	sum map[int]float64 // per port: Σ mean power of each channel block
	n   map[int]float64
}

func newLiveSink(w *capture.Writer, chans []meter.Channel) *liveSink {
	return &liveSink{w: w, chans: chans, sum: map[int]float64{}, n: map[int]float64{}}
}

func (s *liveSink) Samples(b *meter.Block) error {
	if err := s.w.Samples(b); err != nil {
		return err
	}
	if s.obs != nil {
		s.obs.Samples(b)
	}
	if b.Channel < 0 || b.Channel >= len(s.chans) || len(b.I) == 0 {
		return nil
	}
	var p float64
	for k := range b.I {
		p += float64(b.V[k]) * float64(b.I[k])
	}
	port := s.chans[b.Channel].Port
	s.mu.Lock()
	// Rails add up; each rail's mean is weighted by its own sample count.
	s.sum[port] += p
	s.n[port] += float64(len(b.I)) / float64(s.railsOf(port))
	s.mu.Unlock()
	return nil
}

func (s *liveSink) railsOf(port int) int {
	n := 0
	for _, c := range s.chans {
		if c.Port == port {
			n++
		}
	}
	return n
}

func (s *liveSink) Gap(g meter.Gap) error {
	if s.obs != nil {
		s.obs.Gap(g)
	}
	return s.w.Gap(g)
}
func (s *liveSink) Mark(m meter.MarkEcho) error { return s.w.Mark(m) }
func (s *liveSink) Event(e meter.Event) error   { return s.w.Event(e) }

func (s *liveSink) takePower() map[int]float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[int]float64{}
	for p, sum := range s.sum {
		if s.n[p] > 0 {
			out[p] = sum / s.n[p]
		}
		s.sum[p], s.n[p] = 0, 0
	}
	return out
}
