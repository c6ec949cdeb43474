package linemeter

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/idlewatt/idlewatt/meter"
)

// countSink cancels the stream once it has n samples.
type countSink struct {
	mu     sync.Mutex
	n      int
	want   int
	last   float64
	cancel func()
}

func (s *countSink) Samples(b *meter.Block) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n += b.Len()
	s.last = float64(b.I[b.Len()-1])
	if s.n >= s.want {
		s.cancel()
	}
	return nil
}
func (*countSink) Gap(meter.Gap) error       { return nil }
func (*countSink) Mark(meter.MarkEcho) error { return nil }
func (*countSink) Event(meter.Event) error   { return nil }

// TestSerialPTY opens a pty slave through go.bug.st/serial, streams lines
// written on the master, and stops on ctx while the line is idle: the
// deadline adapter must end the blocked read.
func TestSerialPTY(t *testing.T) {
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer master.Close()
	defer slave.Close()
	m, err := Open(slave.Name(), Options{Columns: CurrentRanger, Voltage: 3.3, Baud: 230400})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &countSink{want: 50, cancel: cancel}
	done := make(chan error, 1)
	go func() { done <- m.Stream(ctx, meter.StreamConfig{}, s) }()
	for k := range 50 {
		if _, err := master.Write([]byte("0.0012\n")); err != nil {
			t.Fatal(err)
		}
		if k == 10 {
			master.Write([]byte("garbage\n"))
		}
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Stream did not stop on ctx")
	}
	if s.n != 50 || s.last != 0.0012 || m.Bad().Count != 1 {
		t.Fatalf("%d samples, last %v A, bad %v", s.n, s.last, m.Bad())
	}
	// A second Stream is not ended by the first one's deadline.
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	s.mu.Lock()
	s.want, s.cancel = 55, cancel2
	s.mu.Unlock()
	go func() { done <- m.Stream(ctx2, meter.StreamConfig{}, s) }()
	master.Write([]byte("0.5\n0.5\n0.5\n0.5\n0.5\n"))
	if err := <-done; err != nil || s.n != 55 || s.last != 0.5 {
		t.Fatalf("second stream: %v, %d samples, last %v A", err, s.n, s.last)
	}
}
