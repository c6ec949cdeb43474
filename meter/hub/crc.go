package hub

// The frame check is CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, not
// reflected, xorout 0x0000, check 0x29B1 — github.com/sigurn/crc16's
// crc16.CRC16_CCITT_FALSE. It is computed here with slicing-by-16 tables
// rather than through that package so the decoder's inner loop is one
// pass, sixteen bytes per step (sixteen independent table loads), with no
// per-byte function call; sigurn_test.go pins the parameters, the check
// value and equality with sigurn's on random inputs.

const (
	crcPoly  = 0x1021
	crcInit  = 0xFFFF
	crcCheck = 0x29B1 // CRC of "123456789"
)

// crcTab[k][b] is the register after feeding byte b followed by k zero bytes
// into a zero register; crcTab[0] is the classic byte-wise table.
var crcTab = func() (t [16][256]uint16) {
	for n := range 256 {
		c := uint16(n) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ crcPoly
			} else {
				c <<= 1
			}
		}
		t[0][n] = c
	}
	for k := 1; k < 16; k++ {
		for n := range 256 {
			p := t[k-1][n]
			t[k][n] = p<<8 ^ t[0][p>>8]
		}
	}
	return t
}()

// CRC16 returns the CRC-16/CCITT-FALSE of b.
func CRC16(b []byte) uint16 { return crcUpdate(crcInit, b) }

// crcUpdate feeds b into the register c.
func crcUpdate(c uint16, b []byte) uint16 {
	t := &crcTab
	for len(b) >= 16 {
		// The terms of bytes 2–15 do not depend on c: summed first, in
		// a tree, they are ready by the time c is, and c's own two terms
		// are the only ones its next value waits for.
		u := (t[13][b[2]] ^ t[12][b[3]]) ^ (t[11][b[4]] ^ t[10][b[5]]) ^
			(t[9][b[6]] ^ t[8][b[7]]) ^ (t[7][b[8]] ^ t[6][b[9]]) ^
			(t[5][b[10]] ^ t[4][b[11]]) ^ (t[3][b[12]] ^ t[2][b[13]]) ^
			(t[1][b[14]] ^ t[0][b[15]])
		x := c ^ (uint16(b[0])<<8 | uint16(b[1]))
		c = u ^ t[15][x>>8] ^ t[14][x&0xFF]
		b = b[16:]
	}
	if len(b) >= 8 {
		u := (t[5][b[2]] ^ t[4][b[3]]) ^ (t[3][b[4]] ^ t[2][b[5]]) ^ (t[1][b[6]] ^ t[0][b[7]])
		x := c ^ (uint16(b[0])<<8 | uint16(b[1]))
		c = u ^ t[7][x>>8] ^ t[6][x&0xFF]
		b = b[8:]
	}
	for _, v := range b {
		c = c<<8 ^ t[0][byte(c>>8)^v]
	}
	return c
}
