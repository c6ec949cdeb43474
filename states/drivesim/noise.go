package drivesim

import "math"

// Sensor noise is counter-based: sample n's noise is a hash of (seed, n)
// looked up in a table of standard-normal quantiles. So the samples depend
// only on the seed and the sample index, not on how the emulator chunks its
// Render calls, and a sample costs one hash and two loads (no allocation,
// no locking of a shared generator).

const gaussBits = 14

const gaussMask = 1<<gaussBits - 1

// gaussTable holds the standard-normal quantiles at (i+0.5)/N: a uniform
// index gives an exactly normal distribution, discretised to N levels and
// truncated at ±4.0 σ (the outermost quantile for N = 16384).
var gaussTable = func() (t [1 << gaussBits]float32) {
	n := float64(len(t))
	for i := range t {
		p := (float64(i) + 0.5) / n
		t[i] = float32(math.Sqrt2 * math.Erfinv(2*p-1))
	}
	return t
}()

// splitmix is SplitMix64's output function: a fast, well-mixed 64-bit hash.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
