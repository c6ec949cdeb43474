package analysis

import (
	"math/rand/v2"
	"testing"
)

// TestTwoWays: the fine steps' telegraph (telegraphStep's second reading)
// must step both ways about two or more levels. Drawn: a telegraph of
// size s about two levels a gap g apart (g 0.7–3 s: the midpoints form two
// clusters), against the drive's own changes of one size — DIPM steps
// down only, DevSlp cycles up and down about one point, GC bursts of one
// size from one level — each with block noise of a twentieth of s.
func TestTwoWays(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for trial := range 50 {
		s := 1e-3 * (0.5 + 5*r.Float64())
		g := s * (0.7 + 2.3*r.Float64())
		lo := 1e-3 * 5 * r.Float64()
		jit := func() float64 { return s / 20 * r.NormFloat64() }
		var tel, dipm, cycles, gc []step
		for range 200 {
			l := lo
			if r.IntN(2) == 0 {
				l += g
			}
			if r.IntN(2) == 0 {
				tel = append(tel, step{l - s/2 + jit(), l + s/2 + jit()})
			} else {
				tel = append(tel, step{l + s/2 + jit(), l - s/2 + jit()})
			}
			dipm = append(dipm, step{lo + s + jit(), lo + jit()})
			if r.IntN(2) == 0 {
				cycles = append(cycles, step{lo + jit(), lo + s + jit()})
				gc = append(gc, step{lo + g + jit(), lo + g + s + jit()})
			} else {
				cycles = append(cycles, step{lo + s + jit(), lo + jit()})
				gc = append(gc, step{lo + g + s + jit(), lo + g + jit()})
			}
		}
		if !twoWays(tel, s) {
			t.Errorf("trial %d: a telegraph of %.2f mW about levels %.2f mW apart not seen", trial, s*1e3, g*1e3)
		}
		for name, st := range map[string][]step{"DIPM steps": dipm, "DevSlp cycles": cycles, "GC bursts": gc} {
			if twoWays(st, s) {
				t.Errorf("trial %d: %s of %.2f mW read as a telegraph", trial, name, s*1e3)
			}
		}
	}
}
