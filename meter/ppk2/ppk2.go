package ppk2

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/serialport"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// Command bytes (raw, unframed; only GetMetadata answers).
const (
	CmdAverageStart     = 0x06
	CmdAverageStop      = 0x07
	CmdDeviceRunningSet = 0x0C
	CmdRegulatorSet     = 0x0D
	CmdSetPowerMode     = 0x11
	CmdGetMetadata      = 0x19
	CmdReset            = 0x20
	CmdSetUserGains     = 0x25
)

// Mode is the PPK2's power mode.
type Mode int

const (
	// ModeAuto: source meter for a device, the metadata's mode for a dump.
	ModeAuto    Mode = 0
	AmpereMeter Mode = 1 // measures a DUT powered by an external supply
	SourceMeter Mode = 2 // powers the DUT from its own regulator
)

func (m Mode) String() string {
	switch m {
	case AmpereMeter:
		return "ampere"
	case SourceMeter:
		return "source"
	}
	return "auto"
}

// Options configure Open. The zero value is a source meter at the metadata's
// VDD with the Nordic app's metadata behaviour and the spike filter on.
type Options struct {
	Mode Mode
	// Supply is, in source mode, the regulator set-point (0.8–5 V; 0 = the
	// metadata's VDD). In ampere mode the PPK2 cannot measure the DUT's
	// voltage, so Supply is the external supply voltage used for power and
	// is required.
	Supply    units.Volts
	Behaviour Behaviour
	// NoSpikeFilter turns off the host-side range-switch filter.
	NoSpikeFilter bool
	// KeepDUTOff leaves DUT power off at open (the default switches it on in
	// both modes, since a drive must be powered to be measured).
	KeepDUTOff bool
	// Timeout bounds the wait for the metadata answer. Default 3 s.
	Timeout time.Duration
}

// PPK2 is an open Power Profiler Kit II, or a dump of one's stream.
type PPK2 struct {
	opts   Options
	meta   Metadata
	mode   Mode
	vddMV  float64 // regulator set-point used in the conversion
	volts  units.Volts
	path   string
	closer io.Closer

	rw   io.ReadWriter // device; nil for a dump
	dump io.Reader     // dump: the stream after the metadata
	wmu  sync.Mutex

	streaming atomic.Bool
	outIndex  atomic.Uint64
	mu        sync.Mutex
	stats     meter.Stats
	events    []meter.Event // raised outside Stream, delivered by it
}

var (
	_ meter.Meter     = (*PPK2)(nil)
	_ meter.PortPower = (*PPK2)(nil)
)

// Open opens the PPK2 at path (its CDC-ACM tty, e.g. /dev/ttyACM0). If path
// is a regular file it is read as a raw device→host dump: metadata text
// through END, then sample words; Stream decodes it as fast as it can and
// returns nil at its end.
func Open(path string, opts Options) (*PPK2, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("ppk2: %w: %v", meter.ErrNoDevice, err)
	}
	if fi.Mode().IsRegular() {
		return openDump(path, opts)
	}
	// The PPK2 ignores the baud rate; 115200 is what hosts use.
	f, err := serialport.Open(path, 115200)
	if errors.Is(err, serialport.ErrInUse) {
		return nil, fmt.Errorf("ppk2: %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("ppk2: %w: %v", meter.ErrNoDevice, err)
	}
	p, err := New(f, opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	p.path, p.closer = path, f
	return p, nil
}

type deadliner interface{ SetReadDeadline(time.Time) error }

// New runs the host start-up sequence on rw (any byte stream to a PPK2):
// stop, GetMetadata, RegulatorSet, user gains, power mode, DUT power. If rw
// has SetReadDeadline it is used for the timeout and for stopping Stream;
// otherwise Stream stops on ctx by closing rw if it is an io.Closer.
func New(rw io.ReadWriter, opts Options) (*PPK2, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 3 * time.Second
	}
	p := &PPK2{opts: opts, rw: rw, path: "(stream)"}
	// A device left streaming by an earlier host would interleave samples
	// with the metadata: stop it and drain first.
	if err := p.write(CmdAverageStop); err != nil {
		return nil, fmt.Errorf("ppk2: %w: %v", meter.ErrNoDevice, err)
	}
	p.drain()
	if err := p.write(CmdGetMetadata); err != nil {
		return nil, fmt.Errorf("ppk2: %w: %v", meter.ErrNoDevice, err)
	}
	text, err := p.readMetadata(rw)
	if err != nil {
		return nil, err
	}
	if p.meta, err = ParseMetadata(text, opts.Behaviour); err != nil {
		return nil, fmt.Errorf("%w: %v", meter.ErrProtocol, err)
	}
	if err := p.meta.Check(); err != nil {
		return nil, err
	}
	p.mode = opts.Mode
	if p.mode == ModeAuto {
		p.mode = SourceMeter
	}
	if err := p.setup(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *PPK2) setup() error {
	if p.mode != AmpereMeter && p.mode != SourceMeter {
		return fmt.Errorf("ppk2: mode %d: %w (1 = ampere, 2 = source)", p.mode, meter.ErrUnsupported)
	}
	p.vddMV = float64(p.meta.VDD)
	if p.mode == SourceMeter && p.opts.Supply > 0 {
		p.vddMV = math.Round(float64(p.opts.Supply) * 1000)
	}
	if p.vddMV < 800 || p.vddMV > 5000 {
		return fmt.Errorf("ppk2: supply %.0f mV outside 800–5000 mV: %w", p.vddMV, meter.ErrUnsupported)
	}
	p.volts = units.Volts(p.vddMV / 1000)
	if p.mode == AmpereMeter {
		if p.opts.Supply <= 0 {
			return fmt.Errorf("ppk2: ampere mode needs Options.Supply, the external supply voltage (the PPK2 cannot measure it)")
		}
		p.volts = p.opts.Supply
	}
	if p.rw == nil {
		return nil
	}
	mv := int(p.vddMV)
	if err := p.write(CmdRegulatorSet, byte(mv>>8), byte(mv)); err != nil {
		return err
	}
	badUG := false
	for _, g := range p.meta.UG {
		badUG = badUG || g < 0.9 || g > 1.1
	}
	if badUG {
		for r := range Ranges {
			b := []byte{CmdSetUserGains, byte(r), 0, 0, 0, 0}
			binary.LittleEndian.PutUint32(b[2:], math.Float32bits(1))
			if err := p.write(b...); err != nil {
				return err
			}
			p.meta.UG[r] = 1
		}
	}
	if err := p.write(CmdSetPowerMode, byte(p.mode)); err != nil {
		return err
	}
	if !p.opts.KeepDUTOff {
		return p.write(CmdDeviceRunningSet, 1)
	}
	return nil
}

const maxMetadata = 64 << 10

func (p *PPK2) readMetadata(r io.Reader) ([]byte, error) {
	d, _ := r.(deadliner)
	deadline := time.Now().Add(p.opts.Timeout)
	if d != nil {
		_ = d.SetReadDeadline(deadline)
		defer d.SetReadDeadline(time.Time{})
	}
	var text []byte
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		text = append(text, buf[:n]...)
		if end := metaEnd(text); end >= 0 {
			return text[:end], nil
		}
		if len(text) > maxMetadata {
			return nil, fmt.Errorf("ppk2: %w: no END in the first %d bytes of metadata", meter.ErrProtocol, len(text))
		}
		if err != nil {
			if len(text) == 0 {
				return nil, fmt.Errorf("ppk2: %w: no metadata within %v: %v", meter.ErrNoDevice, p.opts.Timeout, err)
			}
			return nil, fmt.Errorf("ppk2: %w: metadata ended after %d bytes without END: %v", meter.ErrProtocol, len(text), err)
		}
	}
}

// drain discards whatever arrives until the line is quiet for 50 ms (at
// most 1 s); only possible when reads can time out.
func (p *PPK2) drain() {
	d, ok := p.rw.(deadliner)
	if !ok {
		return
	}
	defer d.SetReadDeadline(time.Time{})
	buf := make([]byte, 4096)
	stop := time.Now().Add(time.Second)
	for time.Now().Before(stop) {
		_ = d.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		n, err := p.rw.Read(buf)
		if n == 0 || err != nil {
			return
		}
	}
}

func openDump(path string, opts Options) (*PPK2, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ppk2: %w", err)
	}
	br := bufio.NewReaderSize(f, 1<<20)
	head, _ := br.Peek(maxMetadata)
	end := metaEnd(head)
	if end < 0 {
		f.Close()
		return nil, fmt.Errorf("ppk2: dump %s: %w: no END in its first %d bytes", path, meter.ErrProtocol, len(head))
	}
	meta, err := ParseMetadata(head[:end], opts.Behaviour)
	if err == nil {
		err = meta.Check()
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("ppk2: dump %s: %w", path, err)
	}
	_, _ = br.Discard(end)
	p := &PPK2{opts: opts, meta: meta, mode: opts.Mode, dump: br, path: path, closer: f}
	if p.mode == ModeAuto {
		p.mode = Mode(meta.Mode)
		if p.mode != AmpereMeter {
			p.mode = SourceMeter
		}
	}
	if err := p.setup(); err != nil {
		f.Close()
		return nil, err
	}
	return p, nil
}

func (p *PPK2) write(b ...byte) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	_, err := p.rw.Write(b)
	return err
}

// Metadata returns the parsed metadata (with user gains as set at open).
func (p *PPK2) Metadata() Metadata { return p.meta }

// Mode returns the power mode in use.
func (p *PPK2) Mode() Mode { return p.mode }

// Rates lists the output rates Stream accepts: 100 kS/s divided by a whole
// number of raw samples per output sample.
var rates = []units.Hertz{100_000, 50_000, 20_000, 10_000, 5_000, 2_000, 1_000, 500, 100, 10, 1}

// Info implements meter.Meter.
func (p *PPK2) Info() meter.Info {
	rail := meter.RailOther
	switch {
	case math.Abs(float64(p.volts)-3.3) < 0.05:
		rail = meter.Rail3V3
	case math.Abs(float64(p.volts)-5) < 0.05:
		rail = meter.Rail5V
	}
	caps := []string{"logic"}
	if p.rw != nil {
		caps = append(caps, "port_power")
	} else {
		caps = append(caps, "dump")
	}
	return meter.Info{
		Kind:     "ppk2",
		Model:    "Nordic PPK2 (" + p.mode.String() + " meter)",
		Firmware: fmt.Sprintf("hw %d", p.meta.HW),
		Serial:   p.path,
		Ports:    1,
		Channels: []meter.Channel{{Port: 1, Rail: rail, VoltLSB: 0.001,
			CurrentLSB: units.Amps(4 * adcMult / p.meta.R[0])}},
		Rates:        rates,
		MaxVoltage:   5,
		MaxCurrent:   1,
		Capabilities: caps,
		CurrentSense: meter.SenseUnipolar,
	}
}

// Stats implements meter.Meter.
func (p *PPK2) Stats() meter.Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// SetPortPower switches DUT power (port 1 only). It is safe while Stream
// runs; the switch is recorded as an EventPortPower at the current index.
func (p *PPK2) SetPortPower(ctx context.Context, port int, on bool) error {
	if p.rw == nil || port != 1 {
		return fmt.Errorf("ppk2: power of port %d: %w", port, meter.ErrUnsupported)
	}
	v := byte(0)
	if on {
		v = 1
	}
	if err := p.write(CmdDeviceRunningSet, v); err != nil {
		return fmt.Errorf("ppk2: %w: %v", meter.ErrDisconnected, err)
	}
	p.mu.Lock()
	p.events = append(p.events, meter.Event{Kind: meter.EventPortPower, Port: 1,
		Index: p.outIndex.Load(), Value: int64(v), HostRecv: hostclock.Now()})
	p.mu.Unlock()
	return nil
}

// Close stops streaming if needed and closes the port or file.
func (p *PPK2) Close() error {
	if p.rw != nil {
		_ = p.write(CmdAverageStop)
	}
	if p.closer != nil {
		return p.closer.Close()
	}
	return nil
}

// samplesPer returns the raw samples averaged into one output sample.
func samplesPer(rate units.Hertz) (uint64, error) {
	if rate == 0 {
		return 1, nil
	}
	n := math.Round(SampleRate / float64(rate))
	if rate < 0 || n < 1 || math.Abs(n*float64(rate)-SampleRate) > 1e-6*SampleRate {
		return 0, fmt.Errorf("ppk2: rate %v: %w (100 kS/s divided by a whole number)", rate, meter.ErrUnsupported)
	}
	return uint64(n), nil
}

// ResolveConfig fills cfg's defaults the way Stream will (rate 0 = 100 kS/s,
// every raw sample) and rejects what Stream would: a rate that does not
// divide 100 kS/s, a port other than 1.
func ResolveConfig(info meter.Info, cfg meter.StreamConfig) (meter.StreamConfig, error) {
	n, err := samplesPer(cfg.Rate)
	if err != nil {
		return cfg, err
	}
	cfg.Rate = units.Hertz(SampleRate / float64(n))
	for _, port := range cfg.Ports {
		if port != 1 {
			return cfg, fmt.Errorf("ppk2: port %d: %w (one port)", port, meter.ErrUnsupported)
		}
	}
	return cfg, nil
}

// ResolveConfig is meter.Resolver: ResolveConfig against the PPK2's Info.
func (p *PPK2) ResolveConfig(cfg meter.StreamConfig) (meter.StreamConfig, error) {
	return ResolveConfig(p.Info(), cfg)
}
