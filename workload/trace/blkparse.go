package trace

import (
	"bytes"
	"io"

	"github.com/idlewatt/idlewatt/workload"
)

// sectorSize is the unit of blktrace sector numbers and counts.
const sectorSize = 512

// BlkparseReader reads blkparse's default text output,
//
//	%D %2c %8s %5T.%9t %5p %2a %3d
//	8,0    3        1     0.000000000   697  Q  W 223490 + 8 [kjournald]
//
// and yields the Q (queued) events. Sectors are 512 bytes. RWBS maps as:
// D (discard) or E (secure erase) → trim, W → write, R → read; a leading F
// (pre-flush) yields a flush before the data op, and a flush with no data
// ("FN", "FWS" with no sectors or with "0 + 0") yields a flush alone, so one
// queued request is one op unless it is a preflush carrying data. An F after
// the op letter is FUA and changes nothing. Events of other actions
// are skipped. The per-CPU summary blkparse appends ("CPU0 (8,0):",
// "Total (8,0):") ends the trace.
type BlkparseReader struct {
	l       *lines
	f       [10][]byte
	files   interner
	pending Op
	hasPend bool
	done    bool
}

// NewBlkparseReader reads r; name is used in error messages.
func NewBlkparseReader(r io.Reader, name string) *BlkparseReader {
	return &BlkparseReader{l: newLines(r, name)}
}

// Next implements Reader.
func (p *BlkparseReader) Next() (Op, error) {
	if p.hasPend {
		p.hasPend = false
		return p.pending, nil
	}
	for !p.done {
		b, err := p.l.next()
		if err != nil {
			return Op{}, err
		}
		if len(b) == 0 {
			continue
		}
		if bytes.HasPrefix(b, []byte("CPU")) || bytes.HasPrefix(b, []byte("Total")) {
			p.done = true
			break
		}
		k := fields(b, p.f[:])
		if k < 6 {
			return Op{}, p.l.errf("expected \"DEV CPU SEQ SECONDS PID ACTION RWBS ...\", got %d fields", k)
		}
		if !isDevice(p.f[0]) {
			return Op{}, p.l.errf("device %q: expected MAJOR,MINOR", p.f[0])
		}
		t, ok := parseSeconds(p.f[3])
		if !ok {
			return Op{}, p.l.errf("time %q: expected SECONDS.NANOSECONDS", p.f[3])
		}
		if string(p.f[5]) != "Q" {
			continue
		}
		if k < 7 {
			return Op{}, p.l.errf("Q event without RWBS field")
		}
		rwbs := p.f[6]
		op := Op{Time: t, File: p.files.get(p.f[0])}
		preflush := len(rwbs) > 0 && rwbs[0] == 'F'
		switch {
		case bytes.ContainsAny(rwbs, "DE"):
			op.Type = workload.OpTrim
		case bytes.IndexByte(rwbs, 'W') >= 0:
			op.Type = workload.OpWrite
		case bytes.IndexByte(rwbs, 'R') >= 0:
			op.Type = workload.OpRead
		case preflush:
			op.Type = workload.OpFlush
		case bytes.IndexByte(rwbs, 'N') >= 0:
			continue // no data, no flush: nothing reaches the drive
		default:
			return Op{}, p.l.errf("RWBS %q: expected R, W, D, E, F or N", rwbs)
		}
		if op.Type != workload.OpFlush {
			// "SECTOR + COUNT" follows; a data op without it is malformed.
			if k < 10 || string(p.f[8]) != "+" {
				if preflush && k < 9 {
					op.Type = workload.OpFlush
					return op, nil
				}
				return Op{}, p.l.errf("expected \"SECTOR + COUNT\" after RWBS %q", rwbs)
			}
			sec, ok1 := parseUint(p.f[7])
			cnt, ok2 := parseUint(p.f[9])
			if !ok1 || sec > (1<<63-1)/sectorSize {
				return Op{}, p.l.errf("sector %q: expected a non-negative integer", p.f[7])
			}
			if !ok2 || !sizeOK(cnt*sectorSize) || cnt > 1<<22 {
				return Op{}, p.l.errf("count %q: expected a sector count below 4194304", p.f[9])
			}
			op.Offset, op.Size = sec*sectorSize, int32(cnt*sectorSize)
			if preflush && cnt == 0 {
				// "FWS 0 + 0": an empty preflush bio carries no data; it is
				// one flush, not a flush and a zero-length write.
				return Op{Time: t, Type: workload.OpFlush, File: op.File}, nil
			}
			if preflush {
				p.pending, p.hasPend = op, true
				return Op{Time: t, Type: workload.OpFlush, File: op.File}, nil
			}
		}
		return op, nil
	}
	return Op{}, io.EOF
}

func isDevice(b []byte) bool {
	i := bytes.IndexByte(b, ',')
	if i <= 0 {
		return false
	}
	_, ok1 := parseUint(b[:i])
	_, ok2 := parseUint(b[i+1:])
	return ok1 && ok2
}
