package hubemu

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/idlewatt/idlewatt/internal/hostclock"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/units"
)

// Options configure an emulated hub. Zero values take the defaults noted.
type Options struct {
	Ports                   int              // drive ports, 1–8; default 2 (each has a 5 V and a 12 V rail)
	Rates                   []units.Hertz    // supported sample rates; default 100, 1000, 2000, 5000, 10000 Hz
	Rate                    units.Hertz      // WriteFast's stream rate; default 1000 Hz
	Link                    int              // link capacity in B/s for START's bandwidth check; default hub.LinkUSBCDC
	Drives                  []meter.SimDrive // one per port; default meter.ConstantDrive 5 V 80 mA, 12 V 0 mA
	Seed                    int64            // seeds faults and calibration trims
	Model, Firmware, Serial string           // identity; defaults "idlewatt hubemu", "emu-1", from Seed
	Faults                  Faults
	// ClockOffset and DriftPPM set the emulator clock against the host's:
	// emulator time = ClockOffset + host elapsed × (1 + DriftPPM/1e6).
	ClockOffset time.Duration
	DriftPPM    float64
	// BufferBytes is the hub's output buffer: during a stall, samples that
	// do not fit are lost and reported with an overrun EVENT. Default 64 KiB.
	BufferBytes int
	// Tick is the render period of the live emulator; default 5 ms.
	Tick time.Duration
}

// Faults are injected on what the hub sends.
type Faults struct {
	CorruptRate  float64 // probability per byte of being replaced by a different byte
	DropRate     float64 // probability per byte of being dropped
	TruncateRate float64 // probability per frame of being cut short
	// Every StallEvery the hub stops sending for StallFor, buffering (and
	// past BufferBytes, losing) samples; then it sends what it buffered.
	StallEvery, StallFor time.Duration
	// Every DisconnectEvery the link goes away for DisconnectFor: nothing is
	// sent, commands are ignored, samples taken meanwhile are gone.
	DisconnectEvery, DisconnectFor time.Duration
}

func (o *Options) validate() error {
	if o.Ports == 0 {
		o.Ports = 2
	}
	if o.Ports < 1 || o.Ports > 8 {
		return fmt.Errorf("hubemu: %d ports (1–8 allowed)", o.Ports)
	}
	if len(o.Rates) == 0 {
		o.Rates = []units.Hertz{100, 1000, 2000, 5000, 10000}
	}
	for _, r := range o.Rates {
		if r < 1 || r != units.Hertz(uint32(r)) {
			return fmt.Errorf("hubemu: rate %g Hz is not a positive whole number", float64(r))
		}
	}
	if o.Rate == 0 {
		o.Rate = hub.DefaultRate
	}
	if o.Link == 0 {
		o.Link = hub.LinkUSBCDC
	}
	if o.Drives == nil {
		for range o.Ports {
			o.Drives = append(o.Drives, meter.ConstantDrive{V5: 5, I5: 0.080, V12: 12})
		}
	}
	if len(o.Drives) != o.Ports {
		return fmt.Errorf("hubemu: %d drives for %d ports", len(o.Drives), o.Ports)
	}
	if o.Model == "" {
		o.Model = "idlewatt hubemu"
	}
	if o.Firmware == "" {
		o.Firmware = "emu-1"
	}
	if o.Serial == "" {
		o.Serial = fmt.Sprintf("EMU%08X", uint32(o.Seed))
	}
	f := o.Faults
	for _, p := range []float64{f.CorruptRate, f.DropRate, f.TruncateRate} {
		if p < 0 || p > 1 {
			return fmt.Errorf("hubemu: fault rate %g outside [0, 1]", p)
		}
	}
	if f.StallEvery > 0 && f.StallFor >= f.StallEvery || f.DisconnectEvery > 0 && f.DisconnectFor >= f.DisconnectEvery {
		return fmt.Errorf("hubemu: a stall/disconnect must be shorter than its period")
	}
	if o.BufferBytes == 0 {
		o.BufferBytes = 64 << 10
	}
	if o.Tick == 0 {
		o.Tick = 5 * time.Millisecond
	}
	return nil
}

// Emulator serves the hub protocol on a pseudo-terminal, like
// httptest.Server serves HTTP: New starts it, Path names the tty clients
// open, Close stops it.
type Emulator struct {
	o      Options
	master *os.File
	slave  *os.File
	path   string
	start  int64 // hostclock at New

	mu   sync.Mutex
	g    *gen
	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

// New starts an emulated hub on a new pty.
func New(o Options) (*Emulator, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	g, err := newGen(o)
	if err != nil {
		return nil, err
	}
	master, slave, path, err := openPTY()
	if err != nil {
		return nil, fmt.Errorf("hubemu: %w", err)
	}
	e := &Emulator{o: o, master: master, slave: slave, path: path, start: hostclock.Now(), g: g, stop: make(chan struct{})}
	e.wg.Add(2)
	go e.readLoop()
	go e.tickLoop()
	return e, nil
}

// Path is the tty clients open (the pty's slave side).
func (e *Emulator) Path() string { return e.path }

// EmuTime converts a host monotonic time (hostclock.Now()) into the
// emulator's clock: the duration since the emulator started, with its
// offset and drift. Simulated drives receive times on this clock.
func (e *Emulator) EmuTime(hostNs int64) time.Duration {
	return emuTime(e.o, time.Duration(hostNs-e.start))
}

func emuTime(o Options, elapsed time.Duration) time.Duration {
	return o.ClockOffset + time.Duration(float64(elapsed)*(1+o.DriftPPM/1e6))
}

// Close stops the emulator and closes the pty.
func (e *Emulator) Close() error {
	var err error
	e.once.Do(func() {
		close(e.stop)
		err = e.master.Close()
		e.wg.Wait()
		e.slave.Close()
	})
	return err
}

func (e *Emulator) readLoop() {
	defer e.wg.Done()
	sc := hub.NewScanner(e.master)
	for {
		f, err := sc.Next()
		if err == hub.ErrIdle {
			continue
		}
		if err != nil {
			return // closed
		}
		now := hostclock.Now()
		e.mu.Lock()
		e.g.setLink(time.Duration(now - e.start))
		if e.g.link != linkDown {
			e.g.handle(f, e.EmuTime(now))
			e.flush()
		}
		e.mu.Unlock()
	}
}

func (e *Emulator) tickLoop() {
	defer e.wg.Done()
	t := time.NewTicker(e.o.Tick)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
		}
		now := hostclock.Now()
		e.mu.Lock()
		e.g.setLink(time.Duration(now - e.start))
		e.g.render(e.EmuTime(now))
		e.flush()
		e.mu.Unlock()
	}
}

// flush writes what the hub has queued unless the link is stalled. A host
// that does not read loses data after a short write deadline, as a hub's
// full USB/UART buffer would; the emulator never blocks on it.
func (e *Emulator) flush() {
	g := e.g
	if g.link == linkStalled || len(g.out) == 0 {
		return
	}
	e.master.SetWriteDeadline(time.Now().Add(50 * time.Millisecond)) //nolint:errcheck // pty master is pollable
	_, err := e.master.Write(g.out)
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		return // closing
	}
	g.out = g.out[:0]
}

// WriteFast writes to w exactly what an emulated hub would send over d of
// streaming, unpaced: an IDENTITY, a CALIBRATION and the ACK of START (the
// answers to the host's IDENTIFY, READ_CAL and START with sequence numbers
// 0, 1, 2, never faulted so the stream is self-describing), then the
// sample blocks for every port at o.Rate with o's faults, stalls and
// disconnects on a virtual clock.
func WriteFast(w io.Writer, o Options, d time.Duration) error {
	if err := o.validate(); err != nil {
		return err
	}
	g, err := newGen(o)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	g.putClean(g.frame(hub.TypeIdentity, 0, g.id.Append))
	g.putClean(g.frame(hub.TypeCal, 1, g.cal.Append))
	start := hub.Start{Rate: uint32(o.Rate), PortMask: uint8(1<<o.Ports - 1)}
	if r := g.checkStart(start); r != 0 {
		return fmt.Errorf("hubemu: cannot stream %d ports at %g Hz: %s", o.Ports, float64(o.Rate), r)
	}
	t0 := emuTime(o, 0)
	g.start(int(o.Rate), start.PortMask, t0)
	ack := hub.Ack{Cmd: hub.TypeStart, Rate: start.Rate, ChanMask: g.mask}
	g.putClean(g.frame(hub.TypeAck, 2, ack.Append))
	step := 10 * time.Millisecond
	for t := time.Duration(0); t < d; {
		t = min(t+step, d)
		g.setLink(t)
		g.render(emuTime(o, t))
		if g.link != linkStalled || t == d {
			if _, err := bw.Write(g.out); err != nil {
				return err
			}
			g.out = g.out[:0]
		}
	}
	return bw.Flush()
}
