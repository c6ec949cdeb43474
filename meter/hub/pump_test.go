package hub

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"
)

type zeros struct{}

func (zeros) Read([]byte) (int, error) { return 0, nil }

// A stopped pump must end its reader even when the port never fails a
// Read (the close came too late): record once hung here at exit.
func TestPumpStopEndsReader(t *testing.T) {
	p := newPump(zeros{}, 1024, 5*time.Millisecond)
	p.stop()
	b := make([]byte, 16)
	for range 1000 {
		if _, err := p.Read(b); err != nil {
			if !errors.Is(err, errPumpStopped) {
				t.Fatalf("Read: %v, want errPumpStopped", err)
			}
			return
		}
	}
	t.Fatal("Read never failed after stop")
}

// Bytes pass through the ring in order, wrapping it, then the source's
// error; a ring smaller than the data makes the pump wait for room.
func TestPumpDeliversEverythingThenError(t *testing.T) {
	data := make([]byte, 10000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	p := newPump(bytes.NewReader(data), 333, 5*time.Millisecond)
	var got []byte
	b := make([]byte, 100)
	for {
		n, err := p.Read(b)
		got = append(got, b[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("got %d bytes, want the %d sent, in order", len(got), len(data))
	}
}

// ArrivedBy gives each byte the time its chunk was read from the port,
// however late the reader consumes it.
func TestPumpArrivedBy(t *testing.T) {
	pr, pw := io.Pipe()
	p := newPump(pr, 1024, 5*time.Millisecond)
	defer p.stop()
	defer pw.Close()
	pw.Write([]byte("aaaa")) //nolint:errcheck // pipe
	time.Sleep(20 * time.Millisecond)
	pw.Write([]byte("bbbb")) //nolint:errcheck // pipe
	time.Sleep(5 * time.Millisecond)
	t1, t2 := p.ArrivedBy(4), p.ArrivedBy(8)
	if t1 == 0 || t2.Sub(t1) < 15*time.Millisecond {
		t.Fatalf("arrivals %d and %d: want the second ≥ 15 ms after the first", t1, t2)
	}
	if p.ArrivedBy(3) != t1 || p.ArrivedBy(5) != t2 || p.ArrivedBy(9) != 0 {
		t.Errorf("byte 2 at %d, byte 4 at %d, byte 8 at %d", p.ArrivedBy(3), p.ArrivedBy(5), p.ArrivedBy(9))
	}
}
