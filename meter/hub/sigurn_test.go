package hub

import (
	"math/rand"
	"testing"

	"github.com/sigurn/crc16"
)

var sigurnTab = crc16.MakeTable(crc16.CRC16_CCITT_FALSE)

// The frame CRC is github.com/sigurn/crc16's CRC16_CCITT_FALSE; this
// package computes it slicing-by-16. Pin the parameters, the published
// check value and the equality.
func TestCRCIsSigurnCCITTFalse(t *testing.T) {
	p := crc16.CRC16_CCITT_FALSE
	if p.Poly != crcPoly || p.Init != crcInit || p.RefIn || p.RefOut || p.XorOut != 0 || p.Check != crcCheck {
		t.Fatalf("sigurn CRC16_CCITT_FALSE params changed: %+v", p)
	}
	check := []byte("123456789")
	if got, ref := CRC16(check), crc16.Checksum(check, sigurnTab); got != crcCheck || ref != crcCheck {
		t.Fatalf(`CRC of "123456789": %#04x, sigurn %#04x, want %#04x`, got, ref, crcCheck)
	}
	r := rand.New(rand.NewSource(2))
	for n := range 300 {
		b := make([]byte, n)
		r.Read(b)
		if got, want := CRC16(b), crc16.Checksum(b, sigurnTab); got != want {
			t.Fatalf("len %d: %#04x, sigurn %#04x", n, got, want)
		}
	}
}

// Random frames of every payload length class: the trailer AppendFrame
// writes is sigurn's CRC of type … payload, most significant byte first,
// and the CRC run over type … trailer is 0.
func TestFrameCRCIsSigurn(t *testing.T) {
	r := rand.New(rand.NewSource(31))
	for range 2000 {
		p := make([]byte, r.Intn(MaxPayload+1))
		r.Read(p)
		f := AppendFrame(nil, Type(r.Intn(256)), byte(r.Intn(256)), p)
		body := f[2 : len(f)-TrailerLen]
		want := crc16.Checksum(body, sigurnTab)
		if got := uint16(f[len(f)-2])<<8 | uint16(f[len(f)-1]); got != want {
			t.Fatalf("%d-byte payload: trailer %#04x, sigurn %#04x", len(p), got, want)
		}
		if c := CRC16(f[2:]); c != 0 {
			t.Fatalf("%d-byte payload: CRC over type … trailer %#04x, want 0", len(p), c)
		}
	}
}

// FuzzCRC16: on any bytes, split anywhere, the slicing CRC fed in two
// parts equals sigurn's over the whole.
func FuzzCRC16(f *testing.F) {
	f.Add([]byte("123456789"), 4)
	f.Add(make([]byte, 37), 0)
	f.Fuzz(func(t *testing.T, b []byte, split int) {
		want := crc16.Checksum(b, sigurnTab)
		if got := CRC16(b); got != want {
			t.Fatalf("%d bytes: %#04x, sigurn %#04x", len(b), got, want)
		}
		if len(b) == 0 {
			return
		}
		s := (split%len(b) + len(b)) % len(b)
		if got := crcUpdate(crcUpdate(crcInit, b[:s]), b[s:]); got != want {
			t.Fatalf("%d bytes split at %d: %#04x, sigurn %#04x", len(b), s, got, want)
		}
	})
}
