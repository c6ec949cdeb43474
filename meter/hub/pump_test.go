package hub

import (
	"bytes"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
)

type zeros struct{}

func (zeros) Read([]byte) (int, error) { return 0, nil }

// A stopped pump must end its reader even when the port never fails a
// Read (the close came too late): record once hung here at exit.
func TestPumpStopEndsReader(t *testing.T) {
	p := newPump(zeros{}, 1024, 5*time.Millisecond, nil)
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
	p := newPump(bytes.NewReader(data), 333, 5*time.Millisecond, nil)
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
// however late the reader consumes it. The test brackets each write with
// its own clock readings and checks the order of the stamps, which load
// cannot change (the pump stamps a chunk after its read returns, and reads
// "bbbb" only after the test wrote it).
func TestPumpArrivedBy(t *testing.T) {
	pr, pw := io.Pipe()
	p := newPump(pr, 1024, 5*time.Millisecond, nil)
	defer p.stop()
	defer pw.Close()
	a0 := hostclock.Now()
	pw.Write([]byte("aaaa")) //nolint:errcheck // pipe
	time.Sleep(20 * time.Millisecond)
	b0 := hostclock.Now()
	pw.Write([]byte("bbbb")) //nolint:errcheck // pipe
	// The pipe's Write returns once the pump's Read took the bytes; the
	// stamp follows. Wait for it, then read the stamps late.
	for p.ArrivedBy(8) == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(5 * time.Millisecond)
	q := hostclock.Now()
	t1, t2 := p.ArrivedBy(4), p.ArrivedBy(8)
	if t1 < a0 || t1 >= t2 || t2 < b0 || t2 > q {
		t.Fatalf("arrivals %d and %d: want the first after %d (its write), the second after %d (its write) and before %d (the query)", t1, t2, a0, b0, q)
	}
	if p.ArrivedBy(3) != t1 || p.ArrivedBy(5) != t2 || p.ArrivedBy(9) != 0 {
		t.Errorf("byte 2 at %d, byte 4 at %d, byte 8 at %d", p.ArrivedBy(3), p.ArrivedBy(5), p.ArrivedBy(9))
	}
}

// readWithin runs p.Read on its own goroutine and returns what it read, or
// fails the test after a minute: a hang guard, not a timing check.
func readWithin(t *testing.T, p *pump, b []byte) (int, error) {
	t.Helper()
	type res struct {
		n   int
		err error
	}
	ch := make(chan res, 1)
	go func() { n, err := p.Read(b); ch <- res{n, err} }()
	select {
	case r := <-ch:
		return r.n, r.err
	case <-time.After(time.Minute):
		t.Fatal("Read still waiting after a minute")
		return 0, nil
	}
}

// While hold allows it, bytes that arrive while the reader waits are not
// handed over one read at a time: a lone read waits for the reader's idle
// timeout (and is then delivered, not lost or reported idle), a steady
// trickle wakes the reader once holdFor of it arrived, and with hold false
// every read wakes the reader at once.
//
// The first part's bound is a lower one (a timer never fires early). The
// others use a pump whose idle timeout is an hour: a Read that returns at
// all was woken by the bytes, not by the timeout, whatever the load.
func TestPumpHold(t *testing.T) {
	const idle = 500 * time.Millisecond
	var hold atomic.Bool
	hold.Store(true)
	pr, pw := io.Pipe()
	p := newPump(pr, 1<<20, idle, hold.Load)
	defer p.stop()
	defer pw.Close()
	b := make([]byte, 4096)

	go func() {
		time.Sleep(20 * time.Millisecond)
		pw.Write([]byte("lone")) //nolint:errcheck // pipe
	}()
	start := time.Now()
	n, err := p.Read(b)
	if err != nil || string(b[:n]) != "lone" {
		t.Fatalf("held read: %q, %v; want \"lone\"", b[:n], err)
	}
	if el := time.Since(start); el < idle-50*time.Millisecond {
		t.Errorf("a lone held read woke the reader after %v, want about the idle %v", el, idle)
	}

	pr, pw = io.Pipe()
	p = newPump(pr, 1<<20, time.Hour, hold.Load)
	defer p.stop()
	defer pw.Close()
	stop := make(chan struct{})
	sent := make(chan int, 1)
	go func() {
		total := 0
		defer func() { sent <- total }()
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			pw.Write([]byte("x")) //nolint:errcheck // pipe
			total++
		}
	}()
	n, err = readWithin(t, p, b)
	close(stop)
	total := <-sent
	if err != nil || n == 0 {
		t.Fatalf("trickle read: %d bytes, %v", n, err)
	}
	got := n
	for got < total {
		n, err := readWithin(t, p, b)
		if err != nil || n == 0 {
			t.Fatalf("draining the trickle: %d of %d bytes, then %d, %v", got, total, n, err)
		}
		got += n
	}

	hold.Store(false)
	go func() {
		time.Sleep(20 * time.Millisecond)
		pw.Write([]byte("now")) //nolint:errcheck // pipe
	}()
	n, err = readWithin(t, p, b)
	if err != nil || string(b[:n]) != "now" {
		t.Fatalf("read with hold off: %q, %v", b[:n], err)
	}
}

// chunks returns n bytes a read, total bytes in all, then EOF.
type chunks struct{ n, left int }

func (c *chunks) Read(b []byte) (int, error) {
	if c.left == 0 {
		return 0, io.EOF
	}
	k := min(c.n, c.left, len(b))
	c.left -= k
	return k, nil
}

// Far more arrivals than arrivalKeep covers: the stale ones are dropped
// (the kept ones cover about arrivalKeep of stream and the ring), and every byte still
// kept is timed by its own read — no later than the next byte's.
func TestPumpArrivalsBounded(t *testing.T) {
	const chunk, total = 1000, 4 << 20
	p := newPump(&chunks{n: chunk, left: total}, 64<<10, 5*time.Millisecond, nil)
	b := make([]byte, 64<<10)
	got := 0
	for {
		n, err := p.Read(b)
		got += n
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if got != total {
		t.Fatalf("read %d bytes, want %d", got, total)
	}
	p.mu.Lock()
	kept := len(p.arr) - p.a0
	p.mu.Unlock()
	if want := (arrivalKeep+2*64<<10)/chunk + 3; kept > want || cap(p.arr) > 4*want+512 {
		t.Errorf("%d arrivals kept (capacity %d), want ≤ %d", kept, cap(p.arr), want)
	}
	prev := hostclock.Time(0)
	for end := int64(total - arrivalKeep/2); end <= total; end += chunk / 2 {
		at := p.ArrivedBy(end)
		if at == 0 || at < prev {
			t.Fatalf("byte %d arrived at %d, the one before at %d", end-1, at, prev)
		}
		prev = at
	}
}
