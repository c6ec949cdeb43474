package scpi

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// ParseArray decodes an array reply into dst (reset first): ASCII readings
// separated by commas, or an IEEE 488.2 definite-length block
// `#<d><len><bytes>` of float32 big-endian readings (FORM REAL). An
// over-range reading (9.9E37 and above, NaN or Inf in a block) is NaN in
// dst, for the stream to report as a gap; anything malformed is an error
// naming the byte offset. dst's storage is reused: with room for the
// readings, ParseArray allocates nothing.
func ParseArray(dst []float64, reply []byte) ([]float64, error) {
	dst = dst[:0]
	if len(reply) > 0 && reply[0] == '#' {
		body, rest, err := splitBlock(reply)
		if err != nil {
			return dst, err
		}
		if len(bytes.TrimRight(rest, "\r\n")) != 0 {
			return dst, fmt.Errorf("scpi: %d bytes after the block at offset %d", len(rest), len(reply)-len(rest))
		}
		if len(body)%4 != 0 {
			return dst, fmt.Errorf("scpi: block of %d bytes is not whole float32 readings", len(body))
		}
		for i := 0; i < len(body); i += 4 {
			x := float64(math.Float32frombits(binary.BigEndian.Uint32(body[i:])))
			if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) >= overflow {
				x = math.NaN()
			}
			dst = append(dst, x)
		}
		if len(dst) == 0 {
			return dst, errors.New("scpi: empty block: no readings")
		}
		return dst, nil
	}
	s := bytes.TrimRight(reply, "\r\n")
	if len(bytes.TrimSpace(s)) == 0 {
		return dst, errors.New("scpi: empty array reply: no readings")
	}
	off := 0
	for off <= len(s) {
		end := bytes.IndexByte(s[off:], ',')
		if end < 0 {
			end = len(s) - off
		}
		field := bytes.TrimSpace(s[off : off+end])
		x, err := parseArrayField(field)
		if err != nil {
			return dst, fmt.Errorf("scpi: array reading %d at byte %d: %w", len(dst)+1, off, err)
		}
		dst = append(dst, x)
		off += end + 1
	}
	return dst, nil
}

func parseArrayField(f []byte) (float64, error) {
	f = bytes.TrimRight(f, "AaVvWw \t")
	if len(f) == 0 {
		return 0, errors.New("empty")
	}
	// Only digits, signs, '.', 'e' and 'E' make a SCPI number: "nan", "inf"
	// and "0x1p-2" are not readings, though ParseFloat takes them.
	for _, c := range f {
		if !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.' || c == 'e' || c == 'E') {
			return 0, fmt.Errorf("%q is not a number", trunc(string(f)))
		}
	}
	x, err := strconv.ParseFloat(string(f), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%q is not a number", trunc(string(f)))
	}
	if math.IsInf(x, 0) || math.Abs(x) >= overflow {
		return math.NaN(), nil
	}
	return x, nil
}

// splitBlock splits `#<d><len><bytes>…` into the block's bytes and what
// follows.
func splitBlock(b []byte) (body, rest []byte, err error) {
	n, hdr, err := blockHeader(b)
	if err != nil {
		return nil, nil, err
	}
	if n > len(b)-hdr {
		return nil, nil, fmt.Errorf("scpi: block declares %d bytes, %d follow its header", n, len(b)-hdr)
	}
	return b[hdr : hdr+n], b[hdr+n:], nil
}

// blockHeader parses a definite-length block header at b[0]: the body's
// length and the header's. `#0` (indefinite length) is refused: float32
// bytes may hold the newline that would end it.
func blockHeader(b []byte) (n, hdr int, err error) {
	if len(b) < 2 || b[0] != '#' {
		return 0, 0, errors.New("scpi: block does not start with #<digit>")
	}
	d := int(b[1] - '0')
	switch {
	case b[1] == '0':
		return 0, 0, errors.New("scpi: indefinite-length block (#0): set a definite-length format")
	case d < 1 || d > 9:
		return 0, 0, fmt.Errorf("scpi: block header byte 1 is %q, not a digit 1–9", b[1])
	case len(b) < 2+d:
		return 0, 0, fmt.Errorf("scpi: block header cut short: %d of %d length digits", len(b)-2, d)
	}
	for i, c := range b[2 : 2+d] {
		if c < '0' || c > '9' {
			return 0, 0, fmt.Errorf("scpi: block length byte %d is %q, not a digit", 2+i, c)
		}
		n = n*10 + int(c-'0')
	}
	return n, 2 + d, nil
}

// readArrayReply reads one array reply from br into buf (reset first; the
// caller owns it and may reuse it): a line, or a definite-length block of at
// most max bytes. A block's terminating newline may not have arrived yet:
// nl says it is still owed, for the next line read to skip.
func readArrayReply(br *bufio.Reader, buf []byte, max int) (reply []byte, nl bool, err error) {
	buf = buf[:0]
	first, err := br.Peek(1)
	if err != nil {
		return buf, false, err
	}
	if first[0] != '#' {
		for {
			line, err := br.ReadSlice('\n')
			buf = append(buf, line...)
			if len(buf) > max {
				return buf, false, fmt.Errorf("scpi: array reply longer than %d bytes", max)
			}
			if err == nil {
				return buf, false, nil
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				return buf, false, err
			}
		}
	}
	head, err := br.Peek(2)
	if err != nil {
		return buf, false, err
	}
	d := int(head[1] - '0')
	if head[1] == '0' || d < 1 || d > 9 {
		_, _, herr := blockHeader(head)
		return buf, false, herr
	}
	if head, err = br.Peek(2 + d); err != nil {
		return buf, false, err
	}
	n, hdr, err := blockHeader(head)
	if err != nil {
		return buf, false, err
	}
	if n > max {
		return buf, false, fmt.Errorf("scpi: block of %d bytes, more than the %d expected", n, max)
	}
	if cap(buf) < hdr+n {
		buf = make([]byte, 0, hdr+n)
	}
	buf = buf[:hdr+n]
	if _, err := io.ReadFull(br, buf); err != nil {
		return buf, false, err
	}
	// The terminator usually came with the block; if not, it is owed.
	for br.Buffered() > 0 {
		c, _ := br.ReadByte()
		if c == '\n' {
			return buf, false, nil
		}
		if c != '\r' {
			br.UnreadByte()
			break
		}
	}
	return buf, true, nil
}
