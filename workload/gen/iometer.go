package gen

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/idlewatt/idlewatt/workload"
	"github.com/idlewatt/idlewatt/workload/trace"
)

// Patterns are the iometer-style access patterns. "consistency" is the
// performance-consistency test's load: 4 KiB random writes over the whole
// span (run it at QD 32 and read Result.PerSecond).
var Patterns = []string{"randread4k", "randwrite4k", "seqread128k", "seqwrite128k", "consistency"}

// Spec is one access pattern: the operation, its size and whether offsets
// are random (uniform over the span) or sequential (wrapping at the span).
type Spec struct {
	Name   string // canonical name, e.g. "randread4k", "seqwrite128k"
	Op     workload.Op
	Size   int32 // bytes per operation
	Random bool
}

// Write reports whether the pattern writes.
func (s Spec) Write() bool { return s.Op == workload.OpWrite }

// ParsePattern reads a pattern name. It accepts the names in Patterns and
// fio's rw= names — read, write, randread, randwrite, with fio's default
// 4 KiB blocks — each optionally followed by a block size (a power of two
// from 512 bytes to 16 MiB, k or m for KiB and MiB: "randread4k",
// "read128k", "randwrite64k", "write1m"). seqread/seqwrite are read and
// write. An unknown name is refused naming the forms accepted.
func ParsePattern(name string) (Spec, error) {
	if name == "consistency" {
		return Spec{Name: name, Op: workload.OpWrite, Size: 4096, Random: true}, nil
	}
	kinds := []struct {
		prefix string
		op     workload.Op
		random bool
		canon  string
	}{
		{"randread", workload.OpRead, true, "randread"},
		{"randwrite", workload.OpWrite, true, "randwrite"},
		{"seqread", workload.OpRead, false, "seqread"},
		{"seqwrite", workload.OpWrite, false, "seqwrite"},
		{"read", workload.OpRead, false, "seqread"},
		{"write", workload.OpWrite, false, "seqwrite"},
	}
	for _, k := range kinds {
		rest, ok := strings.CutPrefix(name, k.prefix)
		if !ok {
			continue
		}
		size := int64(4096)
		if rest != "" {
			var err error
			if size, err = parseBlockSize(rest); err != nil {
				return Spec{}, fmt.Errorf("pattern %q: block size %q: %v", name, rest, err)
			}
		}
		return Spec{Name: k.canon + formatBlockSize(size), Op: k.op, Size: int32(size), Random: k.random}, nil
	}
	return Spec{}, fmt.Errorf("unknown pattern %q: want one of %s, or fio's read, write, randread, randwrite (4 KiB blocks) with an optional block size such as randread64k or read1m",
		name, strings.Join(Patterns, ", "))
}

func parseBlockSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "k"):
		mult, s = 1<<10, strings.TrimSuffix(s, "k")
	case strings.HasSuffix(s, "m"):
		mult, s = 1<<20, strings.TrimSuffix(s, "m")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > 16<<20 {
		return 0, fmt.Errorf("want a number of bytes, or KiB/MiB with k or m (512 to 16m)")
	}
	size := n * mult
	if size < 512 || size > 16<<20 || size&(size-1) != 0 {
		return 0, fmt.Errorf("%d bytes: want a power of two from 512 bytes to 16 MiB", size)
	}
	return size, nil
}

func formatBlockSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "m"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "k"
	}
	return strconv.FormatInt(n, 10)
}

// Pattern returns an endless (count 0) or count-long stream of one pattern
// (any name ParsePattern reads) over [0, span). Ops carry no times: replay
// them with afap timing, where the queue depth sets the load, as iometer
// does.
func Pattern(name string, seed int64, span int64, count int64) (trace.Reader, error) {
	spec, err := ParsePattern(name)
	if err != nil {
		return nil, err
	}
	p := &pattern{rng: rand.New(rand.NewPCG(uint64(seed), 0x10e7)), span: span, count: count,
		typ: spec.Op, size: spec.Size, random: spec.Random}
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
