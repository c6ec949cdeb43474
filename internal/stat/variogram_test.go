package stat

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// refVariogram is Variogram as it was before Add learned when the next
// difference is due: every reservoir asked about every reading. The
// reservoirs must keep the same differences, drawn with the same random
// lags, as it does.
type refVariogram struct {
	ring      []float64
	n         int
	lags, oct [numLags]refReservoir
	rs        uint64
}

type refReservoir struct {
	d      []float64
	stride int
	skip   int
}

func (r *refReservoir) take() bool {
	if r.skip > 0 {
		r.skip--
		return false
	}
	return true
}

func (r *refReservoir) keep(x float64) {
	if len(r.d) == reservoirCap {
		k := 0
		for i := 0; i < len(r.d); i += 2 {
			r.d[k] = r.d[i]
			k++
		}
		r.d = r.d[:k]
		r.stride = max(1, r.stride) * 2
	}
	r.d = append(r.d, x)
	r.skip = max(1, r.stride) - 1
}

func (v *refVariogram) Add(x float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return
	}
	const mask = ringLen - 1
	for j := 0; j < numLags; j++ {
		k := 1 << j
		if k > v.n {
			break
		}
		if v.lags[j].take() {
			v.lags[j].keep(math.Abs(x - v.ring[(v.n-k)&mask]))
		}
		if v.oct[j].take() {
			ko := k
			if j > 0 {
				if v.rs == 0 {
					v.rs = 0x9e3779b97f4a7c15
				}
				v.rs ^= v.rs << 13
				v.rs ^= v.rs >> 7
				v.rs ^= v.rs << 17
				ko = min(k+int(v.rs&uint64(k-1)), v.n)
			}
			v.oct[j].keep(math.Abs(x - v.ring[(v.n-ko)&mask]))
		}
	}
	if v.n < ringLen {
		v.ring = append(v.ring, x)
	} else {
		v.ring[v.n&mask] = x
	}
	v.n++
}

// TestOctaveDifferencesAreAtTheirLags: on a ramp (reading t is t) a
// difference is its lag, so every difference octave j keeps lies in
// [2^j, 2^(j+1)) and every exact lag's is 2^j — through AddAll and
// NoiseOf's held path alike, past the ring's wrap. A ring of MaxLag
// readings gave the top octave's upper half lags less MaxLag (down to 0).
func TestOctaveDifferencesAreAtTheirLags(t *testing.T) {
	xs := make([]float64, 5*ringLen+123)
	for i := range xs {
		xs[i] = float64(i)
	}
	check := func(name string, v *Variogram) {
		t.Helper()
		for j := range numLags {
			lo, hi := float64(int(1)<<j), float64(int(2)<<j)
			for _, d := range v.oct[j].d {
				if d < lo || d >= hi {
					t.Fatalf("%s: octave %d kept a difference at lag %g, outside [%g, %g)", name, j, d, lo, hi)
				}
			}
			for _, d := range v.lags[j].d {
				if d != lo {
					t.Fatalf("%s: lag %g kept a difference at lag %g", name, lo, d)
				}
			}
			if len(v.oct[j].d) == 0 {
				t.Fatalf("%s: octave %d kept nothing", name, j)
			}
		}
	}
	var v Variogram
	v.AddAll(xs)
	check("AddAll", &v)
	var h Variogram
	c := min(len(xs), reservoirCap)
	for j := range h.lags {
		h.lags[j].d = make([]float64, 0, c)
		h.oct[j].d = make([]float64, 0, c)
	}
	h.addHeld(xs)
	check("addHeld", &h)
}

// sameAsRef fails unless v kept exactly what ref kept.
func sameAsRef(t *testing.T, v *Variogram, ref *refVariogram) {
	t.Helper()
	if v.n != ref.n || v.rs != ref.rs || !slices.Equal(v.ring, ref.ring) {
		t.Fatalf("n %d/%d, rs %x/%x, rings equal %v", v.n, ref.n, v.rs, ref.rs, slices.Equal(v.ring, ref.ring))
	}
	for j := range numLags {
		for _, p := range []struct {
			name string
			a    *reservoir
			b    *refReservoir
		}{{"lag", &v.lags[j], &ref.lags[j]}, {"octave", &v.oct[j], &ref.oct[j]}} {
			if !slices.Equal(p.a.d, p.b.d) || p.a.stride != p.b.stride {
				t.Fatalf("%s %d: %d differences (stride %d), reference %d (stride %d)", p.name, j, len(p.a.d), p.a.stride, len(p.b.d), p.b.stride)
			}
		}
	}
	if a, b := v.Noise(), refNoise(ref); !reflect.DeepEqual(a, b) {
		t.Fatalf("noise %+v, reference %+v", a, b)
	}
}

// refNoise is the noise model of what ref kept.
func refNoise(ref *refVariogram) Noise {
	var v Variogram
	v.n, v.rs, v.ring = ref.n, ref.rs, ref.ring
	for j := range numLags {
		v.lags[j].d, v.lags[j].stride = ref.lags[j].d, ref.lags[j].stride
		v.oct[j].d, v.oct[j].stride = ref.oct[j].d, ref.oct[j].stride
	}
	return v.Noise()
}

// TestVariogramKeepsWhatEveryReadingDid: past the reservoirs' first
// halvings (strides up to 64 at the shortest lags) and the ring's wrap,
// with runs of one value, NaN and ±Inf among the readings.
func TestVariogramKeepsWhatEveryReadingDid(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var v Variogram
	var ref refVariogram
	x := 0.0
	for i := range 300_000 {
		switch r := rng.IntN(1000); {
		case r == 0:
			x = math.NaN()
		case r == 1:
			x = math.Inf(1 - 2*rng.IntN(2))
		case r < 600:
			// a run: the reading repeats
		default:
			x = 0.4 + 0.01*rng.NormFloat64()
		}
		v.Add(x)
		ref.Add(x)
		if i%50_000 == 0 {
			sameAsRef(t, &v, &ref)
		}
	}
	sameAsRef(t, &v, &ref)
	if v.lags[0].stride < 64 {
		t.Fatalf("stride %d: the test did not reach the halvings", v.lags[0].stride)
	}
}

// TestVariogramAddAllIsAdd: readings added in runs of 0 to 999 (AddAll,
// Add's body inlined) leave the Variogram exactly as Add one by one — NaN
// and ±Inf among them, past the ring's wrap and the first halvings.
func TestVariogramAddAllIsAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var one, all Variogram
	xs := make([]float64, 0, 1000)
	for one.N() < 200_000 {
		xs = xs[:rng.IntN(1000)]
		for i := range xs {
			switch r := rng.IntN(500); {
			case r == 0:
				xs[i] = math.NaN()
			case r == 1:
				xs[i] = math.Inf(1 - 2*rng.IntN(2))
			default:
				xs[i] = 0.4 + 0.01*rng.NormFloat64()
			}
			one.Add(xs[i])
		}
		all.AddAll(xs)
	}
	if !reflect.DeepEqual(one, all) {
		t.Fatalf("AddAll left another Variogram than Add: %d / %d readings, noise %+v / %+v", all.N(), one.N(), all.Noise(), one.Noise())
	}
}

// TestNoiseOfHeldIsAddAll: NoiseOf's path for finite readings held whole
// (addHeld) leaves the Variogram exactly as AddAll does — the same
// differences in every reservoir, bit for bit and in order, the same
// strides, generator and counts — at lengths about the reservoirs'
// halvings and the ring's wrap; and NoiseOf with a NaN among the readings
// (AddAll's path) gives what AddAll gives.
func TestNoiseOfHeldIsAddAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{0, 1, 2, 3, 17, 4095, 4096, 4097, 4098, 4099, 8192, 8193, 8194, 8195, 12289, 16384, 16385, 16386, 16387, 20000, 32769, 50001, 90000, 200003} {
		xs := make([]float64, n)
		x := 0.4
		for i := range xs {
			if rng.IntN(3) > 0 { // runs of one value, as quantised readings give
				x = 0.4 + 0.01*rng.NormFloat64()
			}
			xs[i] = x
		}
		var all, held Variogram
		all.AddAll(xs)
		c := min(n, reservoirCap)
		for j := range held.lags {
			held.lags[j].d = make([]float64, 0, c)
			held.oct[j].d = make([]float64, 0, c)
		}
		held.addHeld(xs)
		held.ring = all.ring
		for j := range held.lags { // nil and empty alike
			if len(all.lags[j].d) == 0 {
				held.lags[j].d, held.oct[j].d = all.lags[j].d, all.oct[j].d
			}
		}
		if !reflect.DeepEqual(all, held) {
			t.Fatalf("n %d: addHeld left another Variogram than AddAll: %s", n, variogramDiff(&held, &all))
		}
		if a, b := NoiseOf(xs), all.Noise(); !reflect.DeepEqual(a, b) {
			t.Fatalf("n %d: NoiseOf %+v, AddAll's %+v", n, a, b)
		}
		if n > 10 {
			xs[n/2] = math.NaN()
			var v Variogram
			v.AddAll(xs)
			if a, b := NoiseOf(xs), v.Noise(); !reflect.DeepEqual(a, b) {
				t.Fatalf("n %d with a NaN: NoiseOf %+v, AddAll's %+v", n, a, b)
			}
		}
	}
}

// variogramDiff is the first difference between a and b.
func variogramDiff(a, b *Variogram) string {
	if a.n != b.n || a.rs != b.rs || a.due != b.due {
		return fmt.Sprintf("n %d/%d, rs %d/%d, due %d/%d", a.n, b.n, a.rs, b.rs, a.due, b.due)
	}
	for j := range numLags {
		for o, pair := range [][2]*reservoir{{&a.lags[j], &b.lags[j]}, {&a.oct[j], &b.oct[j]}} {
			ra, rb := pair[0], pair[1]
			if ra.stride != rb.stride || ra.next != rb.next || len(ra.d) != len(rb.d) {
				return fmt.Sprintf("lag %d (octave %d): stride %d/%d, next %d/%d, %d/%d kept", j, o, ra.stride, rb.stride, ra.next, rb.next, len(ra.d), len(rb.d))
			}
			for i := range ra.d {
				if math.Float64bits(ra.d[i]) != math.Float64bits(rb.d[i]) {
					return fmt.Sprintf("lag %d (octave %d): difference %d: %v/%v", j, o, i, ra.d[i], rb.d[i])
				}
			}
		}
	}
	return "elsewhere (ring, tmp)"
}

// FuzzVariogram: any stream of readings keeps what the reference kept.
func FuzzVariogram(f *testing.F) {
	f.Add([]byte{1, 2, 3, 0, 255, 7, 7, 7, 7})
	f.Fuzz(func(t *testing.T, data []byte) {
		var v Variogram
		var ref refVariogram
		// Each byte is a reading, repeated (a run) by its low bits' count:
		// up to 8 × len(data) readings.
		for _, b := range data {
			x := float64(b>>3) / 7
			switch b >> 3 {
			case 0:
				x = math.NaN()
			case 31:
				x = math.Inf(1)
			}
			for range int(b&7) + 1 {
				v.Add(x)
				ref.Add(x)
			}
		}
		sameAsRef(t, &v, &ref)
	})
}

// FuzzNoiseOfIsAddAll: NoiseOf's held path (finite readings, no ring) gives
// the noise model AddAll gives, for any readings — runs of one value, steps,
// lengths about the reservoirs' halvings and the ring's wrap (each byte a
// reading repeated up to 64 times, then the whole repeated to reach past
// 2·MaxLag readings when the last byte asks).
func FuzzNoiseOfIsAddAll(f *testing.F) {
	f.Add([]byte{1, 2, 3, 0, 255, 7, 7, 7, 7}, uint16(0))
	f.Add([]byte{9, 200, 41, 41, 41, 3}, uint16(40000))
	f.Fuzz(func(t *testing.T, data []byte, n uint16) {
		var xs []float64
		for _, b := range data {
			for range int(b&63) + 1 {
				xs = append(xs, float64(b>>6)*0.25+float64(b)*1e-4)
			}
		}
		for len(xs) > 0 && len(xs) < int(n) {
			xs = append(xs, xs[:min(len(xs), int(n)-len(xs))]...)
		}
		var all Variogram
		all.AddAll(xs)
		if a, b := fmt.Sprintf("%#v", NoiseOf(xs)), fmt.Sprintf("%#v", all.Noise()); a != b {
			t.Fatalf("%d readings: NoiseOf %s, AddAll's %s", len(xs), a, b)
		}
	})
}

// BenchmarkVariogramAdd: one op is one reading of a noisy stream, after
// the reservoirs' strides have grown (a long capture's steady state).
func BenchmarkVariogramAdd(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, 1<<16)
	for i := range xs {
		xs[i] = 0.4 + 0.01*rng.NormFloat64()
	}
	var v Variogram
	for i := range 1 << 20 {
		v.Add(xs[i&(len(xs)-1)])
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v.Add(xs[i&(len(xs)-1)])
	}
}

// BenchmarkNoiseOf: the noise model of a DevSlp cycle's worth of readings
// (50 000, AR(1) noise with level steps), as the judge takes it several
// times per cycle.
func BenchmarkNoiseOf(b *testing.B) {
	rng := rand.New(rand.NewPCG(15, 16))
	xs := ar1(rng, 50_000, 0.001, 3)
	for i := range xs {
		if (i/5000)%2 == 1 {
			xs[i] += 0.2
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		NoiseOf(xs)
	}
}
