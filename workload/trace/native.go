package trace

import (
	"io"

	"github.com/idlewatt/idlewatt/workload"
)

// NativeHeader is the first line of a native trace.
const NativeHeader = "# idlewatt trace v1"

// NativeReader reads the native format: a NativeHeader line, then one op per
// line as "SECONDS OP OFFSET SIZE [FILE]", where SECONDS has up to nine
// fractional digits, OP is R, W, F or T, and OFFSET and SIZE are bytes.
// Blank lines and lines starting with '#' are skipped.
type NativeReader struct {
	l      *lines
	f      [6][]byte
	files  interner
	header bool
}

// NewNativeReader reads r; name is used in error messages.
func NewNativeReader(r io.Reader, name string) *NativeReader {
	return &NativeReader{l: newLines(r, name)}
}

// Next implements Reader.
func (n *NativeReader) Next() (Op, error) {
	for {
		b, err := n.l.next()
		if err != nil {
			return Op{}, err
		}
		if !n.header {
			if string(b) != NativeHeader {
				return Op{}, n.l.errf("expected %q as the first line", NativeHeader)
			}
			n.header = true
			continue
		}
		if len(b) == 0 || b[0] == '#' {
			continue
		}
		k := fields(b, n.f[:])
		if k < 4 || k > 5 {
			return Op{}, n.l.errf("expected \"SECONDS OP OFFSET SIZE [FILE]\", got %d fields", k)
		}
		var op Op
		var ok bool
		if op.Time, ok = parseSeconds(n.f[0]); !ok {
			return Op{}, n.l.errf("time %q: expected non-negative seconds with at most 9 decimals", n.f[0])
		}
		if op.Type, ok = nativeOp(n.f[1]); !ok {
			return Op{}, n.l.errf("op %q: expected R, W, F or T", n.f[1])
		}
		if op.Offset, ok = parseUint(n.f[2]); !ok {
			return Op{}, n.l.errf("offset %q: expected a non-negative integer (bytes)", n.f[2])
		}
		sz, ok := parseUint(n.f[3])
		if !ok || !sizeOK(sz) {
			return Op{}, n.l.errf("size %q: expected an integer from 0 to 2147483647 (bytes)", n.f[3])
		}
		op.Size = int32(sz)
		if op.Type == workload.OpFlush && (op.Offset != 0 || op.Size != 0) {
			// docs/trace-formats.md: a flush has offset and size 0. One
			// with either was taken as a flush and the numbers dropped.
			return Op{}, n.l.errf("flush with offset %d and size %d: a flush (F) has offset and size 0", op.Offset, op.Size)
		}
		if k == 5 {
			op.File = n.files.get(n.f[4])
		}
		return op, nil
	}
}

func nativeOp(b []byte) (workload.Op, bool) {
	if len(b) != 1 {
		return 0, false
	}
	switch b[0] {
	case 'R':
		return workload.OpRead, true
	case 'W':
		return workload.OpWrite, true
	case 'F':
		return workload.OpFlush, true
	case 'T':
		return workload.OpTrim, true
	}
	return 0, false
}

func nativeLetter(o workload.Op) byte {
	switch o {
	case workload.OpRead:
		return 'R'
	case workload.OpWrite:
		return 'W'
	case workload.OpFlush:
		return 'F'
	case workload.OpTrim:
		return 'T'
	}
	return '?'
}
