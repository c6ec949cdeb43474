package capture

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestRiceBeatsZstd is the measurement behind the count coder's choice
// (docs/capture-format.md §Count streams): on a meter's counts — a level
// plus Gaussian noise, as the emulator's drives give — per 2 500-sample
// chunk (one 250 ms flush at 10 kS/s), the Rice coder against zstd (best
// compression) over the same counts as int16 deltas, zigzagged.
func TestRiceBeatsZstd(t *testing.T) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	rng := rand.New(rand.NewPCG(9, 10))
	var ce countEncoder
	const n, chunks = 2500, 20
	for _, sig := range []float64{0, 1, 10, 60} {
		var rice, zs int
		xs := make([]int32, n)
		raw := make([]byte, 0, 2*n)
		for range chunks {
			raw = raw[:0]
			prev := int32(0)
			for k := range xs {
				xs[k] = int32(8000 + math.Round(rng.NormFloat64()*sig))
				d := uint16(zigzag(int64(xs[k] - prev)))
				raw = append(raw, byte(d), byte(d>>8))
				prev = xs[k]
			}
			rice += len(ce.appendCountStream(nil, xs))
			zs += len(enc.EncodeAll(raw, nil))
		}
		t.Logf("σ %g counts: Rice %.3f B/value, zstd(deltas) %.3f B/value", sig, float64(rice)/(n*chunks), float64(zs)/(n*chunks))
		// A constant costs both next to nothing (Rice: 2 bits per 256 values).
		if sig == 0 && rice < n*chunks/50 {
			continue
		}
		if rice > zs {
			t.Errorf("σ %g counts: Rice %d bytes, zstd %d", sig, rice, zs)
		}
	}
}
