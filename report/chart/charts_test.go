package chart

import (
	"math"
	"math/rand/v2"
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

	pc := []Bar{{"JMF667H 128 GB", 0.47, 0}, {"JMF667H 256 GB", 0.29, 0}}
	f, err = AveragePower(pc, "PCMark 7")
	if err != nil {
		t.Fatal(err)
	}
	f.Width, f.Height = 6*72, 1.8*72
	checkGolden(t, "bars_pcmark7", f)
}

func synthHists(t *testing.T) []Distribution {
	var ds []Distribution
	for _, d := range synthDrives {
		h, err := NewHist(1e-3, 10, 120, true)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(d.seed, 7))
		for i := 0; i < 120000; i++ {
			x := float64(i) / 2000
			h.Add(d.power(x, r))
		}
		ds = append(ds, Distribution{Name: d.name, Hist: h})
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
	checkGolden(t, "cdf", f) // no quantiles given: none printed or marked
	// A log share axis shows a mode holding a small share of the time.
	f, err = Histogram(ds, DistOpts{Title: "Power Distribution (log share)", Size: Size{6, 3}, LogY: true})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "histogram_log", f)
	// Given quantiles (the report's) are the ones marked and printed.
	for i := range ds {
		ds[i].P50, ds[i].P99 = 0.3999, 1.5
	}
	f, err = CDF(ds, DistOpts{Title: "Power CDF (report quantiles)", Size: Size{6, 3}})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "cdf_report_quantiles", f)
}

// synthCycle is one DevSlp cycle at 10 kS/s: 0.4 W idle, assert at 0 ms,
// an exponential fall to 4 mW, deassert at 400 ms, resume to 2 W I/O.
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
			w = 0.004 + 0.396*math.Exp(-ms/12)
		case ms < 418:
			w = 0.004 + 0.3*(ms-400)/18
		default:
			w = 1.6 + 0.5*r.Float64()
		}
		dec.Add(ms, w*(1+0.02*r.NormFloat64()))
	}
	return DevSlpCycle{
		Name: "JMF667H 128 GB, cycle 3", Power: dec.Envelope(),
		Assert: 0, FloorReached: 81, Deassert: 400, FirstIO: 418.5,
		Floor: 0.004, Limit: 0.005, FloorLo: 0.00392, FloorHi: 0.00408,
	}
}

func TestDevSlpGolden(t *testing.T) {
	cy := synthCycle(t)
	f, err := DevSlpCycleChart(cy, DevSlpOpts{Unit: UnitMW, LogY: true, Size: Size{6, 3.5}})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "devslp_log", f)
	f, err = DevSlpCycleChart(cy, DevSlpOpts{Unit: UnitW, Size: Size{6, 3.5}})
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
