package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMeterFileDevSlpCyclesJudged: a Power Profiler export whose D0 is
// wired to the DEVSLP pin and D1 marks the host's I/O has no rig phases;
// each assertion of the pin is a DevSlp cycle all the same (pinCycles),
// judged as a rig's would be — floor, entry, exit to the read after the
// release — where before every figure was null and no verdict given. The
// release, then 0.5 ms later the read's wake far above Slumber, once read
// as a sensor of 20 samples (judge.approaches) and moved cycle 1's entry a
// millisecond early; the first cycle's chart, from the sample at host time
// 0, drew NaN.
func TestMeterFileDevSlpCyclesJudged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "ppk.csv")
	const rate, slumber, floor, idle, entryMs = 10000, 0.008, 0.0005, 0.060, 2.0
	rng := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	b.WriteString("Timestamp(ms),Current(uA),D0-D7\n")
	pins := [][2]float64{{1.0, 1.5}, {2.5, 3.0}} // s; the first cycle reaches back to the first sample, at host time 0 // s
	for i := 0; i < 4*rate; i++ {
		ts := float64(i) / rate
		w, pin, io := slumber, 0, 0
		for _, p := range pins {
			switch {
			case ts >= p[0]+entryMs/1e3 && ts < p[1]:
				w = floor
			case ts >= p[1]+0.0005 && ts < p[1]+0.003:
				w, io = idle, 1 // the read after the release
			}
			if ts >= p[0] && ts < p[1] {
				pin = 1
			}
		}
		ua := (w/5 + 20e-6*rng.NormFloat64()) * 1e6
		fmt.Fprintf(&b, "%.1f,%.3f,%d%d000000\n", ts*1e3, ua, pin, io)
	}
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "rep")
	o, e, code := run(t, context.Background(), "report", in, "--out", out, "--no-html", "--voltage", "5", "--devslp-line", "D0", "--marker-line", "D1")
	if code != 0 {
		t.Fatalf("report exit %d: %s%s", code, o, e)
	}
	rep := readReportJSON(t, filepath.Join(out, "report.json"))
	dv := rep["drives"].([]any)[0].(map[string]any)["devslp"].(map[string]any)
	if dv["outcome"] != "pass" || dv["cycles"] != 2.0 || dv["cycles_entered"] != 2.0 {
		t.Fatalf("devslp outcome %v, %v cycles (%v entered), reason %v; want pass, 2, 2", dv["outcome"], dv["cycles"], dv["cycles_entered"], dv["reason"])
	}
	num := func(k string) float64 {
		x, ok := dv[k].(float64)
		if !ok {
			t.Fatalf("devslp.%s is %v", k, dv[k])
		}
		return x
	}
	if f, u := num("floor_w"), num("floor_u95_w"); math.Abs(f-floor) > math.Max(u, 0.02e-3) {
		t.Errorf("floor %.4f ± %.4f mW, truth %.4f mW", f*1e3, u*1e3, floor*1e3)
	}
	if x := num("entry_ms"); math.Abs(x-entryMs) > 0.2 {
		t.Errorf("entry %.3f ms, truth %.1f ms", x, entryMs)
	}
	if x := num("exit_ms"); x < 0.5 || x > 3.5 {
		t.Errorf("exit to the read's completion %.3f ms, want about 3 ms", x)
	}
}

// TestMeterFilePinCyclesBounded: a DEVSLP line toggling every two samples
// (a miswired or hostile file) is 2 400 assertions; cycles found from the
// pin alone are judged up to 1 000 and the rest are counted in a note —
// 50 000 of them made a 34 MB report.json of a 20 s export.
func TestMeterFilePinCyclesBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := filepath.Join(dir, "toggle.csv")
	var b strings.Builder
	b.WriteString("Timestamp(ms),Current(uA),D0-D7\n")
	for i := range 9600 {
		fmt.Fprintf(&b, "%.1f,1600.000,%d0000000\n", float64(i)*0.1, (i/2)%2)
	}
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "rep")
	o, e, code := run(t, context.Background(), "report", in, "--out", out, "--no-html", "--voltage", "5", "--devslp-line", "D0")
	if code != 0 {
		t.Fatalf("report exit %d: %s%s", code, o, e)
	}
	rep := readReportJSON(t, filepath.Join(out, "report.json"))
	dv := rep["drives"].([]any)[0].(map[string]any)["devslp"].(map[string]any)
	if n := len(dv["cycle_results"].([]any)); n != 1000 {
		t.Errorf("%d cycles judged, want 1000 (the bound)", n)
	}
	if !strings.Contains(o, "1400 DEVSLP pin assertions after the first 1000 are not judged") {
		t.Errorf("no note of the assertions left unjudged:\n%s", o)
	}
}
