package gen

import (
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/idlewatt/idlewatt/workload"
	"github.com/idlewatt/idlewatt/workload/trace"
)

// Patterns are the iometer-style access patterns. "consistency" is the
// performance-consistency test's load: 4 KiB random writes over the whole
// span (run it at QD 32 and read Result.PerSecond).
var Patterns = []string{"randread4k", "randwrite4k", "seqread128k", "seqwrite128k", "consistency"}

// Pattern returns an endless (count 0) or count-long stream of one pattern
// over [0, span). Ops carry no times: replay them with afap timing, where
// the queue depth sets the load, as iometer does.
func Pattern(name string, seed int64, span int64, count int64) (trace.Reader, error) {
	p := &pattern{rng: rand.New(rand.NewPCG(uint64(seed), 0x10e7)), span: span, count: count}
	switch name {
	case "randread4k":
		p.typ, p.size, p.random = workload.OpRead, 4096, true
	case "randwrite4k", "consistency":
		p.typ, p.size, p.random = workload.OpWrite, 4096, true
	case "seqread128k":
		p.typ, p.size = workload.OpRead, 128<<10
	case "seqwrite128k":
		p.typ, p.size = workload.OpWrite, 128<<10
	default:
		return nil, fmt.Errorf("unknown pattern %q (want one of %v)", name, Patterns)
	}
	if span < int64(p.size) {
		return nil, fmt.Errorf("span %d bytes: smaller than one %d-byte op", span, p.size)
	}
	p.blocks = span / int64(p.size)
	return p, nil
}

type pattern struct {
	rng    *rand.Rand
	span   int64
	count  int64
	n      int64
	typ    workload.Op
	size   int32
	random bool
	blocks int64
	next   int64
}

func (p *pattern) Next() (trace.Op, error) {
	if p.count > 0 && p.n >= p.count {
		return trace.Op{}, io.EOF
	}
	p.n++
	op := trace.Op{Type: p.typ, Size: p.size}
	if p.random {
		op.Offset = p.rng.Int64N(p.blocks) * int64(p.size)
	} else {
		op.Offset = p.next * int64(p.size)
		p.next = (p.next + 1) % p.blocks
	}
	return op, nil
}
