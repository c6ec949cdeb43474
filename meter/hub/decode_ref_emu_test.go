package hub_test

import (
	"bytes"
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
	"github.com/idlewatt/idlewatt/units"
)

// The emulator's streams decode as the reference decoder decodes them
// (decode_ref_test.go): every sample format, protocol 1 to 3, quiet and
// noisy drives, 1 to 8 ports, and the faults a link suffers — corrupted,
// dropped and truncated bytes, stalls that overrun the hub's buffer,
// disconnects, hostile frames — whole, and with the sink failing midway.
func TestDecodeMatchesReferenceEmulated(t *testing.T) {
	faults := []hubemu.Faults{
		{},
		{CorruptRate: 1e-3},
		{DropRate: 3e-4, TruncateRate: 0.01},
		{StallEvery: 300 * time.Millisecond, StallFor: 100 * time.Millisecond, DisconnectEvery: 700 * time.Millisecond, DisconnectFor: 50 * time.Millisecond},
		{Inject: []hubemu.Injection{{At: 500, Kind: hubemu.InjectSamplesShort}, {At: 900, Kind: hubemu.InjectForeignPorts},
			{At: 1300, Kind: hubemu.InjectEventKind}, {At: 1700, Kind: hubemu.InjectUnknownType}, {At: 3000, Kind: hubemu.InjectCounterJump, To: 1<<64 - 2000}}},
	}
	rng := rand.New(rand.NewSource(7))
	n := 0
	for _, c := range []struct {
		ports, protocol int
		format          uint8
		rail3v3         bool
		rate            units.Hertz
	}{
		{4, 2, hub.FormatPacked, false, 10000}, {1, 2, hub.FormatPacked, false, 10000}, {8, 2, hub.FormatPacked, false, 5000},
		{5, 3, hub.FormatPacked, true, 5000}, {4, 2, hub.Format20, false, 10000}, {4, 2, hub.Format16, false, 10000}, {2, 1, 0, false, 1000},
	} {
		for _, noisy := range []bool{false, true} {
			for fi, f := range faults {
				if c.protocol == 1 && fi == len(faults)-1 {
					continue // the injections above are v2 ones
				}
				o := hubemu.Options{Ports: c.ports, Protocol: c.protocol, Format: c.format, Rail3V3: c.rail3v3,
					Rate: c.rate, Seed: int64(n), Faults: f}
				if noisy {
					o.Drives = make([]meter.SimDrive, c.ports)
					for p := range o.Drives {
						o.Drives[p] = noisyDrive{i5: 0.080, i12: 0.300, sigmaA: 0.5e-3, mu: new(sync.Mutex), rng: rand.New(rand.NewSource(int64(p)))}
					}
				}
				var b bytes.Buffer
				if err := hubemu.WriteFast(&b, o, 400*time.Millisecond); err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("%d ports v%d format %d noisy %v faults %d", c.ports, c.protocol, c.format, noisy, fi)
				if d := hub.MatchesReference(b.Bytes(), 0); d != "" {
					t.Fatalf("%s: %s", name, d)
				}
				if d := hub.MatchesReference(b.Bytes(), 1+rng.Intn(200)); d != "" {
					t.Fatalf("%s, the sink failing: %s", name, d)
				}
				n++
			}
		}
	}
	if n != 68 {
		t.Fatalf("%d streams compared, want 68", n)
	}
}
