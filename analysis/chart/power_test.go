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
