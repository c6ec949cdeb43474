package chart

import "testing"

func TestPowerStackedGolden(t *testing.T) {
	f, err := PowerOverTime(synthTraces(t), PowerOpts{
		Title: "Power over time", Subtitle: "synthetic: PCMark-7-like bursts, idle, Slumber, DevSlp",
		Size: Size{6, 4.5},
	})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "power_stacked", f)
}

func TestPowerOverlayGolden(t *testing.T) {
	f, err := PowerOverTime(synthTraces(t), PowerOpts{
		Title: "Power over time", Layout: Overlay, Size: Size{6, 3.5},
	})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "power_overlay", f)
}

// A burst of events (the demo's DevSlp phase: a phase, three cycles, pin
// edges within 5 s) draws every line but only the labels that fit; a
// trace without a band (min = max) and without DevSlp lists neither in the
// legend.
func TestPowerCrowdedLabelsGolden(t *testing.T) {
	e := Envelope{}
	for i := 0; i <= 400; i++ {
		x := float64(i) * 0.1
		e.T = append(e.T, x)
		e.Min, e.Max, e.Mean = append(e.Min, 0.4), append(e.Max, 0.4), append(e.Mean, 0.4)
	}
	tr := Trace{Name: "flat drive", Power: e}
	for k, n := range []string{"devslp", "devslp-cycle:1", "DEVSLP", "devslp-cycle:2", "DEVSLP", "devslp-cycle:3", "DEVSLP", "devslp-end"} {
		tr.Notes = append(tr.Notes, Annotation{T: 35 + 0.6*float64(k), Text: n})
	}
	tr.Notes = append(tr.Notes, Annotation{T: 5, Text: "workload"})
	if anyBand([]Trace{tr}) {
		t.Fatal("anyBand: a flat envelope has no band")
	}
	f, err := PowerOverTime([]Trace{tr}, PowerOpts{Title: "Crowded labels", Size: Size{6, 2.5}})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "power_crowded", f)
}

// A log power axis shows the mW floor states and the W bursts together.
func TestPowerLogGolden(t *testing.T) {
	f, err := PowerOverTime(synthTraces(t), PowerOpts{Title: "Power over time (log)", Unit: UnitMW, LogY: true, Size: Size{6, 4.5}})
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "power_log", f)
}
