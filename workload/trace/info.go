package trace

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/workload"
)

// Bucket is one histogram bin: values v with Low <= v < High (High 0 means
// no upper bound).
type Bucket struct {
	Low, High int64
	Count     int64
}

// SizeBuckets are the upper bounds of the size histogram, in bytes.
var SizeBuckets = []int64{512, 4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10, 1 << 20}

// GapBuckets are the upper bounds of the idle-gap histogram.
var GapBuckets = []time.Duration{100 * time.Microsecond, time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, time.Second, 10 * time.Second}

// Stats summarises a trace. Every field is computed in one streaming pass.
type Stats struct {
	Ops         int64
	OpsByType   map[workload.Op]int64
	BytesByType map[workload.Op]int64
	First, Last time.Duration // times of the first and last op
	MaxEnd      int64         // largest Offset+Size: the span a target needs (math.MaxInt64 when it overflows, see EndOverflow)
	// MaxEndOp is the op that ends at MaxEnd (the first such), and MaxEndN
	// its number in the trace (1-based, counting every op), so a refusal can
	// name it. EndOverflow: some op's Offset+Size is beyond math.MaxInt64
	// (an offset near 2^63 used to wrap to a negative span: a 4096-byte
	// target was created and the op refused only after).
	MaxEndOp    Op
	MaxEndN     int64
	EndOverflow bool
	Sizes       []Bucket      // read/write/trim sizes, bytes
	Gaps        []Bucket      // time between consecutive ops, ns
	Sequential  int64         // data ops starting where the previous one on the same file ended
	Files       int           // distinct file names (up to 1000 counted)
	IdleOver1s  time.Duration // total time in gaps of a second or more
}

// Duration is the time from the first op to the last.
func (s *Stats) Duration() time.Duration { return s.Last - s.First }

// ReadFraction is reads / (reads + writes), 0 if neither.
func (s *Stats) ReadFraction() float64 {
	r, w := s.OpsByType[workload.OpRead], s.OpsByType[workload.OpWrite]
	if r+w == 0 {
		return 0
	}
	return float64(r) / float64(r+w)
}

// SequentialFraction is the share of reads and writes that continue the
// previous op on the same file.
func (s *Stats) SequentialFraction() float64 {
	n := s.OpsByType[workload.OpRead] + s.OpsByType[workload.OpWrite]
	if n == 0 {
		return 0
	}
	return float64(s.Sequential) / float64(n)
}

// Summarize reads r to the end.
func Summarize(r Reader) (*Stats, error) {
	s := &Stats{OpsByType: map[workload.Op]int64{}, BytesByType: map[workload.Op]int64{}}
	for i, hi := range SizeBuckets {
		lo := int64(0)
		if i > 0 {
			lo = SizeBuckets[i-1]
		}
		s.Sizes = append(s.Sizes, Bucket{Low: lo, High: hi})
	}
	s.Sizes = append(s.Sizes, Bucket{Low: SizeBuckets[len(SizeBuckets)-1]})
	for i, hi := range GapBuckets {
		lo := int64(0)
		if i > 0 {
			lo = int64(GapBuckets[i-1])
		}
		s.Gaps = append(s.Gaps, Bucket{Low: lo, High: int64(hi)})
	}
	s.Gaps = append(s.Gaps, Bucket{Low: int64(GapBuckets[len(GapBuckets)-1])})
	files := map[string]int64{} // file → end of its last data op
	var prev time.Duration
	for {
		op, err := r.Next()
		if err == io.EOF {
			return s, nil
		}
		if err != nil {
			return s, err
		}
		if s.Ops == 0 {
			s.First = op.Time
		} else {
			gap := max(op.Time-prev, 0)
			add(s.Gaps, int64(gap))
			if gap >= time.Second {
				s.IdleOver1s += gap
			}
		}
		prev = op.Time
		s.Last = max(s.Last, op.Time)
		s.Ops++
		s.OpsByType[op.Type]++
		s.BytesByType[op.Type] += int64(op.Size)
		if op.Type == workload.OpFlush {
			continue
		}
		add(s.Sizes, int64(op.Size))
		end, over := op.End(), op.Size > 0 && op.Offset > math.MaxInt64-int64(op.Size)
		if over {
			end = math.MaxInt64 // saturated, not wrapped to a negative span
		}
		if end > s.MaxEnd || over && !s.EndOverflow {
			s.MaxEnd, s.MaxEndOp, s.MaxEndN = end, op, s.Ops
		}
		s.EndOverflow = s.EndOverflow || over
		if op.Type == workload.OpTrim {
			continue
		}
		end, seen := files[op.File]
		if seen && end == op.Offset {
			s.Sequential++
		}
		if seen || len(files) < 1000 {
			files[op.File] = op.End()
		}
	}
}

func add(h []Bucket, v int64) {
	for i := range h {
		if h[i].High == 0 || v < h[i].High {
			h[i].Count++
			return
		}
	}
}

// MarshalJSON writes the stats with unit-suffixed keys.
func (s *Stats) MarshalJSON() ([]byte, error) {
	type bucket struct {
		Low   int64 `json:"low"`
		High  int64 `json:"high,omitempty"`
		Count int64 `json:"count"`
	}
	type gap struct {
		LowS  float64 `json:"low_s"`
		HighS float64 `json:"high_s,omitempty"`
		Count int64   `json:"count"`
	}
	ops, byts := map[string]int64{}, map[string]int64{}
	for t, n := range s.OpsByType {
		ops[t.String()] = n
		byts[t.String()] = s.BytesByType[t]
	}
	out := struct {
		Ops          int64            `json:"ops"`
		OpsByType    map[string]int64 `json:"ops_by_type"`
		BytesByType  map[string]int64 `json:"bytes_by_type"`
		DurationS    float64          `json:"duration_s"`
		SpanBytes    int64            `json:"span_bytes"`
		ReadFraction float64          `json:"read_fraction"`
		SeqFraction  float64          `json:"sequential_fraction"`
		IdleOver1sS  float64          `json:"idle_in_gaps_over_1s_s"`
		SizesBytes   []bucket         `json:"size_histogram_bytes"`
		Gaps         []gap            `json:"idle_gap_histogram"`
	}{Ops: s.Ops, OpsByType: ops, BytesByType: byts, DurationS: s.Duration().Seconds(), SpanBytes: s.MaxEnd,
		ReadFraction: s.ReadFraction(), SeqFraction: s.SequentialFraction(), IdleOver1sS: s.IdleOver1s.Seconds()}
	for _, b := range s.Sizes {
		out.SizesBytes = append(out.SizesBytes, bucket(b))
	}
	for _, b := range s.Gaps {
		out.Gaps = append(out.Gaps, gap{LowS: time.Duration(b.Low).Seconds(), HighS: time.Duration(b.High).Seconds(), Count: b.Count})
	}
	return json.Marshal(out)
}

// Text renders the stats for a terminal.
func (s *Stats) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ops            %d over %s (first op at %s)\n", s.Ops, HumanDuration(s.Duration()), HumanDuration(s.First))
	for _, t := range []workload.Op{workload.OpRead, workload.OpWrite, workload.OpFlush, workload.OpTrim} {
		if n := s.OpsByType[t]; n > 0 {
			fmt.Fprintf(&b, "  %-6s       %d ops, %s\n", t, n, humanBytes(s.BytesByType[t]))
		}
	}
	fmt.Fprintf(&b, "read fraction  %.1f %% of reads+writes\n", 100*s.ReadFraction())
	fmt.Fprintf(&b, "sequential     %.1f %% of reads+writes\n", 100*s.SequentialFraction())
	fmt.Fprintf(&b, "span           %s (largest offset+size)\n", humanBytes(s.MaxEnd))
	idle := HumanDuration(s.IdleOver1s)
	if d := s.Duration(); d > 0 {
		idle += fmt.Sprintf(" (%.1f %% of the trace)", 100*float64(s.IdleOver1s)/float64(d))
	}
	fmt.Fprintf(&b, "idle in gaps ≥ 1 s: %s\n", idle)
	b.WriteString("sizes:\n")
	for _, k := range s.Sizes {
		if k.High == 0 {
			fmt.Fprintf(&b, "  ≥ %-9s %d\n", humanBytes(k.Low), k.Count)
		} else {
			fmt.Fprintf(&b, "  < %-9s %d\n", humanBytes(k.High), k.Count)
		}
	}
	b.WriteString("idle gaps between ops:\n")
	for _, k := range s.Gaps {
		if k.High == 0 {
			fmt.Fprintf(&b, "  ≥ %-9s %d\n", HumanDuration(time.Duration(k.Low)), k.Count)
		} else {
			fmt.Fprintf(&b, "  < %-9s %d\n", HumanDuration(time.Duration(k.High)), k.Count)
		}
	}
	return b.String()
}

// HumanDuration writes a duration for a reader: its unit spaced and chosen
// by magnitude, at most four significant figures ("46.35 s", "1 ms",
// "100 µs", "0 s"), never Go's "46.345758762s".
func HumanDuration(d time.Duration) string {
	a := d
	if a < 0 {
		a = -a
	}
	var v float64
	var unit string
	switch {
	case a == 0:
		return "0 s"
	case a >= time.Second:
		v, unit = d.Seconds(), "s"
	case a >= time.Millisecond:
		v, unit = float64(d)/1e6, "ms"
	case a >= time.Microsecond:
		v, unit = float64(d)/1e3, "µs"
	default:
		v, unit = float64(d), "ns"
	}
	return trimFloat(v) + " " + unit
}

// trimFloat prints v with four significant figures at most and no
// trailing zeros.
func trimFloat(v float64) string {
	s := strconv.FormatFloat(v, 'g', 4, 64)
	if strings.ContainsAny(s, "e") { // ≥ 10 000 s: whole seconds
		s = strconv.FormatFloat(v, 'f', 0, 64)
	}
	return s
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
