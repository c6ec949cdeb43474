package gen

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/workload"
	"github.com/idlewatt/idlewatt/workload/trace"
)

// sizeW is a request size and its weight.
type sizeW struct {
	size   int32
	weight float64
}

// App parameterises one PCMark-7-like application trace.
type App struct {
	Name        string
	Description string
	Bursts      int           // bursts at scale 1
	BurstOps    int           // mean data ops per burst (when WriteBudget is 0)
	WriteBudget int64         // bytes written per burst instead of an op count
	ReadFrac    float64       // reads / (reads + writes)
	ReadRandom  float64       // fraction of reads at a random offset (rest continue the read stream)
	WriteRandom float64       // same for writes
	ReadSizes   []sizeW       //
	WriteSizes  []sizeW       //
	OpGap       time.Duration // mean spacing of ops inside a burst (exponential)
	IdleMean    time.Duration // mean idle gap between bursts (exponential, on top of IdleMin)
	IdleMin     time.Duration //
	HotFrac     float64       // share of random ops landing in the hot region
	HotSpan     float64       // hot region as a fraction of the span
	FlushBurst  bool          // end each burst that wrote with a flush (journal commit)
}

const kib = 1024

// Apps are the seven traces, in PCMark 7's order. See docs/workload.md.
var Apps = []App{
	{Name: "defender", Description: "Windows Defender scan: 97.9 % reads, 93 % of reads random (published)",
		Bursts: 30, BurstOps: 400, ReadFrac: 0.979, ReadRandom: 0.93, WriteRandom: 0.9,
		ReadSizes:  []sizeW{{4 * kib, 40}, {8 * kib, 10}, {16 * kib, 10}, {32 * kib, 15}, {64 * kib, 20}, {128 * kib, 5}},
		WriteSizes: []sizeW{{4 * kib, 80}, {16 * kib, 20}},
		OpGap:      200 * time.Microsecond, IdleMean: 1500 * time.Millisecond, IdleMin: 700 * time.Millisecond,
		HotFrac: 0.3, HotSpan: 0.05, FlushBurst: true},
	{Name: "importing-pictures", Description: "importing 68 pictures, 434 MB written, write-heavy, mostly random writes (published)",
		Bursts: 68, WriteBudget: 434_000_000 / 68, ReadFrac: 0.3, ReadRandom: 0.6, WriteRandom: 0.7,
		ReadSizes:  []sizeW{{4 * kib, 50}, {16 * kib, 30}, {64 * kib, 20}},
		WriteSizes: []sizeW{{64 * kib, 40}, {128 * kib, 40}, {256 * kib, 20}},
		OpGap:      150 * time.Microsecond, IdleMean: 600 * time.Millisecond, IdleMin: 400 * time.Millisecond,
		HotFrac: 0.1, HotSpan: 0.2, FlushBurst: true},
	{Name: "video-editing", Description: "Windows Live Movie Maker: streaming reads of source video, sequential output writes",
		Bursts: 20, BurstOps: 1500, ReadFrac: 0.6, ReadRandom: 0.15, WriteRandom: 0.1,
		ReadSizes:  []sizeW{{64 * kib, 30}, {128 * kib, 30}, {256 * kib, 40}},
		WriteSizes: []sizeW{{64 * kib, 40}, {128 * kib, 40}, {256 * kib, 20}},
		OpGap:      300 * time.Microsecond, IdleMean: 800 * time.Millisecond, IdleMin: 500 * time.Millisecond,
		HotFrac: 0, HotSpan: 0, FlushBurst: true},
	{Name: "media-center", Description: "Windows Media Center: recording one stream while playing another, periodic buffer flushes",
		Bursts: 60, BurstOps: 40, ReadFrac: 0.5, ReadRandom: 0.05, WriteRandom: 0.05,
		ReadSizes:  []sizeW{{64 * kib, 30}, {128 * kib, 70}},
		WriteSizes: []sizeW{{128 * kib, 100}},
		OpGap:      2 * time.Millisecond, IdleMean: 300 * time.Millisecond, IdleMin: 700 * time.Millisecond,
		HotFrac: 0, HotSpan: 0, FlushBurst: false},
	{Name: "adding-music", Description: "adding music to Windows Media Player: tag reads across files, library database updates",
		Bursts: 25, BurstOps: 150, ReadFrac: 0.7, ReadRandom: 0.6, WriteRandom: 0.8,
		ReadSizes:  []sizeW{{4 * kib, 50}, {16 * kib, 30}, {64 * kib, 20}},
		WriteSizes: []sizeW{{4 * kib, 60}, {16 * kib, 25}, {64 * kib, 15}},
		OpGap:      250 * time.Microsecond, IdleMean: 1500 * time.Millisecond, IdleMin: time.Second,
		HotFrac: 0.5, HotSpan: 0.02, FlushBurst: true},
	{Name: "starting-applications", Description: "starting applications: random reads of executables and libraries, few writes",
		Bursts: 12, BurstOps: 800, ReadFrac: 0.88, ReadRandom: 0.75, WriteRandom: 0.85,
		ReadSizes:  []sizeW{{4 * kib, 45}, {16 * kib, 20}, {32 * kib, 15}, {64 * kib, 15}, {128 * kib, 5}},
		WriteSizes: []sizeW{{4 * kib, 80}, {16 * kib, 20}},
		OpGap:      150 * time.Microsecond, IdleMean: 3 * time.Second, IdleMin: 1500 * time.Millisecond,
		HotFrac: 0.4, HotSpan: 0.05, FlushBurst: true},
	{Name: "gaming", Description: "gaming (level loads): large, partly sequential reads of game assets, almost no writes",
		Bursts: 8, BurstOps: 1500, ReadFrac: 0.99, ReadRandom: 0.45, WriteRandom: 0.9,
		ReadSizes:  []sizeW{{16 * kib, 20}, {64 * kib, 30}, {128 * kib, 30}, {256 * kib, 20}},
		WriteSizes: []sizeW{{4 * kib, 100}},
		OpGap:      200 * time.Microsecond, IdleMean: 4 * time.Second, IdleMin: 2 * time.Second,
		HotFrac: 0.2, HotSpan: 0.1, FlushBurst: false},
}

// AppGap is the idle time between applications in the "all" trace.
const AppGap = 5 * time.Second

// AppNames lists the application names (plus "all").
func AppNames() []string {
	var n []string
	for _, a := range Apps {
		n = append(n, a.Name)
	}
	return append(n, "all")
}

// PCMark7 returns a streaming PCMark-7-like trace of one application, or of
// all seven in order ("all", separated by AppGap). span is the LBA span in
// bytes (offsets fall in [0, span)); scale multiplies the number of bursts
// (0.1 makes a trace a tenth as long; at least one burst remains).
func PCMark7(app string, seed int64, span int64, scale float64) (trace.Reader, error) {
	if span < 1<<20 {
		return nil, fmt.Errorf("span %d bytes: want at least 1 MiB", span)
	}
	if !(scale > 0) || math.IsInf(scale, 0) || scale > MaxScale {
		return nil, fmt.Errorf("duration scale %v: want > 0 and at most %g", scale, float64(MaxScale))
	}
	if app == "all" {
		var gens []*appGen
		for i := range Apps {
			gens = append(gens, newAppGen(&Apps[i], seed+int64(i), span, scale))
		}
		return &chain{gens: gens}, nil
	}
	for i := range Apps {
		if Apps[i].Name == app {
			return newAppGen(&Apps[i], seed, span, scale), nil
		}
	}
	return nil, fmt.Errorf("unknown PCMark 7 application %q (want one of %s)", app, strings.Join(AppNames(), ", "))
}

// appGen is one application's generator state.
type appGen struct {
	a         *App
	rng       *rand.Rand
	span      int64
	bursts    int // left, including the current one
	left      int // data ops left in the current burst
	budget    int64
	wrote     bool
	t         time.Duration
	readNext  int64 // where a sequential read continues
	writeNext int64
	pendFlush bool
}

// MaxScale bounds the duration scale: 10,000 × the full run is about 780 M
// ops; beyond it the burst count overflowed an int, and --duration-scale
// 1e308 silently gave one burst per application.
const MaxScale = 10000

func newAppGen(a *App, seed, span int64, scale float64) *appGen {
	g := &appGen{a: a, rng: rand.New(rand.NewPCG(uint64(seed), 0x9c3a7)), span: span,
		bursts: max(1, int(math.Round(float64(a.Bursts)*scale)))}
	g.readNext = g.randOffset(64 * kib)
	g.writeNext = g.randOffset(64 * kib)
	g.startBurst()
	return g
}

func (g *appGen) startBurst() {
	g.wrote = false
	if g.a.WriteBudget > 0 {
		g.budget = g.a.WriteBudget
		g.left = -1
		return
	}
	// Burst lengths vary ±50 % around the mean.
	g.left = max(1, int(float64(g.a.BurstOps)*(0.5+g.rng.Float64())))
}

func (g *appGen) burstDone() bool {
	if g.a.WriteBudget > 0 {
		return g.budget <= 0
	}
	return g.left <= 0
}

func pick(rng *rand.Rand, ws []sizeW) int32 {
	total := 0.0
	for _, w := range ws {
		total += w.weight
	}
	x := rng.Float64() * total
	for _, w := range ws {
		if x < w.weight {
			return w.size
		}
		x -= w.weight
	}
	return ws[len(ws)-1].size
}

// randOffset is a 4 KiB-aligned offset where size bytes fit, in the hot
// region with probability HotFrac.
func (g *appGen) randOffset(size int32) int64 {
	limit := g.span - int64(size)
	if g.a.HotSpan > 0 && g.rng.Float64() < g.a.HotFrac {
		limit = max(int64(size), int64(float64(g.span)*g.a.HotSpan)) - int64(size)
	}
	if limit <= 0 {
		return 0
	}
	return g.rng.Int64N(limit/4096+1) * 4096
}

func (g *appGen) Next() (trace.Op, error) {
	if g.bursts <= 0 {
		return trace.Op{}, io.EOF
	}
	if g.pendFlush {
		g.pendFlush = false
		return g.endBurst(trace.Op{Time: g.t, Type: workload.OpFlush})
	}
	op := trace.Op{Time: g.t}
	read := g.rng.Float64() < g.a.ReadFrac
	if read {
		op.Type, op.Size = workload.OpRead, pick(g.rng, g.a.ReadSizes)
		op.Offset = g.readNext
		if g.rng.Float64() < g.a.ReadRandom || op.Offset+int64(op.Size) > g.span {
			op.Offset = g.randOffset(op.Size)
		}
		g.readNext = op.End()
	} else {
		op.Type, op.Size = workload.OpWrite, pick(g.rng, g.a.WriteSizes)
		if g.a.WriteBudget > 0 && int64(op.Size) > g.budget {
			op.Size = int32((g.budget + 4095) &^ 4095)
		}
		op.Offset = g.writeNext
		if g.rng.Float64() < g.a.WriteRandom || op.Offset+int64(op.Size) > g.span {
			op.Offset = g.randOffset(op.Size)
		}
		g.writeNext = op.End()
		g.budget -= int64(op.Size)
		g.wrote = true
	}
	g.left--
	g.t += time.Duration(g.rng.ExpFloat64() * float64(g.a.OpGap))
	if g.burstDone() {
		if g.a.FlushBurst && g.wrote {
			g.pendFlush = true
			return op, nil
		}
		return g.endBurst(op)
	}
	return op, nil
}

// endBurst returns op (the burst's last) and moves time past the idle gap.
func (g *appGen) endBurst(op trace.Op) (trace.Op, error) {
	g.bursts--
	g.t += g.a.IdleMin + time.Duration(g.rng.ExpFloat64()*float64(g.a.IdleMean))
	if g.bursts > 0 {
		g.startBurst()
	}
	return op, nil
}

// chain plays generators one after another, AppGap apart.
type chain struct {
	gens []*appGen
	i    int
	base time.Duration
	last time.Duration
}

func (c *chain) Next() (trace.Op, error) {
	for c.i < len(c.gens) {
		op, err := c.gens[c.i].Next()
		if err == io.EOF {
			c.i++
			c.base = c.last + AppGap
			continue
		}
		op.Time += c.base
		c.last = op.Time
		return op, err
	}
	return trace.Op{}, io.EOF
}
