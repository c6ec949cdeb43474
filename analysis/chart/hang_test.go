package chart

import (
	"math/rand/v2"
	"testing"
)

func TestHangHunt(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	f := func(data []byte, mode uint8) {}
	_ = f
	for it := 0; it < 3000; it++ {
		n := r.IntN(200)
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(r.Uint32())
			if r.IntN(3) == 0 {
				data[i] = []byte{0, 0x7f, 0xff, 0xf0, 0x40, 0x3f}[r.IntN(6)]
			}
		}
		fuzzBody(t, data, uint8(r.Uint32()))
	}
}
