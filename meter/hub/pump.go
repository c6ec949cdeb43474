package hub

import (
	"errors"
	"io"
	"os"
	"sync"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
)

// pump reads a port on its own goroutine into a fixed ring, so the kernel's
// tty buffer is drained even while the decoder or the sink is slow — a
// capture write, a GC pause, a CPU shared with the workload being measured.
// Bytes wait in the ring instead of the hub's buffer overrunning. Memory is
// bounded: with the ring full the pump stops reading, and the hub's own
// buffer (then its OVERRUN event) takes over, so a loss is still exact.
//
// Read (the decoder side) returns (0, nil) after idle with nothing to read,
// the way a timed-out serial read does, so the Scanner reports ErrIdle.
// One goroutine reads; the pump goroutine writes.
//
// While hold says so (a stream runs and no command awaits its answer), the
// pump does not wake a waiting reader for every read: it wakes it once the
// bytes it held back are holdFor old or holdBytes long, and a reader that
// waits idle takes them anyway. At a hub's 200 reads a second each wake-up
// was a goroutine hand-off and a thread woken to steal it — most of
// record's CPU after the reads themselves (docs/benchmarks.md, "record
// CPU"). Bytes are still read, and their arrival timed, as they come.
type pump struct {
	src  io.Reader
	idle time.Duration
	hold func() bool // nil: never hold

	// The pump goroutine's own: bytes filled when the reader was last
	// woken, and the arrival of the first byte held back since (0: none).
	sigW     int64
	heldFrom hostclock.Time

	mu   sync.Mutex
	buf  []byte
	r, w int64 // bytes consumed, bytes filled; r ≤ w ≤ r+len(buf)
	err  error // the source's error, delivered once its bytes are read

	// arr is when bytes arrived: arrival k covers stream bytes up to
	// arr[k].end, read from the port at arr[k].t (hostclock). A mark echo
	// is timed by its bytes' arrival, not by when the decoder reached it
	// behind the frames of the same read (ArrivedBy).
	arr []arrival
	a0  int // arr[:a0] are older than arrivalKeep, dropped in bulk

	ready chan struct{} // cap 1: bytes or an error arrived
	space chan struct{} // cap 1: bytes were consumed
	quit  chan struct{}
	timer *time.Timer
}

type arrival struct {
	end int64
	t   hostclock.Time
}

// arrivalKeep is how far behind the consumed bytes arrival times are kept:
// the scanner may still hold that much read but not yet framed.
const arrivalKeep = 256 << 10

// ArrivedBy returns the host time at which stream byte end-1 had been read
// from the port (0 if no longer known).
func (p *pump) ArrivedBy(end int64) hostclock.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, a := range p.arr[p.a0:] {
		if a.end >= end {
			return a.t
		}
	}
	return 0
}

// holdFor and holdBytes bound what the pump holds back from a waiting
// reader while hold says it may: a stream's samples reach the sink at most
// this much later (a frame's time stamps are the meter's, a mark echo's the
// arrival's, so nothing recorded changes).
const (
	holdFor   = 20 * time.Millisecond
	holdBytes = 32 << 10
)

// newPump starts a pump reading src into a ring of size bytes; hold (nil:
// never) says when it may hold arrived bytes back from a waiting reader.
func newPump(src io.Reader, size int, idle time.Duration, hold func() bool) *pump {
	p := &pump{src: src, idle: idle, hold: hold, buf: make([]byte, size), ready: make(chan struct{}, 1),
		space: make(chan struct{}, 1), quit: make(chan struct{}), timer: time.NewTimer(time.Hour)}
	p.timer.Stop()
	go p.run()
	return p
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// stop ends the pump goroutine once its current Read returns; closing the
// port is what unblocks that Read.
func (p *pump) stop() {
	select {
	case <-p.quit:
	default:
		close(p.quit)
	}
}

// errPumpStopped is what Read returns once the pump was stopped and its
// bytes are consumed, so the reader ends even if the port's Close came
// too late to fail a Read.
var errPumpStopped = errors.New("hub: port reader stopped")

func (p *pump) run() {
	defer func() {
		p.mu.Lock()
		if p.err == nil {
			p.err = errPumpStopped
		}
		p.mu.Unlock()
		signal(p.ready)
	}()
	zeros := 0
	for {
		p.mu.Lock()
		free := int64(len(p.buf)) - (p.w - p.r)
		at := int(p.w % int64(len(p.buf)))
		p.mu.Unlock()
		if free == 0 {
			select {
			case <-p.space:
				continue
			case <-p.quit:
				return
			}
		}
		// Only the region past w is written, which Read never touches.
		n, err := p.src.Read(p.buf[at : at+int(min(free, int64(len(p.buf)-at)))])
		if n == 0 && errors.Is(err, os.ErrDeadlineExceeded) {
			err = nil
		}
		now := hostclock.Now()
		p.mu.Lock()
		p.w += int64(n)
		if n > 0 {
			for p.a0 < len(p.arr) && p.arr[p.a0].end < p.r-arrivalKeep {
				p.a0++
			}
			// Moved down only once half is stale, not a few hundred arrivals
			// moved on every read.
			if p.a0 >= 256 && 2*p.a0 >= len(p.arr) {
				p.arr = append(p.arr[:0], p.arr[p.a0:]...)
				p.a0 = 0
			}
			p.arr = append(p.arr, arrival{end: p.w, t: now})
		}
		if err != nil {
			p.err = err
		}
		w := p.w
		p.mu.Unlock()
		if n > 0 || err != nil {
			p.wake(w, now, err != nil)
		}
		if err != nil {
			return
		}
		if n == 0 {
			// A serial port's (0, nil) comes after its read timeout; a reader
			// that returns it at once must not spin.
			if zeros++; zeros > 3 {
				time.Sleep(time.Millisecond)
			}
		} else {
			zeros = 0
		}
		select {
		case <-p.quit:
			return
		default:
		}
	}
}

// wake tells the reader that bytes (filled up to w, the last read at now)
// or an error arrived — at once unless they may be held back.
func (p *pump) wake(w int64, now hostclock.Time, failed bool) {
	if !failed && p.hold != nil && p.hold() && w-p.sigW < int64(min(holdBytes, len(p.buf)/4)) &&
		(p.heldFrom == 0 || now.Sub(p.heldFrom) < holdFor) {
		if p.heldFrom == 0 {
			p.heldFrom = max(now, 1)
		}
		return
	}
	p.sigW, p.heldFrom = w, 0
	signal(p.ready)
}

// Read copies buffered bytes to b. With none, it waits up to idle and then
// returns (0, nil); after the source failed and its bytes are consumed it
// returns the source's error.
func (p *pump) Read(b []byte) (int, error) {
	timedOut := false
	for {
		p.mu.Lock()
		if avail := p.w - p.r; avail > 0 {
			at := int(p.r % int64(len(p.buf)))
			n := copy(b, p.buf[at:at+int(min(avail, int64(len(p.buf)-at)))])
			p.r += int64(n)
			p.mu.Unlock()
			signal(p.space)
			return n, nil
		}
		err := p.err
		p.mu.Unlock()
		if err != nil {
			return 0, err
		}
		if timedOut || len(b) == 0 {
			return 0, nil
		}
		p.timer.Reset(p.idle)
		select {
		case <-p.ready: // possibly stale: look again, still within idle
			p.timer.Stop()
		case <-p.timer.C:
			timedOut = true
		}
	}
}
