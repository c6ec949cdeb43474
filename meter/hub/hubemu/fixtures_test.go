package hubemu

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/internal/testutil"
)

var update = testutil.Update // -update: rewrite the fixtures/hostile/hub-*.bin streams of TestHostileFixtures

// hostileFixtures are recorded hub streams with hostile frames for the
// hostile-input suite (fixtures/hostile/cases.txt, section safety-hub):
// 1 s of a 2-port hub at 1 kHz streaming port 1 only, so port 2 is a port
// the ACK of START never acknowledged.
var hostileFixtures = map[string]Options{
	// v1: an EVENT of 15 bytes, an EVENT of kind 0xEE, a frame of type
	// 0x9F, a block of port 2 (never started), a SAMPLES one byte short.
	"hub-hostile-v1.bin": {Ports: 2, Protocol: 1, Faults: Faults{Inject: []Injection{
		{At: 100, Kind: InjectEventShort}, {At: 200, Kind: InjectEventKind}, {At: 300, Kind: InjectUnknownType},
		{At: 400, Kind: InjectForeignPorts}, {At: 500, Kind: InjectSamplesShort}}}},
	// v2 packed: the same, the short block a SAMPLES2, and a v1 SAMPLES.
	"hub-hostile-v2.bin": {Ports: 2, Faults: Faults{Inject: []Injection{
		{At: 100, Kind: InjectEventShort}, {At: 200, Kind: InjectEventKind}, {At: 300, Kind: InjectUnknownType},
		{At: 400, Kind: InjectForeignPorts}, {At: 500, Kind: InjectSamplesShort}, {At: 600, Kind: InjectSamplesOnV2}}}},
	// The hub's count jumps to 2⁶⁴ − 300 at sample 400 and wraps past 2⁶⁴.
	"hub-counter-wrap.bin": {Ports: 2, Faults: Faults{Inject: []Injection{{At: 400, Kind: InjectCounterJump, To: 1<<64 - 300}}}},
}

// TestHostileFixtures: the checked-in streams are what WriteFast makes
// (go test -run TestHostileFixtures -update rewrites them).
func TestHostileFixtures(t *testing.T) {
	for name, o := range hostileFixtures {
		o.Rate, o.Seed, o.StreamPorts = 1000, 26, []int{1}
		var b bytes.Buffer
		if err := WriteFast(&b, o, time.Second); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("..", "..", "..", "fixtures", "hostile", name)
		if *update {
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test -run TestHostileFixtures -update writes it)", err)
		}
		if !bytes.Equal(old, b.Bytes()) {
			t.Errorf("%s differs from what WriteFast makes (go test -run TestHostileFixtures -update rewrites it)", name)
		}
	}
}
