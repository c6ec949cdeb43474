package main

// The small captures of cases.txt's safety-cli section (issue 26) are
// made here from a clean synthetic capture, byte-edited where a writer
// would never go (a second rate_hz key, a calibration gain ×1000, summary
// levels ×1000), each chunk's CRC-32C recomputed so that the edit reads as
// intact. `go test ./cmd/idlewatt -run TestSafetyCLIFixtures -update`
// rewrites them; without the flag the test checks that the
// committed files still hold what their names say.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis/synthcap"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/testutil"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// rawChunk is one chunk of a capture file as bytes.
type rawChunk struct {
	typ, flags byte
	seq        uint64
	payload    []byte
}

// splitCapture cuts a capture file into its preamble and chunks.
func splitCapture(t *testing.T, b []byte) ([]byte, []rawChunk) {
	t.Helper()
	pre, rest := b[:16], b[16:]
	var out []rawChunk
	for len(rest) > 0 {
		if len(rest) < 20 || rest[0] != 'I' || rest[1] != 'W' {
			t.Fatalf("not a chunk at %d bytes from the end", len(rest))
		}
		n := int(binary.LittleEndian.Uint32(rest[4:]))
		out = append(out, rawChunk{typ: rest[2], flags: rest[3], seq: binary.LittleEndian.Uint64(rest[8:]), payload: append([]byte(nil), rest[16:16+n]...)})
		rest = rest[16+n+4:]
	}
	return pre, out
}

// joinCapture writes the chunks back, each with its length and CRC-32C.
func joinCapture(pre []byte, cs []rawChunk) []byte {
	b := append([]byte(nil), pre...)
	for _, c := range cs {
		h := make([]byte, 16, 16+len(c.payload)+4)
		h[0], h[1], h[2], h[3] = 'I', 'W', c.typ, c.flags
		binary.LittleEndian.PutUint32(h[4:], uint32(len(c.payload)))
		binary.LittleEndian.PutUint64(h[8:], c.seq)
		h = append(h, c.payload...)
		h = binary.LittleEndian.AppendUint32(h, crc32.Checksum(h, crc32.MakeTable(crc32.Castagnoli)))
		b = append(b, h...)
	}
	return b
}

// cleanCapture is the clean capture every edit starts from: one drive at
// 1000 S/s for d, 2 rails quantised to the hub's LSBs (so the samples are
// encoding 2, with a calibration table), no index (header edits move every
// offset after them).
func cleanCapture(t *testing.T, d time.Duration, name string, gaps ...synthcap.Gap) []byte {
	t.Helper()
	s := synthcap.Scenario{RateHz: 1000, Duration: d, Seed: 26, CurrentLSB: 1e-4, VoltLSB: 1.25e-3, Gaps: gaps,
		Drives: []synthcap.Drive{{Port: 1, Name: name, IdleW: 0.4, BusyW: 2, Split5V: 0.7}}}
	var b bytes.Buffer
	w, err := capture.NewWriter(&b, s.Header(), capture.Options{IndexEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := synthcap.Generate(s, w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// The end chunk holds the host time of the close: zero it, so the files
	// are the same from run to run.
	pre, cs := splitCapture(t, b.Bytes())
	last := &cs[len(cs)-1]
	if last.typ != 0xFF {
		t.Fatal("no end chunk")
	}
	binary.LittleEndian.PutUint64(last.payload, 0)
	return joinCapture(pre, cs)
}

// editHeader rewrites the header chunk's JSON with f.
func editHeader(t *testing.T, b []byte, f func(js string) string) []byte {
	t.Helper()
	pre, cs := splitCapture(t, b)
	cs[0].payload = []byte(f(string(cs[0].payload)))
	return joinCapture(pre, cs)
}

// editChunks applies f to every chunk of type typ; f says whether it
// changed it. only > 0 edits only the only-th such chunk.
func editChunks(t *testing.T, b []byte, typ byte, only int, f func(p []byte) bool) []byte {
	t.Helper()
	pre, cs := splitCapture(t, b)
	n, seen := 0, 0
	for i := range cs {
		if cs[i].typ != typ {
			continue
		}
		if seen++; only > 0 && seen != only {
			continue
		}
		if f(cs[i].payload) {
			n++
		}
	}
	if n == 0 {
		t.Fatalf("no chunk of type 0x%02x edited", typ)
	}
	return joinCapture(pre, cs)
}

// scaleGain multiplies encoding 2's voltage gain of range 0 by k.
func scaleGain(k float64) func(p []byte) bool {
	return func(p []byte) bool {
		if p[2] != 2 { // encoding 2 only
			return false
		}
		at := 24 // range 0's V gain
		g := math.Float64frombits(binary.LittleEndian.Uint64(p[at:]))
		binary.LittleEndian.PutUint64(p[at:], math.Float64bits(g*k))
		return true
	}
}

// scaleLevels multiplies every power of a summary-levels chunk (min, max,
// mean, σ) by k.
func scaleLevels(k float32) func(p []byte) bool {
	return func(p []byte) bool {
		n := int(binary.LittleEndian.Uint32(p[16:]))
		for j := 0; j < 4*n; j++ {
			at := 24 + 4*j
			x := math.Float32frombits(binary.LittleEndian.Uint32(p[at:]))
			binary.LittleEndian.PutUint32(p[at:], math.Float32bits(x*k))
		}
		return n > 0
	}
}

// oneRailCapture has a drive with two rails of which only the 5 V rail
// has samples: no drive has a single power sample.
func oneRailCapture(t *testing.T) []byte {
	t.Helper()
	h := capture.Header{Created: "2026-01-01T00:00:00Z", RateHz: 1000, Tool: "hostile_fixtures_test",
		Channels: []meter.Channel{{Port: 1, Rail: meter.Rail5V}, {Port: 1, Rail: meter.Rail12V}},
		Drives:   []capture.DriveInfo{{Port: 1, Name: "one rail"}}}
	var b bytes.Buffer
	w, err := capture.NewWriter(&b, h, capture.Options{IndexEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	v, i := make([]units.Volts, 500), make([]units.Amps, 500)
	for k := range v {
		v[k], i[k] = 5, 0.08
	}
	if err := w.Samples(&meter.Block{Channel: 0, V: v, I: i}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	pre, cs := splitCapture(t, b.Bytes())
	binary.LittleEndian.PutUint64(cs[len(cs)-1].payload, 0)
	return joinCapture(pre, cs)
}

// marksCapture has clock marks whose meter indices run a million times too
// fast: they agree only on a drift of about −1e6 ppm, which is refused.
func marksCapture(t *testing.T) []byte {
	t.Helper()
	s := synthcap.Scenario{RateHz: 1000, Duration: 6 * time.Second, Seed: 26, StartHost: 5e12, MarkEvery: time.Second,
		RTTMin: 400 * time.Microsecond, Jitter: 100 * time.Microsecond,
		Drives: []synthcap.Drive{{Port: 1, Name: "SSD 1", IdleW: 0.4, BusyW: 2}}}
	var b bytes.Buffer
	w, err := capture.NewWriter(&b, s.Header(), capture.Options{IndexEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := synthcap.Generate(s, marksTimes{w, 1e6}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	pre, cs := splitCapture(t, b.Bytes())
	binary.LittleEndian.PutUint64(cs[len(cs)-1].payload, 0)
	return joinCapture(pre, cs)
}

// marksTimes multiplies every mark's meter index by k.
type marksTimes struct {
	*capture.Writer
	k uint64
}

func (w marksTimes) Mark(m meter.MarkEcho) error {
	m.MeterIndex *= w.k
	return w.Writer.Mark(m)
}

// safetyCLIFixtures builds every file, by name.
func safetyCLIFixtures(t *testing.T) map[string][]byte {
	clean := cleanCapture(t, 3*time.Second, "SSD 1")
	long := cleanCapture(t, 40*time.Second, "SSD 1") // summary levels 0 and 1
	// A gap of every channel closes their samples chunks: four of them.
	gapped := cleanCapture(t, 3*time.Second, "SSD 1", synthcap.Gap{Channel: -1, Start: 1500, Count: 10})
	return map[string][]byte{
		"safety-cli-clean.iwcap": clean,
		"safety-cli-dup-rate.iwcap": editHeader(t, clean, func(js string) string {
			return strings.Replace(js, `"rate_hz":1000`, `"rate_hz":1000,"rate_hz":10000`, 1)
		}),
		"safety-cli-dup-rate-case.iwcap": editHeader(t, clean, func(js string) string {
			return strings.Replace(js, `"rate_hz":1000`, `"rate_hz":1000,"RATE_HZ":10000`, 1)
		}),
		"safety-cli-dup-drive-name.iwcap": editHeader(t, clean, func(js string) string {
			return strings.Replace(js, `"name":"SSD 1"`, `"name":"SSD 1","name":"SSD 2"`, 1)
		}),
		"safety-cli-name-300.iwcap": editHeader(t, clean, func(js string) string { // the writer refuses such a name
			return strings.Replace(js, `"name":"SSD 1"`, `"name":"`+strings.Repeat("n", 300)+`"`, 1)
		}),
		"safety-cli-names.iwcap":         cleanCapture(t, time.Second, hostileName),
		"safety-cli-gain-0.iwcap":        editChunks(t, clean, 0x10, 0, scaleGain(0)),
		"safety-cli-gain-1000.iwcap":     editChunks(t, clean, 0x10, 0, scaleGain(1000)),
		"safety-cli-gain-1000-one.iwcap": editChunks(t, gapped, 0x10, 1, scaleGain(1000)),
		"safety-cli-gain-nan.iwcap":      editChunks(t, clean, 0x10, 0, scaleGain(math.NaN())),
		"safety-cli-summary-x1000.iwcap": editChunks(t, long, 0x12, 0, scaleLevels(1000)),
		"safety-cli-summary-zero.iwcap":  editChunks(t, long, 0x12, 0, scaleLevels(0)),
		"safety-cli-one-rail.iwcap":      oneRailCapture(t),
		"safety-cli-marks-x1e6.iwcap":    marksCapture(t),
	}
}

func TestSafetyCLIFixtures(t *testing.T) {
	t.Parallel()
	want := safetyCLIFixtures(t)
	for name, b := range want {
		path := filepath.Join("../../fixtures/hostile", name)
		if *testutil.Update {
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v (regenerate with -update)", name, err)
			continue
		}
		if !bytes.Equal(got, b) {
			t.Errorf("%s differs from what TestSafetyCLIFixtures makes (regenerate with -update, or find what changed the writer)", name)
		}
	}
	if testing.Verbose() {
		for name, b := range want {
			fmt.Println(name, len(b))
		}
	}
}
