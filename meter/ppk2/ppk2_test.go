package ppk2

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/meter"
)

// The published test vector:
//
//	00 90 14 a5  → ADC 0x1000, range 2, counter 5, logic 0xA5
var vector = []byte{0x00, 0x90, 0x14, 0xa5}

func TestWordFields(t *testing.T) {
	w := WordAt(vector)
	if w.ADC() != 0x1000 || w.Range() != 2 || w.Counter() != 5 || w.Logic() != 0xa5 {
		t.Fatalf("fields = adc %#x range %d counter %d logic %#x", w.ADC(), w.Range(), w.Counter(), w.Logic())
	}
	if r := Word(7 << 14).Range(); r != 4 {
		t.Fatalf("range 7 clamps to %d, want 4", r)
	}
}

func TestVector(t *testing.T) {
	w := WordAt(vector)
	w0 := w &^ (7 << 14) // the same ADC in range 0
	gs0 := DefaultCalibration()
	gs0.GS = [Ranges]float64{}
	for _, tc := range []struct {
		name string
		cal  Calibration
		w    Word
		want float64 // µA
	}{
		{"range 2", DefaultCalibration(), w, 18048.485},
		{"range 2 GS=0", gs0, w, 17733.990},
		{"range 0", DefaultCalibration(), w0, 174.510},
		{"range 0 GS=0", gs0, w0, 174.479},
	} {
		got := NewConverter(tc.cal, 3000).Amps(tc.w) * 1e6
		if math.Abs(got-tc.want) > 0.0005 {
			t.Errorf("%s: %.4f µA, want %.3f", tc.name, got, tc.want)
		}
	}
}

// reference is the published formula, written out literally.
func reference(c Calibration, vdd float64, w Word) float64 {
	r := int(min(uint8(w>>14)&7, 4))
	adc := float64(w&0x3fff) * 4
	r0 := (adc - c.O[r]) * (adcMult / c.R[r])
	return c.UG[r] * (r0*(c.GS[r]*r0+c.GI[r]) + (c.S[r]*(vdd/1000) + c.I[r]))
}

func TestConverterMatchesReference(t *testing.T) {
	m, err := ParseMetadata([]byte(exampleMeta), NordicApp)
	if err != nil {
		t.Fatal(err)
	}
	k := NewConverter(m.Calibration, 3300)
	rng := rand.New(rand.NewPCG(1, 2))
	worst := 0.0
	for range 1_000_000 {
		w := Word(rng.Uint32())
		got, want := k.Amps(w), reference(m.Calibration, 3300, w)
		if want != 0 {
			worst = max(worst, math.Abs(got-want)/math.Abs(want))
		}
	}
	t.Logf("1e6 random words: worst relative difference to the reference formula %g", worst)
	if worst > 1e-12 {
		t.Fatalf("worst relative difference %g", worst)
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	m, _ := ParseMetadata([]byte(exampleMeta), NordicApp)
	k := NewConverter(m.Calibration, 3000)
	for _, a := range []float64{2e-6, 150e-6, 3e-3, 45e-3, 0.4, 0.9} {
		w := k.Encode(a, 9, 0x3c)
		got := k.Amps(w)
		// One ADC step in the chosen range bounds the error.
		step := math.Abs(k.Amps(w+1) - got)
		if math.Abs(got-a) > step || w.Counter() != 9 || w.Logic() != 0x3c {
			t.Errorf("%g A → range %d adc %d → %g A (step %g)", a, w.Range(), w.ADC(), got, step)
		}
	}
}

func TestSpikeFilter(t *testing.T) {
	var f SpikeFilter
	in := []struct {
		i float64
		r uint8
	}{{1, 1}, {1, 1}, {1, 1}, {100, 2}, {100, 2}, {100, 2}, {100, 2}}
	var out []float64
	for _, s := range in {
		out = append(out, f.Apply(s.i, s.r))
	}
	// The sample at the switch and the two after it are the 0.18 average.
	want := []float64{1, 1, 1, 0.18*100 + 0.82*1}
	want = append(want, 0.18*100+0.82*want[3])
	want = append(want, 0.18*100+0.82*want[4], 100)
	for k := range want {
		if math.Abs(out[k]-want[k]) > 1e-12 {
			t.Fatalf("out = %v, want %v", out, want)
		}
	}
	// Into range 4 the first two keep the old slow average.
	var g SpikeFilter
	g.Apply(1, 1)
	if v := g.Apply(500, 4); v != 1 {
		t.Fatalf("range-4 switch gave %v, want the previous avg4 1", v)
	}
}

// words builds a stream of n words with consecutive counters from c0.
func words(c0 uint8, n int, adc uint16) []byte {
	var b []byte
	for k := range n {
		w := uint32(adc) | 1<<14 | uint32((c0+uint8(k))&63)<<18
		b = binary.LittleEndian.AppendUint32(b, w)
	}
	return b
}

func runSyncer(t *testing.T, n uint64, chunks ...[]byte) *collect {
	t.Helper()
	c := &collect{}
	pl := newPipeline(c, NewConverter(DefaultCalibration(), 3000), false, n, 3)
	s := &syncer{out: pl}
	for _, b := range chunks {
		s.feed(b)
	}
	pl.flush()
	if c.err != nil {
		t.Fatal(c.err)
	}
	return c
}

func TestCounterGapExact(t *testing.T) {
	// 100 samples, 23 lost, 100 more, delivered in awkward chunk sizes.
	b := append(words(0, 100, 100), words(123, 100, 100)...)
	c := runSyncer(t, 1, b[:7], b[7:399], b[399:])
	if len(c.gaps) != 1 || c.gaps[0].Start != 100 || c.gaps[0].Count != 23 {
		t.Fatalf("gaps = %+v, want one of 23 at 100", c.gaps)
	}
	if len(c.i) != 200 || c.idx[199] != 222 {
		t.Fatalf("%d samples, last index %d", len(c.i), c.idx[len(c.idx)-1])
	}
}

func TestOutOfSequenceTolerated(t *testing.T) {
	b := words(0, 50, 100)
	binary.LittleEndian.PutUint32(b[20*4:], 100|1<<14|40<<18) // one odd counter
	c := runSyncer(t, 1, b)
	if len(c.gaps) != 0 || len(c.i) != 50 {
		t.Fatalf("%d samples, gaps %+v; want 50 and none", len(c.i), c.gaps)
	}
}

func TestResyncAfterJunk(t *testing.T) {
	// Misaligned start (3 junk bytes), then 2 junk bytes mid-stream.
	b := append([]byte{1, 2, 3}, words(10, 40, 100)...)
	b = append(b, 0xee, 0xee)
	b = append(b, words(50, 40, 100)...)
	c := runSyncer(t, 1, b)
	if len(c.i) != 80 || len(c.gaps) != 0 {
		t.Fatalf("%d samples, gaps %+v; want 80 and none", len(c.i), c.gaps)
	}
	// Now bytes lost inside a word: sample 40 is cut in half.
	b = words(0, 40, 100)
	cut := words(40, 1, 100)[:2]
	b = append(append(b, cut...), words(41, 40, 100)...)
	c = runSyncer(t, 1, b)
	if len(c.gaps) != 1 || c.gaps[0].Start != 40 || c.gaps[0].Count != 1 || len(c.i) != 80 {
		t.Fatalf("%d samples, gaps %+v; want 80 and one of 1 at 40", len(c.i), c.gaps)
	}
}

func TestAveragingGapWindows(t *testing.T) {
	// 10 raw per output; raw 0..34 arrive, 35..44 lost, 45..99 arrive.
	b := append(words(0, 35, 100), words(45, 55, 100)...)
	c := runSyncer(t, 10, b)
	// Windows 0,1,2 full; 3 (30–39) and 4 (40–49) hold lost samples;
	// 5..9 full.
	if len(c.gaps) != 1 || c.gaps[0].Start != 3 || c.gaps[0].Count != 2 {
		t.Fatalf("gaps = %+v, want windows 3–4", c.gaps)
	}
	if len(c.i) != 8 || c.idx[3] != 5 {
		t.Fatalf("samples at %v", c.idx)
	}
	want := NewConverter(DefaultCalibration(), 3000).Amps(WordAt(words(0, 1, 100)))
	if math.Abs(float64(c.i[0])-want) > 1e-15 {
		t.Fatalf("mean %v, want %v", c.i[0], want)
	}
}

func TestLogicEvents(t *testing.T) {
	b := words(0, 10, 100)
	b[4*5+3] = 0x01 // D0 goes high at sample 5
	b[4*6+3] = 0x01
	c := runSyncer(t, 1, b)
	if len(c.events) != 3 || c.events[0].Value != 0 || c.events[1].Index != 5 || c.events[1].Value != 1 || c.events[2].Index != 7 {
		t.Fatalf("events = %+v", c.events)
	}
	if c.events[1].Kind != meter.EventLogic {
		t.Fatalf("kind %v", c.events[1].Kind)
	}
}

const exampleMeta = "Calibrated: 0\nR0: 1003.3506\nR1: 101.5865\nR2: 10.3358\nR3: 0.9443\nR4: 0.0564\n" +
	"GS0: 0.0000\nGS1: 0.0966\nGS2: 0.0927\nGS3: 0.0909\nGS4: 0.0729\n" +
	"GI0: 1.0000\nGI1: 0.9659\nGI2: 0.9594\nGI3: 0.9589\nGI4: 0.9582\n" +
	"O0: 112.9420\nO1: 75.5025\nO2: 66.4479\nO3: 75.6063\nO4: 87.2177\n" +
	"VDD: 3000\nHW: 9173\nmode: 2\n" +
	"S0: 0.000000048\nS1: 0.000000238\nS2: 0.000002423\nS3: 0.000028003\nS4: 0.002940743\n" +
	"I0: -0.000000104\nI1: -0.000000991\nI2: -0.000014161\nI3: -0.000105000\nI4: -0.009388455\n" +
	"UG0: 1.00\nUG1: 1.00\nUG2: 1.00\nUG3: 1.00\nUG4: 1.00\nIA: 56\nEND\n"

func TestMetadataBehaviours(t *testing.T) {
	m, err := ParseMetadata([]byte(exampleMeta), NordicApp)
	if err != nil {
		t.Fatal(err)
	}
	if m.R[0] != 1003.3506 || m.R[4] != 0.0564 || m.GS[0] != 1 || m.GS[4] != 0.0729 || m.O[4] != 87.2177 ||
		m.VDD != 3000 || m.HW != 9173 || m.Mode != 2 || m.IA != 56 || m.I[4] != -0.009388455 || m.Len != len(exampleMeta) {
		t.Fatalf("nordic: %+v", m)
	}
	z, err := ParseMetadata([]byte(exampleMeta), ZeroROnly)
	if err != nil || z.GS[0] != 0 {
		t.Fatalf("zero-r-only: GS0 = %v, %v; want 0", z.GS[0], err)
	}
	odd := strings.NewReplacer("R1: 101.5865", "R1: 0", "GI2: 0.9594", "GI2: -nan", "O3: 75.6063", "o3: 0").Replace(exampleMeta)
	for _, b := range []Behaviour{NordicApp, ZeroROnly} {
		m, err := ParseMetadata([]byte(odd), b)
		if err != nil {
			t.Fatal(err)
		}
		if m.R[1] != 101.65 || m.GI[2] != 1 || m.O[3] != 0 || len(m.Warnings) < 2 {
			t.Fatalf("%v: R1 %v GI2 %v O3 %v warnings %q", b, m.R[1], m.GI[2], m.O[3], m.Warnings)
		}
	}
}

func TestMetadataErrors(t *testing.T) {
	_, err := ParseMetadata([]byte(strings.TrimSuffix(exampleMeta, "END\n")), NordicApp)
	if err == nil || !strings.Contains(err.Error(), "END") {
		t.Fatalf("no END: %v", err)
	}
	_, err = ParseMetadata([]byte("R0: 1003\nR1: abc\nEND\n"), NordicApp)
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("bad number: %v", err)
	}
}

func writeDump(t *testing.T, meta string, body []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ppk2.dump")
	if err := os.WriteFile(p, append([]byte(meta), body...), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDumpFile(t *testing.T) {
	m, _ := ParseMetadata([]byte(exampleMeta), NordicApp)
	k := NewConverter(m.Calibration, 3000)
	var body []byte
	for i := range 250_000 {
		if i >= 1000 && i < 1010 {
			continue // lost
		}
		body = binary.LittleEndian.AppendUint32(body, uint32(k.Encode(5e-3, uint8(i), 0)))
	}
	p, err := Open(writeDump(t, exampleMeta, body), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Mode() != SourceMeter || p.Info().Channels[0].Rail.String() != "other" {
		t.Fatalf("mode %v info %+v", p.Mode(), p.Info())
	}
	c := &collect{}
	if err := p.Stream(context.Background(), meter.StreamConfig{Rate: 1000}, c); err != nil {
		t.Fatal(err)
	}
	if c.err != nil {
		t.Fatal(c.err)
	}
	if len(c.gaps) != 1 || c.gaps[0].Start != 10 || c.gaps[0].Count != 1 || len(c.i) != 2499 {
		t.Fatalf("%d samples, gaps %+v", len(c.i), c.gaps)
	}
	if math.Abs(float64(c.i[0])-5e-3) > 5e-6 || c.v[0] != 3 {
		t.Fatalf("first sample %v A %v V", c.i[0], c.v[0])
	}
	if len(c.marks) != 2 || !c.marks[0].Synthetic || p.Stats().SamplesLost != 10 {
		t.Fatalf("marks %+v stats %+v", c.marks, p.Stats())
	}
}

func TestDumpErrors(t *testing.T) {
	_, err := Open(writeDump(t, "R0: 1000\nVDD: 3000\n", words(0, 10, 1)), Options{})
	if !errors.Is(err, meter.ErrProtocol) || !strings.Contains(err.Error(), "END") {
		t.Fatalf("dump without END: %v", err)
	}
	_, err = Open(writeDump(t, exampleMeta, nil), Options{Mode: AmpereMeter})
	if err == nil || !strings.Contains(err.Error(), "Supply") {
		t.Fatalf("ampere without supply: %v", err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "none"), Options{}); !errors.Is(err, meter.ErrNoDevice) {
		t.Fatalf("missing path: %v", err)
	}
	p, err := Open(writeDump(t, exampleMeta, nil), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Stream(context.Background(), meter.StreamConfig{Rate: 3000}, &collect{}); !errors.Is(err, meter.ErrUnsupported) {
		t.Fatalf("rate 3000: %v", err)
	}
}

var _ = bytes.Equal

// fixtures/ppk2/vector.dump: default calibration, then 1000 copies of the
// test vector's ADC, range and logic with consecutive counters.
func TestVectorDumpFixture(t *testing.T) {
	p, err := Open("../../fixtures/ppk2/vector.dump", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c := &collect{}
	if err := p.Stream(context.Background(), meter.StreamConfig{}, c); err != nil {
		t.Fatal(err)
	}
	if len(c.i) != 1000 || len(c.gaps) != 0 || math.Abs(float64(c.i[999])*1e6-18048.485) > 0.0005 {
		t.Fatalf("%d samples, gaps %v, last %v", len(c.i), c.gaps, c.i[len(c.i)-1])
	}
	if len(c.events) != 1 || c.events[0].Value != 0xa5 {
		t.Fatalf("events %+v", c.events)
	}
}

// TestMetadataBounds: calibration values that would make a range's every
// reading wrong are refused at open, naming the key; the published example
// board's metadata passes.
func TestMetadataBounds(t *testing.T) {
	m, err := ParseMetadata([]byte(exampleMeta), NordicApp)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Check(); err != nil {
		t.Fatalf("example board: %v", err)
	}
	for _, c := range []struct{ edit, want string }{
		{"R2: 0.001", "metadata R2 = 0.001 Ω outside 5.075–20.3 Ω"},
		{"R4: 43", "metadata R4 = 43 Ω"},
		{"GI1: 0.01", "metadata GI1 = 0.01 outside 0.5–2"},
		{"O3: 1e6", "metadata O3 = 1e+06 counts"},
		{"I0: 0.5", "metadata S0, I0: offset S·VDD + I = 0.5 A"},
	} {
		text := strings.Replace(exampleMeta, "IA: 56\n", c.edit+"\nIA: 56\n", 1)
		m, err := ParseMetadata([]byte(text), NordicApp)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Check(); !errors.Is(err, meter.ErrCalibration) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.edit, err, c.want)
		}
		// A dump with it is refused at open.
		if _, err := Open(writeDump(t, text, words(0, 10, 1)), Options{}); !errors.Is(err, meter.ErrCalibration) {
			t.Errorf("dump with %s: %v", c.edit, err)
		}
	}
}
