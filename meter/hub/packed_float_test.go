package hub

import (
	"math/rand"
	"testing"
)

// runEnd finds where a repeating bit stream stops repeating exactly where
// comparing it bit by bit does: streams repeating with every period of 1
// to 56 bits, then noise, searched from every kind of start to every kind
// of end.
func TestRunEnd(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	bit := func(p []byte, x int) byte { return p[x>>3] >> (7 - x&7) & 1 }
	for trial := range 100000 {
		n := 1 + rng.Intn(40)
		p := make([]byte, n+32) // runEnd reads 8 bytes at a bit: the zeros after the stream
		period := 1 + rng.Intn(56)
		pat, cut := rng.Uint64(), rng.Intn(8*n+1)
		for x := range 8 * n {
			b := byte(rng.Intn(2))
			if x < cut {
				b = byte(pat >> (x % period) & 1)
			}
			p[x>>3] |= b << (7 - x&7)
		}
		from := period + rng.Intn(8*n)
		end := min(8*n, from+rng.Intn(8*n+1))
		if from > end {
			continue
		}
		want := end
		for x := from; x < end; x++ {
			if bit(p, x) != bit(p, x-period) {
				want = x
				break
			}
		}
		if got := runEnd(p, from, end, uint(period)); got != want {
			t.Fatalf("trial %d: period %d, bits %d–%d of %d: %d, bit by bit %d", trial, period, from, end, 8*n, got, want)
		}
	}
}

// zeroSet is the bits of a set whose every delta is 0: per channel a
// bus code "1" and kb zeros, then a current code "1" and ki zeros; none
// when they would not fit a refilled window.
func TestZeroSet(t *testing.T) {
	chs := []packedChan{{kb: 0, ki: 0}, {kb: 2, ki: 3}, {kb: 1, ki: 0}}
	pat, n := zeroSet(chs)
	// 1 1 | 100 1000 | 10 1
	if want := uint64(0b11_1001000_101); pat != want || n != 12 {
		t.Fatalf("zeroSet = %b, %d bits; want %b, 12", pat, n, want)
	}
	wide := make([]packedChan, 3)
	for j := range wide {
		wide[j].ki = 20
	}
	if _, n := zeroSet(wide); n != 0 {
		t.Fatalf("3 channels of 22+ bits: %d bits, want none", n)
	}
}
