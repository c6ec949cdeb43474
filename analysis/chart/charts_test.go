package chart

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

func TestBarsGolden(t *testing.T) {
	bars := []Bar{
		{Label: "JMF667H 128 GB", Value: 0.412, Err: 0.006},
		{Label: "JMF667H 256 GB", Value: 0.205, Err: 0.004},
		{Label: "Reference SSD A", Value: 0.61},
		{Label: "Reference HDD", Value: 3.1},
	}
	f, err := ActiveIdlePower(bars, "JMF667H 256 GB")
	if err != nil {
		t.Fatal(err)
	}
	f.Width, f.Height = 6*96/96*72, 2.4*72 // inches in points: 6 × 2.4
	checkGolden(t, "bars_active_idle", f)

	pc := []Bar{{Label: "JMF667H 128 GB", Value: 0.47}, {Label: "JMF667H 256 GB", Value: 0.29}}
	f, err = AveragePower(pc, "PCMark 7")
	if err != nil {
		t.Fatal(err)
	}
	f.Width, f.Height = 6*72, 1.8*72
	checkGolden(t, "bars_pcmark7", f)

	// Several workloads: a group per phase, ranked within it.
	grouped := []Bar{
		{Label: "JMF667H 128 GB", Value: 0.482, Err: 0.004, Group: "workload:pcmark7:gaming"},
		{Label: "JMF667H 256 GB", Value: 0.265, Err: 0.003, Group: "workload:pcmark7:gaming"},
		{Label: "JMF667H 128 GB", Value: 0.611, Err: 0.005, Group: "workload:pcmark7:import-pictures"},
		{Label: "JMF667H 256 GB", Value: 0.702, Err: 0.006, Group: "workload:pcmark7:import-pictures"},
	}
	f, err = AveragePowerNote(grouped, "PCMark 7", "per workload phase (idle and DevSlp excluded)", "JMF667H 256 GB")
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "bars_grouped", f)
}

func synthHists(t *testing.T) []Distribution {
	var ds []Distribution
	for _, d := range synthDrives {
		h, err := NewHist(1e-3, 10, 120, true)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(d.seed, 7))
		vals := make([]float64, 0, 120000)
		for i := 0; i < 120000; i++ {
			x := float64(i) / 2000
			v := d.power(x, r)
			h.Add(v)
			vals = append(vals, v)
		}
		// The quantiles a report would state: exact, from the samples.
		sort.Float64s(vals)
		q := []Quantile{{0.5, vals[len(vals)/2]}, {0.99, vals[len(vals)*99/100]}}
		ds = append(ds, Distribution{Name: d.name, Hist: h, Quantiles: q})
	}
	return ds
}

func TestHistogramCDFGolden(t *testing.T) {
	ds := synthHists(t)
	f, err := Histogram(ds, DistOpts{Title: "Power Distribution", Size: Size{6, 3}})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "histogram", f)
	f, err = CDF(ds, DistOpts{Title: "Power CDF", Size: Size{6, 3}})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "cdf", f)
}

// synthCycle is one DevSlp cycle at 10 kS/s: 0.4 W idle, assert at 0 ms,
// an exponential fall to 4.6 mW, deassert at 400 ms, resume to 2 W I/O. The
// sensor adds 2 mW of noise, as the demo's hub does, so the floor's samples
// reach below zero and the noisy trace touches the 5 mW limit: the chart
// must show the estimate and its interval below the limit, as judged.
func synthCycle(t *testing.T) DevSlpCycle {
	dec, err := NewDecimator(DecimatorOpts{Buckets: 700, Start: -100, Span: 700})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 3))
	for i := 0; i < 7000; i++ {
		ms := -100 + float64(i)*0.1
		var w float64
		switch {
		case ms < 0:
			w = 0.4
		case ms < 400:
			w = 0.0046 + 0.3954*math.Exp(-ms/12)
		case ms < 418:
			w = 0.0046 + 0.3*(ms-400)/18
		default:
			w = 1.6 + 0.5*r.Float64()
		}
		dec.Add(ms, w*(1+0.02*r.NormFloat64())+0.002*r.NormFloat64())
	}
	return DevSlpCycle{
		Name: "JMF667H 128 GB, cycle 3", Power: dec.Envelope(),
		Assert: 0, FloorReached: 81, Deassert: 400, FirstIO: 418.5,
		Floor: 0.0046, Limit: 0.005, FloorLo: 0.00452, FloorHi: 0.00468, FloorFrom: 200, FloorTo: 400,
		Verdict: "PASS: floor 4.60 ± 0.08 mW, below the 5 mW limit", Pass: true,
	}
}

func TestDevSlpGolden(t *testing.T) {
	cy := synthCycle(t)
	f, err := DevSlpCycleChart(cy, DevSlpOpts{Unit: UnitMW, LogY: true, Size: Size{6, 4.2}})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "devslp_log", f)
	f, err = DevSlpCycleChart(cy, DevSlpOpts{Unit: UnitW, Size: Size{6, 4.2}})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "devslp_linear", f)
}

func TestIOPSGolden(t *testing.T) {
	var ss []IOPSSeries
	for k, d := range synthDrives {
		r := rand.New(rand.NewPCG(d.seed, 11))
		s := IOPSSeries{Name: d.name}
		for sec := 0; sec < 300; sec++ {
			v := 9000.0 + 3000*float64(k)
			if sec > 60 { // steady state: garbage collection
				v = 2500 + 1500*r.Float64()
				if r.IntN(25) == 0 {
					v = 150 * r.Float64()
				}
			}
			s.T = append(s.T, float64(sec))
			s.IOPS = append(s.IOPS, v*(1+0.03*r.NormFloat64()))
		}
		// The run ended 0.3 s into a 301st second, which counted 30 % of
		// a second's I/O: it must not be drawn as a collapse.
		s.T, s.IOPS, s.End = append(s.T, 300), append(s.IOPS, 0.3*s.IOPS[len(s.IOPS)-1]), 300.3
		ss = append(ss, s)
	}
	f, err := IOPSConsistency(ss, IOPSOpts{Title: "4K Random Write Consistency", Size: Size{6, 3}})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "iops", f)
	f, err = IOPSConsistency(ss, IOPSOpts{Title: "4K Random Write Consistency", Subtitle: "log scale", LogY: true, Size: Size{6, 3}})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "iops_log", f)
}
