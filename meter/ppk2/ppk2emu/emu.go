package ppk2emu

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/idlewatt/idlewatt/internal/ptyserve"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/ppk2"
	"github.com/idlewatt/idlewatt/units"
)

// DefaultMetadata is the metadata the emulator answers with unless told
// otherwise: the published example, including GS0: 0.0000.
const DefaultMetadata = `Calibrated: 0
R0: 1003.3506
R1: 101.5865
R2: 10.3358
R3: 0.9443
R4: 0.0564
GS0: 0.0000
GS1: 0.0966
GS2: 0.0927
GS3: 0.0909
GS4: 0.0729
GI0: 1.0000
GI1: 0.9659
GI2: 0.9594
GI3: 0.9589
GI4: 0.9582
O0: 112.9420
O1: 75.5025
O2: 66.4479
O3: 75.6063
O4: 87.2177
VDD: 3000
HW: 9173
mode: 2
S0: 0.000000048
S1: 0.000000238
S2: 0.000002423
S3: 0.000028003
S4: 0.002940743
I0: -0.000000104
I1: -0.000000991
I2: -0.000014161
I3: -0.000105000
I4: -0.009388455
UG0: 1.00
UG1: 1.00
UG2: 1.00
UG3: 1.00
UG4: 1.00
IA: 56
END
`

// WithVDD returns metadata with its VDD line set to mv: the regulator
// set-point the emulated PPK2 reports, which a host that sets none uses.
func WithVDD(metadata string, mv int) (string, error) {
	lines := strings.SplitAfter(metadata, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "VDD:") {
			lines[i] = fmt.Sprintf("VDD: %d\n", mv)
			return strings.Join(lines, ""), nil
		}
	}
	return "", fmt.Errorf("ppk2emu: metadata has no VDD line")
}

// Drop makes the emulator skip Count samples starting at sample At (the
// counter still advances), as a USB overrun does.
type Drop struct{ At, Count uint64 }

// Junk inserts Bytes before sample At, breaking the word alignment.
type Junk struct {
	At    uint64
	Bytes []byte
}

// Options configure New. The zero value answers DefaultMetadata and draws a
// constant 10 mA.
type Options struct {
	Metadata string         // text through END (and its newline)
	Drive    meter.SimDrive // current on its 5 V rail is the DUT current
	// Logic gives D0–D7 at emulator time t; nil = all low.
	Logic func(t time.Duration) uint8
	Drops []Drop
	Junk  []Junk
}

// State is what the host has set.
type State struct {
	Streaming bool
	DUTOn     bool
	Mode      int // 1 ampere, 2 source, 0 not set
	VDD       int // mV
	UG        [ppk2.Ranges]float32
	Sent      uint64 // samples generated (including dropped ones)
	Commands  int
}

// Emulator serves the PPK2 byte protocol on a pseudo-terminal.
type Emulator struct {
	opts   Options
	pty    *ptyserve.Pair
	master *os.File // pty.Master
	start  time.Time
	meta   ppk2.Metadata
	conv   *ppk2.Converter
	convMV int

	mu    sync.Mutex
	st    State
	wmu   sync.Mutex
	done  chan struct{}
	wg    sync.WaitGroup
	close sync.Once
}

// New starts an emulator; connect a host to Path.
func New(opts Options) (*Emulator, error) {
	if opts.Metadata == "" {
		opts.Metadata = DefaultMetadata
	}
	if opts.Drive == nil {
		opts.Drive = meter.ConstantDrive{V5: 3, I5: 0.010}
	}
	meta, err := ppk2.ParseMetadata([]byte(opts.Metadata), ppk2.NordicApp)
	if err != nil {
		// An emulator may be told to send bad metadata on purpose.
		meta = ppk2.Metadata{Calibration: ppk2.DefaultCalibration()}
	}
	pty, err := ptyserve.Open()
	if err != nil {
		return nil, fmt.Errorf("ppk2emu: %w", err)
	}
	e := &Emulator{opts: opts, pty: pty, master: pty.Master, start: time.Now(), done: make(chan struct{})}
	e.st.VDD = meta.VDD
	for r := range e.st.UG {
		e.st.UG[r] = float32(meta.UG[r])
	}
	e.meta = meta
	e.wg.Add(2)
	go e.commands()
	go e.stream()
	return e, nil
}

// Path is the pty a host opens.
func (e *Emulator) Path() string { return e.pty.Path() }

// State returns what the host has set so far.
func (e *Emulator) State() State {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.st
}

// Close stops the emulator; a connected host sees the line drop.
func (e *Emulator) Close() error {
	e.close.Do(func() {
		close(e.done)
		e.pty.Close()
		e.wg.Wait()
	})
	return nil
}

func (e *Emulator) now() time.Duration { return time.Since(e.start) }

func (e *Emulator) send(b []byte) error {
	e.wmu.Lock()
	defer e.wmu.Unlock()
	_, err := e.master.Write(b)
	return err
}

// commands parses the host's raw command bytes; arguments may arrive split
// across reads.
func (e *Emulator) commands() {
	defer e.wg.Done()
	var q []byte
	buf := make([]byte, 256)
	argLen := map[byte]int{ppk2.CmdDeviceRunningSet: 1, ppk2.CmdRegulatorSet: 2, ppk2.CmdSetPowerMode: 1,
		ppk2.CmdSetUserGains: 5, 0x15: 0, 0x16: 0}
	for {
		n, err := e.master.Read(buf)
		if err != nil {
			return
		}
		q = append(q, buf[:n]...)
		for len(q) > 0 {
			need := argLen[q[0]]
			if len(q) < 1+need {
				break
			}
			e.handle(q[0], q[1:1+need])
			q = q[1+need:]
		}
	}
}

func (e *Emulator) handle(cmd byte, arg []byte) {
	e.mu.Lock()
	e.st.Commands++
	switch cmd {
	case ppk2.CmdAverageStart:
		e.st.Streaming = true
	case ppk2.CmdAverageStop:
		e.st.Streaming = false
	case ppk2.CmdDeviceRunningSet:
		e.st.DUTOn = arg[0] != 0
		e.opts.Drive.SetPower(e.now(), e.st.DUTOn)
	case ppk2.CmdRegulatorSet:
		e.st.VDD = int(arg[0])<<8 | int(arg[1])
	case ppk2.CmdSetPowerMode:
		e.st.Mode = int(arg[0])
	case ppk2.CmdSetUserGains:
		if r := int(arg[0]); r < ppk2.Ranges {
			e.st.UG[r] = math.Float32frombits(binary.LittleEndian.Uint32(arg[1:]))
		}
	case ppk2.CmdReset:
		e.st = State{Sent: e.st.Sent, VDD: e.st.VDD, UG: e.st.UG}
	case ppk2.CmdGetMetadata:
		e.mu.Unlock()
		_ = e.send([]byte(e.opts.Metadata))
		return
	}
	e.mu.Unlock()
}

// stream generates samples at 100 kS/s of wall time while streaming. A host
// that falls more than a second behind loses samples, as on the device.
func (e *Emulator) stream() {
	defer e.wg.Done()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	var (
		on      bool
		t0      time.Duration // emulator time of sample 0 of this run
		made    uint64        // samples generated in this run
		v5, v12 []units.Volts
		i5, i12 []units.Amps
		out     []byte
	)
	for {
		select {
		case <-e.done:
			return
		case <-tick.C:
		}
		e.mu.Lock()
		st := e.st
		e.mu.Unlock()
		if !st.Streaming {
			on = false
			continue
		}
		if !on {
			on, t0, made = true, e.now(), 0
		}
		if e.conv == nil || e.convMV != st.VDD {
			// The host's conversion uses the set-point it sent.
			e.conv, e.convMV = ppk2.NewConverter(e.meta.Calibration, float64(st.VDD)), st.VDD
		}
		due := uint64((e.now() - t0).Seconds() * ppk2.SampleRate)
		if due <= made {
			continue
		}
		n := due - made
		if n > ppk2.SampleRate {
			e.advance(n - ppk2.SampleRate) // overrun: drop what the host missed
			made += n - ppk2.SampleRate
			n = ppk2.SampleRate
		}
		if cap(i5) < int(n) {
			v5, v12 = make([]units.Volts, n), make([]units.Volts, n)
			i5, i12 = make([]units.Amps, n), make([]units.Amps, n)
		}
		v5, v12, i5, i12 = v5[:n], v12[:n], i5[:n], i12[:n]
		ts := t0 + time.Duration(made)*time.Second/ppk2.SampleRate
		e.opts.Drive.Render(ts, ppk2.SampleRate, v5, i5, v12, i12)
		out = out[:0]
		for k := range i5 {
			out = e.appendSample(out, ts+time.Duration(k)*time.Second/ppk2.SampleRate, float64(i5[k]), st.DUTOn)
		}
		made += n
		if err := e.send(out); err != nil {
			return
		}
	}
}

func (e *Emulator) advance(n uint64) {
	e.mu.Lock()
	e.st.Sent += n
	e.mu.Unlock()
}

// appendSample encodes the next sample (index st.Sent) unless a Drop covers it.
func (e *Emulator) appendSample(out []byte, t time.Duration, amps float64, on bool) []byte {
	e.mu.Lock()
	idx := e.st.Sent
	e.st.Sent++
	e.mu.Unlock()
	for _, j := range e.opts.Junk {
		if j.At == idx {
			out = append(out, j.Bytes...)
		}
	}
	for _, d := range e.opts.Drops {
		if idx >= d.At && idx < d.At+d.Count {
			return out
		}
	}
	if !on {
		amps = 0
	}
	var logic uint8
	if e.opts.Logic != nil {
		logic = e.opts.Logic(t)
	}
	return binary.LittleEndian.AppendUint32(out, uint32(e.conv.Encode(amps, uint8(idx), logic)))
}
