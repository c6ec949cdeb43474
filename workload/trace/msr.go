package trace

import (
	"bytes"
	"io"
	"time"

	"github.com/idlewatt/idlewatt/workload"
)

// MSRHeader is the optional header line of SNIA / MSR Cambridge CSV traces.
const MSRHeader = "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime"

// MSRReader reads SNIA IOTTA / MSR Cambridge block traces:
//
//	Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
//	128166372003061629,hm,1,Read,383409152,4096,1332
//
// Timestamp is a Windows filetime (100 ns units since 1601); Op.Time is the
// time since the first record. Type is Read or Write (any case); Offset and
// Size are bytes. Op.File is "HOST/DISK". ResponseTime is ignored (the
// replay measures its own). A header line is accepted and skipped.
type MSRReader struct {
	l       *lines
	f       [7][]byte
	files   interner
	first   int64
	started bool
}

// NewMSRReader reads r; name is used in error messages.
func NewMSRReader(r io.Reader, name string) *MSRReader {
	return &MSRReader{l: newLines(r, name)}
}

// Next implements Reader.
func (m *MSRReader) Next() (Op, error) {
	for {
		b, err := m.l.next()
		if err != nil {
			return Op{}, err
		}
		if len(b) == 0 || (m.l.n == 1 && bytes.EqualFold(b, []byte(MSRHeader))) {
			continue
		}
		k := splitComma(b, m.f[:])
		if k != 7 {
			return Op{}, m.l.errf("expected 7 comma-separated fields (%s), got %d", MSRHeader, k)
		}
		ts, ok := parseUint(m.f[0])
		if !ok {
			return Op{}, m.l.errf("timestamp %q: expected a Windows filetime (100 ns units)", m.f[0])
		}
		if !m.started {
			m.first, m.started = ts, true
		}
		var op Op
		d := ts - m.first
		if d < 0 {
			d = 0 // out-of-order records are issued at once, not before the start
		}
		if d > int64(1<<63-1)/100 {
			return Op{}, m.l.errf("timestamp %q: more than 29,000 years after the first record", m.f[0])
		}
		op.Time = time.Duration(d) * 100
		switch {
		case bytes.EqualFold(m.f[3], []byte("read")):
			op.Type = workload.OpRead
		case bytes.EqualFold(m.f[3], []byte("write")):
			op.Type = workload.OpWrite
		default:
			return Op{}, m.l.errf("type %q: expected Read or Write", m.f[3])
		}
		if op.Offset, ok = parseUint(m.f[4]); !ok {
			return Op{}, m.l.errf("offset %q: expected a non-negative integer (bytes)", m.f[4])
		}
		n, ok := parseUint(m.f[5])
		if !ok || !sizeOK(n) {
			return Op{}, m.l.errf("size %q: expected an integer from 0 to 2147483647 (bytes)", m.f[5])
		}
		op.Size = int32(n)
		op.File = m.fileName(m.f[1], m.f[2])
		return op, nil
	}
}

// fileName joins host and disk without allocating when they repeat.
func (m *MSRReader) fileName(host, disk []byte) string {
	var buf [128]byte
	b := append(buf[:0], host...)
	b = append(b, '/')
	b = append(b, disk...)
	return m.files.get(b)
}

func splitComma(b []byte, dst [][]byte) int {
	n := 0
	for {
		i := bytes.IndexByte(b, ',')
		f := b
		if i >= 0 {
			f = b[:i]
		}
		if n < len(dst) {
			dst[n] = bytes.TrimSpace(f)
		}
		n++
		if i < 0 {
			return n
		}
		b = b[i+1:]
	}
}
