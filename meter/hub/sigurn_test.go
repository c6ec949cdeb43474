package hub

import (
	"math/rand"
	"testing"

	"github.com/sigurn/crc16"
)

// The frame CRC is github.com/sigurn/crc16's CRC16_CCITT_FALSE; this
// package computes it slicing-by-8. Pin the parameters and the equality.
func TestCRCIsSigurnCCITTFalse(t *testing.T) {
	p := crc16.CRC16_CCITT_FALSE
	if p.Poly != crcPoly || p.Init != crcInit || p.RefIn || p.RefOut || p.XorOut != 0 || p.Check != 0x29B1 {
		t.Fatalf("sigurn CRC16_CCITT_FALSE params changed: %+v", p)
	}
	tab := crc16.MakeTable(p)
	r := rand.New(rand.NewSource(2))
	for n := range 300 {
		b := make([]byte, n)
		r.Read(b)
		if got, want := CRC16(b), crc16.Checksum(b, tab); got != want {
			t.Fatalf("len %d: %#04x, sigurn %#04x", n, got, want)
		}
	}
}
