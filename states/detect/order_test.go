package detect

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
)

// insertSorted and removeSorted kept the Classifier's windows in order on
// every sample before sortedWin: the reference its medians must equal.
func insertSorted(xs []float64, k float64) []float64 {
	i := sort.SearchFloat64s(xs, k)
	xs = append(xs, 0)
	copy(xs[i+1:], xs[i:])
	xs[i] = k
	return xs
}

func removeSorted(xs []float64, k float64) []float64 {
	i := sort.SearchFloat64s(xs, k)
	if i < len(xs) && xs[i] == k {
		xs = append(xs[:i], xs[i+1:]...)
	}
	return xs
}

// streamOf turns fuzz bytes into sort keys: few distinct values (runs and
// ties), ±0, ±Inf (a NaN's key is −Inf).
func streamOf(data []byte) []float64 {
	ks := make([]float64, 0, len(data))
	for _, b := range data {
		var k float64
		switch b % 16 {
		case 0:
			k = math.Copysign(0, -1)
		case 1:
			k = math.Inf(-1)
		case 2:
			k = math.Inf(1)
		default:
			k = float64(b%16) / 4
		}
		ks = append(ks, k)
	}
	return ks
}

// sameMedians drives a sortedWin the way the Classifier does — the window
// of the last n keys, or of those among them not marked busy, asked for
// its median only now and then (bit 4 of a byte), rebuilt from the ring
// when it was let go — and fails where its median is not the reference's.
func sameMedians(t *testing.T, data []byte, n int, idleOnly bool) {
	ks := streamOf(data)
	busy := make([]bool, len(ks))
	for i, b := range data {
		busy[i] = idleOnly && b&0x20 != 0
	}
	var s sortedWin
	s.alloc(n)
	var ref []float64
	for i, k := range ks {
		if i >= n {
			out := ks[i-n]
			if !busy[i-n] {
				ref = removeSorted(ref, out)
			}
			s.update(out, !busy[i-n], k, !busy[i])
		} else {
			s.update(0, false, k, !busy[i])
		}
		if !busy[i] {
			ref = insertSorted(ref, k)
		}
		if data[i]&0x10 == 0 || len(ref) == 0 {
			continue
		}
		if !s.live {
			s.rebuild()
			for j := max(0, i-n+1); j <= i; j++ {
				if !busy[j] {
					s.put(ks[j])
				}
			}
			s.sort()
		}
		if s.n != len(ref) {
			t.Fatalf("sample %d: %d keys, reference %d", i, s.n, len(ref))
		}
		if got, want := s.at(s.n/2), ref[len(ref)/2]; got != want {
			t.Fatalf("sample %d (window %d): median %v, reference %v", i, n, got, want)
		}
	}
}

// FuzzSortedWindow: sortedWin's medians are those of the window kept in
// order on every sample.
func FuzzSortedWindow(f *testing.F) {
	f.Add([]byte{3, 19, 4, 20, 5, 21, 255, 0, 16, 17, 18, 50, 60, 70, 16, 16, 16, 16})
	f.Add([]byte{0x13, 0x33, 0x14, 0x34, 0x35, 0x15, 0x16, 0x36, 0x17, 0x37, 0x18})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, n := range []int{1, 3, 11, 31} {
			sameMedians(t, data, n, false)
			sameMedians(t, data, n, true)
		}
	})
}

// TestSortedWindowRandom: long noisy streams with runs, windows up to
// the adaptive maximum's size.
func TestSortedWindowRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{5, 101, 1001} {
		data := make([]byte, 20*n)
		for i := range data {
			if i > 0 && rng.IntN(3) == 0 {
				data[i] = data[i-1]&0xcf | byte(rng.IntN(4))<<4 // a run: same key, new flags
				continue
			}
			data[i] = byte(rng.IntN(256))
		}
		sameMedians(t, data, n, false)
		sameMedians(t, data, n, true)
	}
}

// refOnline is Online as it was: the window sorted by insertion on every
// sample without I/O.
type refOnline struct {
	th      thresholds
	rw      []float64
	scratch []float64
	pos, n  int
}

func (o *refOnline) Classify(w units.Watts, busy bool) powerstate.State {
	o.rw[o.pos] = float64(w)
	o.pos = (o.pos + 1) % len(o.rw)
	if o.n < len(o.rw) {
		o.n++
	}
	if busy {
		return powerstate.Active
	}
	sc := o.scratch[:o.n]
	for i := 0; i < o.n; i++ {
		x := o.rw[(o.pos-1-i+2*len(o.rw))%len(o.rw)]
		j := i
		for ; j > 0 && sc[j-1] > x; j-- {
			sc[j] = sc[j-1]
		}
		sc[j] = x
	}
	return o.th.classify(sc[o.n/2])
}

func (o *refOnline) Reset() { o.n, o.pos = 0, 0 }

// onlineSame fails where Online's label differs from the reference's over
// the powers ws (busy by bit 0 of flags, a Reset at bit 1).
func onlineSame(t *testing.T, ws []float64, flags []byte, smooth time.Duration) {
	o, err := NewOnline(profile, period, smooth)
	if err != nil {
		t.Fatal(err)
	}
	n := len(o.rw)
	ref := &refOnline{th: profile.compile(), rw: make([]float64, n), scratch: make([]float64, n)}
	for i, w := range ws {
		busy := flags[i]&1 != 0
		if got, want := o.Classify(units.Watts(w), busy), ref.Classify(units.Watts(w), busy); got != want {
			t.Fatalf("sample %d (%v, busy %v, window %d): %v, reference %v", i, w, busy, n, got, want)
		}
		if flags[i]&2 != 0 {
			o.Reset()
			ref.Reset()
		}
	}
}

// FuzzOnline: Online labels every sample as the insertion sort of its
// window did, NaN included.
func FuzzOnline(f *testing.F) {
	f.Add([]byte{40, 40, 40, 40, 40, 40, 10, 10, 10, 10, 10, 10, 10, 0, 200, 10, 10})
	f.Fuzz(func(t *testing.T, data []byte) {
		ws := make([]float64, len(data))
		flags := make([]byte, len(data))
		for i, b := range data {
			// Six values about the profile's levels and thresholds, and NaN.
			ws[i] = []float64{math.NaN(), 0.0025, 0.03, 0.06, 0.3, 0.4, 3}[int(b>>2)%7]
			flags[i] = 0
			if b&3 == 1 {
				flags[i] = 1
			}
			if b == 255 {
				flags[i] = 2
			}
		}
		for _, smooth := range []time.Duration{period, 3 * period, time.Millisecond} {
			onlineSame(t, ws, flags, smooth)
		}
	})
}

// TestOnlineRandom: noisy levels with steps, I/O, and resets.
func TestOnlineRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	levels := []float64{0.4, 0.3, 0.06, 0.0025}
	ws := make([]float64, 200_000)
	flags := make([]byte, len(ws))
	lv := 0
	for i := range ws {
		if rng.IntN(500) == 0 {
			lv = rng.IntN(len(levels))
		}
		ws[i] = levels[lv] + 0.02*rng.NormFloat64()
		if rng.IntN(50_000) == 0 {
			ws[i] = math.NaN()
		}
		if rng.IntN(100) == 0 {
			flags[i] = 1
		}
		if rng.IntN(20_000) == 0 {
			flags[i] |= 2
		}
	}
	for _, smooth := range []time.Duration{time.Millisecond, 10 * time.Millisecond} {
		onlineSame(t, ws, flags, smooth)
	}
}

// BenchmarkOnlineClassify: one op is one sample of a noisy trace with a
// transition every 1000 samples.
func BenchmarkOnlineClassify(b *testing.B) {
	o, _ := NewOnline(profile, period, 0)
	ws := benchTrace(0.002)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o.Classify(units.Watts(ws[i&(len(ws)-1)]), false)
	}
}
