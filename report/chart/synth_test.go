package chart

import (
	"math"
	"math/rand/v2"
	"testing"
)

// synthDrive is a deterministic stand-in for a capture: a drive that idles
// at idleW, bursts to ~activeW during I/O, drops to slumber and finally
// DevSlp, with one meter dropout. It is what the charts are tested on.
type synthDrive struct {
	name           string
	idleW, activeW float64
	slumberW, slpW float64
	seed           uint64
}

var synthDrives = []synthDrive{
	{name: "JMF667H 128 GB", idleW: 0.42, activeW: 1.9, slumberW: 0.09, slpW: 0.0048, seed: 1},
	{name: "JMF667H 256 GB", idleW: 0.21, activeW: 2.6, slumberW: 0.06, slpW: 0.0035, seed: 2},
}

const synthSpan = 60.0 // seconds

// state returns the scripted state at t.
func synthState(t float64) string {
	switch {
	case t >= 46:
		return "devslp"
	case t >= 40:
		return "slumber"
	case math.Mod(t, 10) < 2.5 && t < 40:
		return "active"
	case math.Mod(t, 10) < 3.5 && t < 40:
		return "idle" // settle tail
	case t >= 20 && t < 40:
		return "partial"
	}
	return "idle"
}

func (d synthDrive) power(t float64, r *rand.Rand) float64 {
	noise := r.NormFloat64()
	switch synthState(t) {
	case "active":
		w := d.activeW * (0.7 + 0.3*math.Abs(math.Sin(t*7)))
		if r.IntN(50) == 0 {
			w *= 1.4 // write spikes
		}
		return w + 0.05*noise
	case "partial":
		return d.idleW*0.6 + 0.004*noise
	case "slumber":
		return d.slumberW + 0.002*noise
	case "devslp":
		return d.slpW + 0.0002*noise
	}
	return d.idleW + 0.006*noise
}

// trace builds the drive's Trace at rate samples/s through a Decimator.
func (d synthDrive) trace(t testing.TB, rate float64, buckets int) Trace {
	t.Helper()
	dec, err := NewDecimator(DecimatorOpts{Buckets: buckets, Span: synthSpan})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(d.seed, 42))
	buf := make([]float64, int(rate)/10)
	dt := 1 / rate
	for blk := 0; blk < int(synthSpan*10); blk++ {
		t0 := float64(blk) / 10
		for i := range buf {
			buf[i] = d.power(t0+float64(i)*dt, r)
		}
		if t0 >= 33 && t0 < 34.5 { // meter dropout: no samples, a gap record
			continue
		}
		dec.AddUniform(t0, dt, buf)
	}
	dec.Gap(33, 34.5)
	tr := Trace{Name: d.name, Power: dec.Envelope()}
	for k := 0; k < 4; k++ {
		base := float64(k) * 10
		for j := 0; j < 25; j++ {
			s := base + 0.1*float64(j) + 0.01*float64(d.seed)
			tr.IO = append(tr.IO, Interval{Start: s, End: s + 0.04 + 0.002*float64(j%5)})
		}
	}
	prev, start := synthState(0), 0.0
	for x := 0.05; x <= synthSpan; x += 0.05 {
		if s := synthState(x); s != prev || x+0.05 > synthSpan {
			tr.States = append(tr.States, StateSpan{Start: start, End: x, State: prev})
			prev, start = s, x
		}
	}
	tr.Notes = []Annotation{{T: 40, Text: "link → Slumber"}, {T: 46, Text: "DEVSLP asserted"}}
	return tr
}

func synthTraces(t testing.TB) []Trace {
	var trs []Trace
	for _, d := range synthDrives {
		trs = append(trs, d.trace(t, 2000, 600))
	}
	return trs
}
