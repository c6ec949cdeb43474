package firmware

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
	"github.com/idlewatt/idlewatt/units"
)

// countDrive renders readings that quantise to given counts: sample idx of
// channel c reads bus[idx][c] × 1.25 mV and cur[idx][c] × the channel's
// LSB, so the emulator's ADC gives back exactly those counts.
type countDrive struct {
	port, rails int
	counts      *counts
}

type counts struct {
	n, chans int
	bus      []uint16
	cur      []int32
	lsb      []float64 // A per count, per channel, in the stream's format
}

func (d *countDrive) Render(t0 time.Duration, rate units.Hertz, v5 []units.Volts, i5 []units.Amps, v12 []units.Volts, i12 []units.Amps) {
	idx0 := int(math.Round(t0.Seconds() * float64(rate)))
	c := d.counts
	for k := range i5 {
		idx := idx0 + k
		for r, dst := range [][2]any{{v5, i5}, {v12, i12}} {
			ch := (d.port-1)*d.rails + r
			var bus uint16
			var cur int32
			if idx < c.n {
				bus, cur = c.bus[idx*c.chans+ch], c.cur[idx*c.chans+ch]
			}
			dst[0].([]units.Volts)[k] = units.Volts(float64(bus) * 1.25e-3)
			dst[1].([]units.Amps)[k] = units.Amps(float64(cur) * c.lsb[ch])
		}
	}
}
func (d *countDrive) SetDevSlp(time.Duration, bool) {}
func (d *countDrive) SetPower(time.Duration, bool)  {}

// drawCounts draws a level plus noise per channel with occasional steps
// (bursts, DevSlp-like drops) and rare large jumps, the cases a packer's
// escapes and parameter choice must agree on.
func drawCounts(rng *rand.Rand, n, chans int, wide bool) *counts {
	c := &counts{n: n, chans: chans, bus: make([]uint16, n*chans), cur: make([]int32, n*chans), lsb: make([]float64, chans)}
	hi := int32(32767)
	if wide {
		hi = 1<<19 - 1
	}
	for ch := range chans {
		busLevel := 4000.0
		if ch%2 == 1 {
			busLevel = 9600
		}
		level := float64(rng.IntN(int(hi) / 4))
		noise := 0.5 + rng.Float64()*float64(rng.IntN(300))
		for i := range n {
			if rng.IntN(400) == 0 {
				level = float64(rng.IntN(int(hi))) - float64(hi)/8 // a step
			}
			v := level + rng.NormFloat64()*noise
			if rng.IntN(5000) == 0 {
				v = float64(hi) * (2*rng.Float64() - 1) // a spike
			}
			c.cur[i*chans+ch] = int32(max(-float64(hi)-1, min(float64(hi), math.Round(v))))
			c.bus[i*chans+ch] = uint16(max(0, min(32767, math.Round(busLevel+rng.NormFloat64()*2))))
		}
	}
	return c
}

func TestGoldenAgainstEmulator(t *testing.T) {
	dir := build(t, "host")
	cases := []struct {
		name            string
		protocol, ports int
		rate            units.Hertz
		format          uint8
		maxFrame        int
		dur             time.Duration
	}{
		{"v1-16bit-1k-2ports", 1, 2, 1000, 0, 0, 1500 * time.Millisecond},
		{"v1-16bit-100Hz-4ports", 1, 4, 100, 0, 0, 3 * time.Second},
		{"v2-16bit-2k", 2, 2, 2000, hub.Format16, 4096, time.Second},
		{"v2-20bit-5k-256B", 2, 2, 5000, hub.Format20, 4096, time.Second},
		{"v2-20bit-1k-100B", 2, 3, 1000, hub.Format20, 100, time.Second},
		{"v2-packed-10k-1port", 2, 1, 10000, hub.FormatPacked, 4096, time.Second},
		{"v2-packed-2k-4ports-96B", 2, 4, 2000, hub.FormatPacked, 96, time.Second},
		{"v2-packed-100Hz", 2, 2, 100, hub.FormatPacked, 4096, 2 * time.Second},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seed := int64(1000 + i)
			o := hubemu.Options{Ports: tc.ports, Protocol: tc.protocol, Rate: tc.rate, Seed: seed, Format: tc.format, MaxFrame: tc.maxFrame,
				Model: "idlewatt open hub", Firmware: "golden", Serial: fmt.Sprintf("G%d", seed)}
			// The header frames tell the trimmed LSBs the counts are scaled by.
			var hdr bytes.Buffer
			if err := hubemu.WriteFast(&hdr, o, time.Nanosecond); err != nil {
				t.Fatal(err)
			}
			id, cal := headerOf(t, hdr.Bytes())
			wide := tc.protocol >= 2 && tc.format != hub.Format16
			chans := tc.ports * len(id.Rails)
			rng := rand.New(rand.NewPCG(uint64(seed), 7))
			n := int(tc.dur.Seconds()*float64(tc.rate)) + 1
			c := drawCounts(rng, n, chans, wide)
			for ch, e := range cal.Entries {
				c.lsb[ch] = float64(e.CurrentLSBnA) * 1e-9
				if wide {
					c.lsb[ch] = float64(e.WideLSBpA) * 1e-12
				}
			}
			for p := 1; p <= tc.ports; p++ {
				o.Drives = append(o.Drives, &countDrive{port: p, rails: len(id.Rails), counts: c})
			}
			var want bytes.Buffer
			if err := hubemu.WriteFast(&want, o, tc.dur); err != nil {
				t.Fatal(err)
			}
			got := runScript(t, dir, id, cal, o, c, tc.dur)
			compareFrames(t, want.Bytes(), got)
		})
	}
}

func headerOf(t *testing.T, b []byte) (hub.Identity, hub.Calibration) {
	t.Helper()
	var id hub.Identity
	var cal hub.Calibration
	sc := hub.NewScanner(bytes.NewReader(b))
	for {
		f, err := sc.Next()
		if err != nil {
			break
		}
		switch f.Type {
		case hub.TypeIdentity:
			if err := id.DecodeFromBytes(f.Payload); err != nil {
				t.Fatal(err)
			}
		case hub.TypeCal:
			if err := cal.DecodeFromBytes(f.Payload); err != nil {
				t.Fatal(err)
			}
		}
	}
	if id.Ports == 0 || len(cal.Entries) == 0 {
		t.Fatal("the emulator's header has no IDENTITY or CALIBRATION")
	}
	return id, cal
}

// runScript writes the session as hubsim's script and returns what the
// firmware core sent.
func runScript(t *testing.T, dir string, id hub.Identity, cal hub.Calibration, o hubemu.Options, c *counts, d time.Duration) []byte {
	t.Helper()
	tmp := t.TempDir()
	var cb bytes.Buffer
	for i := range c.n * c.chans {
		cb.Write(binary.LittleEndian.AppendUint16(nil, c.bus[i]))
		cb.Write(binary.LittleEndian.AppendUint32(nil, uint32(c.cur[i])))
	}
	countsPath := filepath.Join(tmp, "counts.bin")
	if err := os.WriteFile(countsPath, cb.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	var s strings.Builder
	fmt.Fprintf(&s, "protocol %d\nports %d\n", id.Version, id.Ports)
	for i, r := range id.Rails {
		var w uint32
		if i < len(id.WideLSBpA) {
			w = id.WideLSBpA[i]
		}
		fmt.Fprintf(&s, "rail %d %d %d %d\n", r.Rail, r.MaxMilliVolt, r.CurrentLSBnA, w)
	}
	s.WriteString("rates")
	for _, r := range id.Rates {
		fmt.Fprintf(&s, " %d", r)
	}
	fmt.Fprintf(&s, "\ncaps %d\nbuslsb %d\nlink %d\nmodel %s\nfirmware %s\nserial %s\nmaxframe %d\nring %d\nformats %d\n",
		id.Caps, id.BusLSBuV, id.LinkBytesSec, id.Model, id.Firmware, id.Serial, id.MaxFrame, id.RingBytes, id.Formats)
	for ch, e := range cal.Entries {
		fmt.Fprintf(&s, "cal %d %d %d %d %d\n", ch, e.CalReg, e.ShuntMicroOhm, e.CurrentLSBnA, e.WideLSBpA)
	}
	format := o.Format
	if id.Version >= 2 && format == 0 {
		format = hub.Format20
		if id.Formats&hub.FormatBitPacked != 0 {
			format = hub.FormatPacked
		}
	}
	if id.Version < 2 {
		format = 0
	}
	fmt.Fprintf(&s, "linkframe %d\nstart %d %d %d\nduration_ms %d\ncounts %s\n",
		min(o.MaxFrame, hub.DefaultMaxFrame), int(o.Rate), 1<<o.Ports-1, format, d.Milliseconds(), countsPath)
	scriptPath := filepath.Join(tmp, "script")
	if err := os.WriteFile(scriptPath, []byte(s.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(dir, "build", "host", "hubsim"), "--script", scriptPath).Output()
	if err != nil {
		t.Fatalf("hubsim --script: %v", err)
	}
	return out
}

// compareFrames fails at the first frame that differs, naming it.
func compareFrames(t *testing.T, want, got []byte) {
	t.Helper()
	wf, gf := frames(want), frames(got)
	for i := range min(len(wf), len(gf)) {
		if !bytes.Equal(wf[i], gf[i]) {
			t.Fatalf("frame %d of %d differs:\nemulator %x\nfirmware %x", i, len(wf), wf[i], gf[i])
		}
	}
	if len(wf) != len(gf) || !bytes.Equal(want, got) {
		t.Fatalf("emulator sent %d frames (%d bytes), firmware %d (%d bytes)", len(wf), len(want), len(gf), len(got))
	}
	if len(wf) < 10 {
		t.Fatalf("only %d frames: the session did not stream", len(wf))
	}
	t.Logf("%d frames, %d bytes, identical", len(wf), len(want))
}

func frames(b []byte) [][]byte {
	var out [][]byte
	for len(b) >= hub.HeaderLen {
		n := hub.HeaderLen + int(binary.LittleEndian.Uint16(b[4:])) + hub.TrailerLen
		if n > len(b) {
			break
		}
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}

var _ meter.SimDrive = (*countDrive)(nil)
