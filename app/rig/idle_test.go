package rig

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/units"
)

// TestMeasureIdlePowerFromPhases: idle per policy is each policy phase's
// quiet level from the report, the saving is against the first policy, and
// a policy without samples has nulls and a note, not 0 W.
func TestMeasureIdlePowerFromPhases(t *testing.T) {
	u1, u2 := units.Watts(0.0004), units.Watts(0.0001)
	rep := &analysis.Report{Drives: []analysis.DriveReport{{Name: "d", Port: 2, Phases: []analysis.Phase{
		{Name: "settle:max_performance", Samples: 10, AverageW: 0.5},
		{Name: "idle:max_performance", Samples: 100, AverageW: 0.45, MinW: 0.39, PeakW: 1.1,
			Quiet: analysis.QuietPower{W: 0.4, U95W: &u1, Bursts: analysis.Bursts{Count: 2, Share: 0.1, ExcessJ: 0.02}}},
		{Name: "idle:min_power", Samples: 100, AverageW: 0.07, MinW: 0.06, PeakW: 0.08, Quiet: analysis.QuietPower{W: 0.07, U95W: &u2}},
	}}}}
	ws := []PolicyWindow{{Policy: "max_performance"}, {Policy: "min_power"}, {Policy: "medium_power"}}
	got := MeasureIdlePower(rep, ws)
	if len(got) != 3 {
		t.Fatalf("%d results", len(got))
	}
	a, b, c := got[0], got[1], got[2]
	if a.MeanW != 0.4 || a.U95W != (*float64)(&u1) || a.AllMeanW != 0.45 || a.Bursts != 2 || a.BurstEnergyJ != 0.02 || a.SavingW != 0 || a.Port != 2 {
		t.Errorf("max_performance: %+v", a)
	}
	if b.MeanW != 0.07 || math.Abs(b.SavingW-0.33) > 1e-12 || b.MinW != 0.06 || b.MaxW != 0.08 {
		t.Errorf("min_power: %+v", b)
	}
	if !math.IsNaN(c.MeanW) || c.U95W != nil || c.Note == "" {
		t.Errorf("medium_power (no phase): %+v", c)
	}
	js, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(js, []byte(`"mean_w":null`)) || !bytes.Contains(js, []byte(`"u95_w":null`)) {
		t.Errorf("no nulls in %s", js)
	}
}

func FuzzIdlePowerJSON(f *testing.F) {
	f.Add([]byte(`{"port":1,"name":"d","policy":"min_power","mean_w":0.07,"u95_w":0.001,"all_mean_w":null,"samples":5}`))
	f.Add([]byte(`{"mean_w":null}`))
	f.Add([]byte(`[1]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var ip IdlePower
		if json.Unmarshal(b, &ip) != nil {
			return
		}
		j1, err := json.Marshal(ip)
		if err != nil {
			t.Fatalf("marshal %+v: %v", ip, err)
		}
		var back IdlePower
		if err := json.Unmarshal(j1, &back); err != nil {
			t.Fatalf("re-read %s: %v", j1, err)
		}
		j2, _ := json.Marshal(back)
		if !bytes.Equal(j1, j2) {
			t.Fatalf("round trip: %s vs %s", j1, j2)
		}
	})
}

// TestNVMeSettings: every latency × ASPM combination, latencies outermost;
// a missing list leaves that knob alone, and the label names only what is
// set.
func TestNVMeSettings(t *testing.T) {
	if got := NVMeSettings(nil, nil); got != nil {
		t.Errorf("no lists: %v, want nil (ALPM mode)", got)
	}
	var labels []string
	for _, s := range NVMeSettings([]string{"0", "5500"}, []string{"default", "powersupersave"}) {
		labels = append(labels, s.Label())
	}
	want := "nvme_latency_us=0,aspm=default nvme_latency_us=0,aspm=powersupersave nvme_latency_us=5500,aspm=default nvme_latency_us=5500,aspm=powersupersave"
	if got := strings.Join(labels, " "); got != want {
		t.Errorf("labels %q, want %q", got, want)
	}
	only := NVMeSettings(nil, []string{"performance"})
	if len(only) != 1 || only[0].Latency != "" || only[0].Label() != "aspm=performance" {
		t.Errorf("ASPM only: %+v", only)
	}
}
