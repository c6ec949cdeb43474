package analysis

import (
	"math"
	"math/rand/v2"
	"testing"
)

// A quantised meter's step is found from its noisy readings, whatever the
// LSB, the noise (0.05–1 LSB) and the levels drawn; readings that change
// only where the level steps show none.
func TestReadingQuantumDrawn(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 7))
	for i := range 40 {
		lsb := math.Exp(math.Log(17.5e-6) + rng.Float64()*math.Log(50e-3/17.5e-6)) // W per count
		sigma := (0.05 + 0.95*rng.Float64()) * lsb
		var q readingQuantum
		q.q = math.Inf(1)
		var quiet uint64
		for range 4 { // four levels, 2 s each at 10 kS/s
			level := (5 + 200*rng.Float64()) * lsb
			run := make([]float64, 20000)
			for k := range run {
				run[k] = float64(float32(math.Round((level+sigma*rng.NormFloat64())/lsb) * lsb))
			}
			q.add(run)
			quiet += uint64(len(run))
		}
		if got := q.step(quiet); math.Abs(got-lsb) > 1e-3*lsb {
			t.Errorf("drive %d: LSB %.4g W, σ %.2f LSB: quantum %.4g W (%d steps)", i, lsb, sigma/lsb, got, q.n)
		}
		var clean readingQuantum
		clean.q = math.Inf(1)
		run := make([]float64, 0, 200000)
		for c := range 10 { // ten level steps in 20 s of noise-free readings
			level := float64(float32(0.006 + 0.4*float64(c%2) + lsb*float64(c)))
			for range 20000 {
				run = append(run, level)
			}
		}
		clean.add(run)
		if got := clean.step(uint64(len(run))); !math.IsInf(got, 1) {
			t.Errorf("drive %d: noise-free readings with 9 level steps gave a quantum of %.4g W", i, got)
		}
	}
}
