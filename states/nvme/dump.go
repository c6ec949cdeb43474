package nvme

import (
	"fmt"
	"io"

	"github.com/idlewatt/idlewatt/states/hexdump"
)

// Hex dumps of the raw structures (xxd, hexdump -C, od -A x -t x1,
// nvme-cli's own; states/hexdump has the rules).

func sniffDump(b []byte) bool { return hexdump.Looks(b) }

func readDump(r io.Reader, want int, what string) ([]byte, hexdump.Layout, error) {
	d, err := hexdump.Parse(io.LimitReader(r, maxInput))
	if err != nil {
		return nil, "", fmt.Errorf("%s hex dump: %w", what, err)
	}
	if len(d.Bytes) != want {
		more := "truncated?"
		if len(d.Bytes) > want {
			more = "a different structure?"
		}
		return nil, d.Layout, fmt.Errorf("%s %s: %d bytes, want %d (%s)", what, d.Layout, len(d.Bytes), want, more)
	}
	return d.Bytes, d.Layout, nil
}

func readIdentifyDump(r io.Reader) (*Identify, error) {
	b, _, err := readDump(r, IdentifySize, "identify controller")
	if err != nil {
		return nil, err
	}
	return DecodeIdentify(b)
}

func readAPSTDump(r io.Reader) (*APST, error) {
	b, _, err := readDump(r, APSTTableSize, "APST table")
	if err != nil {
		return nil, err
	}
	return decodeAPSTBinary(b)
}
