package hubemu

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/ptyserve"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/units"
)

// Options configure an emulated hub. Zero values take the defaults noted.
// DefaultRates are the sample rates an emulator supports when Options.Rates
// is empty.
var DefaultRates = []units.Hertz{100, 1000, 2000, 5000, 10000}

// DefaultDrive is what a port holds when Options.Drives is nil: a
// constant 5 V 80 mA, 12 V 0 mA load.
var DefaultDrive meter.SimDrive = meter.ConstantDrive{V5: 5, I5: 0.080, V12: 12}

type Options struct {
	Ports int // drive ports, 1–8 (1–5 with Rail3V3); default 2 (each has a 5 V and a 12 V rail)
	// Rail3V3 gives every port a 3.3 V rail after its 5 V and 12 V ones,
	// the supply of an M.2 interposer (protocol version 3, the default
	// with it). A drive that is a meter.SimDrive3V3 loads it.
	Rail3V3                 bool
	Rates                   []units.Hertz    // supported sample rates; default 100, 1000, 2000, 5000, 10000 Hz
	Rate                    units.Hertz      // WriteFast's stream rate; default 1000 Hz
	StreamPorts             []int            // WriteFast's streamed ports; default all
	Link                    int              // link capacity in B/s for START's bandwidth check; default hub.LinkUSBCDC
	Drives                  []meter.SimDrive // one per port; default DefaultDrive on every port
	Seed                    int64            // seeds faults and calibration trims
	Model, Firmware, Serial string           // identity; defaults "idlewatt hubemu", "emu-1", from Seed
	Faults                  Faults
	// ClockOffset and DriftPPM set the emulator clock against the host's:
	// emulator time = ClockOffset + host elapsed × (1 + DriftPPM/1e6).
	ClockOffset time.Duration
	DriftPPM    float64
	// BufferBytes is the hub's output buffer: bytes queued but not yet
	// taken by the link (the pty). During a stall, or while the host does
	// not read, sample blocks that do not fit are lost whole and reported
	// with an overrun EVENT — never cut mid-frame. Default 1 MiB, about
	// 3 s of 4 ports × 2 rails at 10 kS/s: on a loaded host the pty (4 KiB
	// of line discipline per reader wake-up) can fall that far behind, and
	// the emulator should not be what loses data.
	BufferBytes int
	// Symlink is where the live emulator keeps a symlink to its pty, the
	// Path clients open; it stays put while a re-enumerating disconnect
	// replaces the pty. Default: "tty" in a new temporary directory.
	Symlink string
	// Tick is the render period of the live emulator; default 5 ms.
	Tick time.Duration
	// Protocol is the version the hub speaks: 2 (default; 3 with
	// Rail3V3), 3 (v2 that may have a 3.3 V rail) or 1 (a v1 hub: no
	// LINK, RESEND, ring or 20-bit samples).
	Protocol int
	// RingBytes is a v2 hub's ring buffer of recent samples, which RESEND
	// reads from (its depth in samples, RingBytes ÷ the bytes of one sample
	// of every streamed channel, is in the ACK of START). Default 1 MiB
	// (2.6 s of 4 ports × 2 rails at 10 kS/s in 20-bit samples); negative:
	// no ring (IDENTITY says 0, RESEND is refused).
	RingBytes int
	// MaxFrame is the largest frame the hub sends or takes (IDENTITY v2);
	// default and at most hub.MaxFrame. WriteFast streams frames of
	// min(MaxFrame, hub.DefaultMaxFrame), as a host would agree by LINK.
	MaxFrame int
	// Format is WriteFast's sample format: 0 for what a host asks by
	// default (packed 20-bit if Formats lists it, else 20-bit if listed,
	// else 16-bit),
	// hub.Format20, hub.Format16.
	Format uint8
	// Formats is a v2 hub's IDENTITY format mask; default every format
	// (hub.FormatBit16 | hub.FormatBit20 | hub.FormatBitPacked). Without
	// FormatBitPacked it is a v2 hub from before format 3.
	Formats uint8
	// CurrentLSB and WideLSB set the nominal current LSB of each rail's
	// sensor — 5 V, 12 V, 3.3 V; IDENTITY's, before each channel's ±0.5 %
	// trim, which READ_CAL states — in the 16-bit and the 20-bit formats;
	// 0 keeps the default (16-bit 50, 100, 50 µA; 20-bit 8, 10, 4 µA).
	// Readings are rounded to the channel's LSB, so a coarse one leaves a
	// DevSlp floor of a few tenths of a mW under one count; a drive beyond
	// the range (32 767 or 524 287 counts) is clamped and reported by
	// OVER_CURRENT.
	CurrentLSB, WideLSB [3]units.Amps
	// Accuracy is what the hub states of its channels' accuracy
	// (READ_ACCURACY; WriteFast writes it after the CALIBRATION): a
	// meter's datasheet limits, within which its simulated drives' gain
	// and offset errors lie (drivesim's drift family). Empty: the hub does
	// not know READ_ACCURACY and NAKs it (unknown command).
	Accuracy []hub.AccEntry
	// Pace makes the live emulator send at most Link bytes per second, as
	// a UART of that speed would (Link = hub.LinkUART921600: 921,600
	// baud); without it the pty takes bytes as fast as the host reads.
	Pace bool
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
	// sent, commands are ignored, samples taken meanwhile are gone; the
	// sample index keeps counting.
	DisconnectEvery, DisconnectFor time.Duration
	// Reenumerate makes the live emulator's disconnects real, as a USB
	// device re-enumerating: the pty is closed (the host's reads fail) and
	// Path vanishes; a new pty appears at Path when the link returns, the
	// hub still streaming and counting.
	Reenumerate bool
	// Inject sends hostile frames mid-stream, each once (inject.go): a good
	// CRC around a payload the protocol does not allow.
	Inject []Injection
}

// validate fills in the defaults and checks the options, in steps whose
// order matters: a step's defaults are what the later ones check.
func (o *Options) validate() error {
	for _, step := range []func() error{o.validateHub, o.validateFaults, o.validateProtocol, o.validateLSBs} {
		if err := step(); err != nil {
			return err
		}
	}
	return o.validateInject()
}

// validateHub: ports, ACCURACY entries, rates, link, drives, identity.
func (o *Options) validateHub() error {
	if o.Ports == 0 {
		o.Ports = 2
	}
	if o.Ports < 1 || o.Ports > 8 {
		return fmt.Errorf("hubemu: %d ports (1–8 allowed)", o.Ports)
	}
	if len(o.Accuracy) > 255 {
		// ACCURACY's entry count is one byte. (The entries themselves are
		// not checked: a hostile hub's are what the host's check is for.)
		return fmt.Errorf("hubemu: %d ACCURACY entries (at most 255)", len(o.Accuracy))
	}
	if len(o.Rates) == 0 {
		o.Rates = slices.Clone(DefaultRates)
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
			o.Drives = append(o.Drives, DefaultDrive)
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
	return nil
}

// validateFaults: fault rates and periods, the buffer, the tick.
func (o *Options) validateFaults() error {
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
		o.BufferBytes = 1 << 20
	}
	if o.Tick == 0 {
		o.Tick = 5 * time.Millisecond
	}
	return nil
}

// validateProtocol: the protocol version (and the 3.3 V rail it allows),
// the ring, the frame size, the format mask.
func (o *Options) validateProtocol() error {
	if o.Protocol == 0 {
		o.Protocol = 2
		if o.Rail3V3 {
			o.Protocol = 3
		}
	}
	if o.Protocol < hub.ProtocolV1 || o.Protocol > hub.ProtocolVersion {
		return fmt.Errorf("hubemu: protocol version %d (1 to %d)", o.Protocol, hub.ProtocolVersion)
	}
	if o.Rail3V3 && (o.Protocol < 3 || o.Ports > 5) {
		return fmt.Errorf("hubemu: a 3.3 V rail needs protocol version 3 and at most 5 ports (3 rails × ports ≤ 16 channels); have version %d, %d ports", o.Protocol, o.Ports)
	}
	if o.RingBytes == 0 {
		o.RingBytes = 1 << 20
	}
	if o.MaxFrame == 0 {
		o.MaxFrame = hub.MaxFrame
	}
	if o.MaxFrame < hub.MinMaxFrame || o.MaxFrame > hub.MaxFrame {
		return fmt.Errorf("hubemu: maximum frame %d bytes outside %d–%d", o.MaxFrame, hub.MinMaxFrame, hub.MaxFrame)
	}
	if o.Formats == 0 {
		o.Formats = hub.FormatBit16 | hub.FormatBit20 | hub.FormatBitPacked
	}
	if o.Formats&hub.FormatBit16 == 0 || o.Formats&^(hub.FormatBit16|hub.FormatBit20|hub.FormatBitPacked) != 0 ||
		o.Formats&hub.FormatBitPacked != 0 && o.Formats&hub.FormatBit20 == 0 {
		return fmt.Errorf("hubemu: format mask 0x%02X (16-bit always; packed only with 20-bit)", o.Formats)
	}
	return nil
}

// validateLSBs: each rail's current LSBs, the sample format.
func (o *Options) validateLSBs() error {
	for j := range allRails {
		// What the hub driver's bounds accept once trimmed by up to 0.5 %,
		// and (16-bit) a CAL register 0.00512 / (LSB × shunt) of 1–65535.
		lsb, wide := float64(o.CurrentLSB[j]), float64(o.WideLSB[j])
		shunt := float64(allRails[j].shuntMicro) * 1e-6
		if lsb != 0 && !(lsb >= 0.00512/(65535*shunt)*1.005 && lsb <= hub.MaxFullScaleA/32767/1.005) {
			return fmt.Errorf("hubemu: 16-bit current LSB %v of rail %s outside %.3g–%.3g A", o.CurrentLSB[j], allRails[j].rail,
				0.00512/(65535*shunt)*1.005, hub.MaxFullScaleA/32767/1.005)
		}
		if wide != 0 && !(wide >= 1e-9 && wide <= hub.MaxFullScaleA/(1<<19-1)/1.005) {
			return fmt.Errorf("hubemu: 20-bit current LSB %v of rail %s outside 1 nA–%.4g A", o.WideLSB[j], allRails[j].rail, hub.MaxFullScaleA/(1<<19-1)/1.005)
		}
	}
	if o.Format != 0 && (hub.FormatWidth(o.Format) == 0 || o.Formats&(1<<(o.Format-1)) == 0) {
		return fmt.Errorf("hubemu: sample format %d (1 = 16-bit, 2 = 20-bit, 3 = packed 20-bit; one of the format mask)", o.Format)
	}
	return nil
}

// Emulator serves the hub protocol on a pseudo-terminal, like
// httptest.Server serves HTTP: New starts it, Path names the tty clients
// open, Close stops it.
type Emulator struct {
	o      Options
	link   string         // Path: a symlink to the current pty's slave
	tmpDir string         // removed by Close, if the emulator made it
	start  hostclock.Time // at New
	stop   chan struct{}
	wake   chan struct{} // cap 1: the writer has bytes to send
	wg     sync.WaitGroup
	once   sync.Once

	mu        sync.Mutex
	g         *gen
	master    *os.File // nil while unplugged
	slave     *os.File
	ptsName   string
	downUntil hostclock.Time // hostclock: Unplug's outage ends
	closed    bool           // Close has begun: never plug a new pty
	spare     []byte
	unplugs   int
	lineFree  hostclock.Time // with Pace, when the line has sent what was written (the writer's own)
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
	e := &Emulator{o: o, link: o.Symlink, start: hostclock.Now(), g: g, stop: make(chan struct{}), wake: make(chan struct{}, 1)}
	if e.link != "" {
		// The link is renamed into place and removed at the end: whatever
		// is at its path (and path.new) must be a symbolic link, never a
		// file the emulator would destroy.
		for _, p := range []string{e.link, e.link + ".new"} {
			if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink == 0 {
				return nil, fmt.Errorf("hubemu: Symlink %s: %s exists and is not a symbolic link; refusing to replace it", e.link, p)
			}
		}
	}
	if e.link == "" {
		if e.tmpDir, err = os.MkdirTemp("", "hubemu-"); err != nil {
			return nil, fmt.Errorf("hubemu: %w", err)
		}
		e.link = filepath.Join(e.tmpDir, "tty")
	}
	e.mu.Lock()
	err = e.plug()
	e.mu.Unlock()
	if err != nil {
		if e.tmpDir != "" {
			os.RemoveAll(e.tmpDir)
		}
		return nil, fmt.Errorf("hubemu: %w", err)
	}
	e.wg.Add(2)
	go e.writeLoop()
	go e.tickLoop()
	return e, nil
}

// Path is the tty clients open: a symlink to the pty's slave side, kept
// at the same place across re-enumerating disconnects.
func (e *Emulator) Path() string { return e.link }

// Unplug takes the hub off the host now for d, as a USB device that
// re-enumerates: the pty closes (the host's reads fail), Path vanishes, and
// after d a new pty appears at Path. The hub keeps sampling and counting;
// samples due meanwhile are lost and show as an exact gap.
func (e *Emulator) Unplug(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.downUntil = hostclock.Now().Add(d)
	e.unplug()
}

// Unplugs returns how many times the pty has been closed for a disconnect.
func (e *Emulator) Unplugs() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.unplugs
}

// plug opens a new pty and points the symlink at it. e.mu is held.
func (e *Emulator) plug() error {
	pair, err := ptyserve.Open()
	if err != nil {
		return err
	}
	m, s := pair.Master, pair.Slave
	tmp := e.link + ".new"
	removeLink(tmp, "")
	if err := os.Symlink(s.Name(), tmp); err != nil {
		m.Close()
		s.Close()
		return err
	}
	if err := os.Rename(tmp, e.link); err != nil {
		m.Close()
		s.Close()
		return err
	}
	e.master, e.slave, e.ptsName = m, s, s.Name()
	e.wg.Add(1)
	go e.readLoop(m)
	return nil
}

// unplug closes the pty and removes the symlink. e.mu is held.
func (e *Emulator) unplug() {
	if e.master == nil {
		return
	}
	removeLink(e.link, e.ptsName)
	e.master.Close()
	e.slave.Close()
	e.master, e.slave = nil, nil
	e.unplugs++
	e.g.out = e.g.out[:0] // what was queued is lost with the link
}

// removeLink removes path if it is a symbolic link (to target, unless
// target is ""): the emulator removes only links it made, never a file put
// at their place.
func removeLink(path, target string) {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return
	}
	if target != "" {
		if t, err := os.Readlink(path); err != nil || t != target {
			return
		}
	}
	os.Remove(path)
}

// EmuTime converts a host monotonic time (hostclock.Now()) into the
// emulator's clock: the duration since the emulator started, with its
// offset and drift. Simulated drives receive times on this clock.
func (e *Emulator) EmuTime(host hostclock.Time) time.Duration {
	return emuTime(e.o, host.Sub(e.start))
}

func emuTime(o Options, elapsed time.Duration) time.Duration {
	return o.ClockOffset + time.Duration(float64(elapsed)*(1+o.DriftPPM/1e6))
}

// SampleTime is the emulator time at which sample idx of the current
// stream is taken (ok false when not streaming): what a test or a
// simulated host needs to put its drive's events on the samples' clock.
func (e *Emulator) SampleTime(idx uint64) (t time.Duration, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.g.streaming {
		return 0, false
	}
	return e.g.sampleTime(idx), true
}

// StreamStart is the emulator time of sample index 0 of the stream
// running or last run, and how many streams were started afresh (a START
// that resumes one does not count): with exactly one, every sample index
// the host recorded is on that clock, exactly — a truth comparison needs
// no mark echo to place it. starts 0: never streamed.
func (e *Emulator) StreamStart() (t0 time.Duration, starts int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.g.e0, e.g.starts
}

// Close stops the emulator and closes the pty.
func (e *Emulator) Close() error {
	var err error
	e.once.Do(func() {
		close(e.stop)
		e.mu.Lock()
		e.closed = true
		if e.master != nil {
			err = e.master.Close()
			e.slave.Close()
			e.master, e.slave = nil, nil
		}
		removeLink(e.link, e.ptsName)
		e.mu.Unlock()
		e.wg.Wait()
		if e.tmpDir != "" {
			os.RemoveAll(e.tmpDir)
		}
	})
	return err
}

func (e *Emulator) readLoop(master *os.File) {
	defer e.wg.Done()
	sc := hub.NewScanner(master)
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
		if e.master == master {
			e.setLink(now)
			e.g.quiet = false
			if e.g.link != linkDown {
				e.g.handle(f, e.EmuTime(now))
				e.kick()
			}
		}
		e.mu.Unlock()
	}
}

// setLink applies the fault schedule and Unplug at host time now, closing
// or reopening the pty for a re-enumerating disconnect. e.mu is held.
func (e *Emulator) setLink(now hostclock.Time) {
	g := e.g
	g.setLink(now.Sub(e.start))
	unplugged := now < e.downUntil || g.link == linkDown && e.o.Faults.Reenumerate
	if unplugged {
		g.forceDown()
		e.unplug()
	} else if e.master == nil && !e.closed {
		// (A tick that raced Close must not open a pty nobody closes:
		// its read loop would keep Close waiting for ever.)
		if err := e.plug(); err != nil {
			g.forceDown() // try again next tick
		} else if e.o.Protocol >= 2 {
			g.quiet = true
		}
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
		e.setLink(now)
		e.g.render(e.EmuTime(now) - e.g.lag)
		e.kick()
		e.mu.Unlock()
	}
}

// kick wakes the writer if the hub has bytes to send and the link is not
// stalled. e.mu is held.
func (e *Emulator) kick() {
	if e.g.link == linkStalled || len(e.g.out) == 0 || e.master == nil {
		return
	}
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// writeLoop sends what the hub queued. It blocks in Write while the host
// is not reading, as a UART or USB endpoint holds off a hub; meanwhile the
// hub's queue (BufferBytes, counting the bytes in flight) fills and sample
// blocks that do not fit are dropped whole and reported by an OVERRUN.
// Bytes are never dropped mid-frame, so a slow host sees exact gaps and
// no CRC errors.
func (e *Emulator) writeLoop() {
	defer e.wg.Done()
	for {
		select {
		case <-e.stop:
			return
		case <-e.wake:
		}
		e.mu.Lock()
		g, m := e.g, e.master
		if g.link == linkStalled || m == nil || len(g.out) == 0 {
			e.mu.Unlock()
			continue
		}
		buf := g.out
		g.out, e.spare = e.spare[:0], nil
		g.busy = len(buf)
		e.mu.Unlock()

		err := e.send(m, buf) // err: unplugged or closing; the bytes are lost with the link

		e.mu.Lock()
		g.busy = 0
		e.spare = buf[:0]
		if err == nil {
			e.kick()
		}
		e.mu.Unlock()
	}
}

// paceChunk is what a paced emulator writes at once: about 2.8 ms of a
// 921,600-baud UART, so the host sees bytes arrive as from a UART's FIFO.
const paceChunk = 256

// send writes buf to the pty; with Pace no faster than o.Link bytes per
// second, each chunk waiting until the line would be free.
func (e *Emulator) send(m *os.File, buf []byte) error {
	if !e.o.Pace {
		_, err := m.Write(buf)
		return err
	}
	for len(buf) > 0 {
		n := min(len(buf), paceChunk)
		if wait := e.lineFree.Sub(hostclock.Now()); wait > 0 {
			select {
			case <-e.stop:
				return os.ErrClosed
			case <-time.After(wait):
			}
		}
		if _, err := m.Write(buf[:n]); err != nil {
			return err
		}
		e.lineFree = max(e.lineFree, hostclock.Now()).Add(time.Duration(int64(n) * 1e9 / int64(e.o.Link)))
		buf = buf[n:]
	}
	return nil
}

// WriteFast writes to w exactly what an emulated hub would send over d of
// streaming, unpaced: an IDENTITY, a CALIBRATION, an ACCURACY when
// o.Accuracy states one, and the ACK of START (the
// answers to the host's IDENTIFY, READ_CAL, READ_ACCURACY and START with sequence numbers
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
	seq := byte(0)
	g.putClean(g.frame(hub.TypeIdentity, seq, g.id.Append))
	start := hub.Start{Rate: uint32(o.Rate), PortMask: uint8(1<<o.Ports - 1)}
	if len(o.StreamPorts) > 0 {
		start.PortMask = 0
		for _, p := range o.StreamPorts {
			if p < 1 || p > o.Ports {
				return fmt.Errorf("hubemu: stream port %d (the hub has ports 1–%d)", p, o.Ports)
			}
			start.PortMask |= 1 << (p - 1)
		}
	}
	if o.Protocol >= 2 {
		seq++
		g.linkVer, g.maxFrame = 2, min(o.MaxFrame, hub.DefaultMaxFrame)
		ack := hub.Ack{Cmd: hub.TypeLink, Version: 2, MaxFrame: uint16(g.maxFrame)}
		g.putClean(g.frame(hub.TypeAck, seq, ack.Append))
		start.Format = o.Format
		if start.Format == 0 {
			start.Format = hub.Format20
			switch {
			case o.Formats&hub.FormatBitPacked != 0:
				start.Format = hub.FormatPacked
			case o.Formats&hub.FormatBit20 == 0: // a 16-bit-only hub
				start.Format = hub.Format16
			}
		}
	}
	seq++
	g.cal.Wide = g.linkVer >= 2
	g.putClean(g.frame(hub.TypeCal, seq, g.cal.Append))
	if len(o.Accuracy) > 0 {
		seq++
		acc := hub.Accuracy{Entries: o.Accuracy}
		g.putClean(g.frame(hub.TypeAccuracy, seq, acc.Append))
	}
	if r := g.checkStart(start); r != 0 {
		return fmt.Errorf("hubemu: cannot stream %d ports at %g Hz: %s", o.Ports, float64(o.Rate), r)
	}
	t0 := emuTime(o, 0)
	g.start(int(o.Rate), start.PortMask, start.Format, t0)
	seq++
	ack := g.ackStart(start)
	g.putClean(g.frame(hub.TypeAck, seq, ack.Append))
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
