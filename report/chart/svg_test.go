package chart

import (
	"bytes"
	"regexp"
	"testing"
)

// TestSVGColours: every colour an SVG chart names is a six-digit hex
// colour. A panel's transparent background used to be written as
// fill="#-8000000000000000-8000000000000000-8000000000000000" (gonum's
// vgsvg divides a colour by its alpha), which SVG viewers refuse.
func TestSVGColours(t *testing.T) {
	t.Parallel()
	bars, err := ActiveIdlePower([]Bar{{"a", 0.4, 0.01}, {"b", 0.2, 0}})
	if err != nil {
		t.Fatal(err)
	}
	power, err := PowerOverTime(synthTraces(t), PowerOpts{Title: "T", Unit: UnitAuto})
	if err != nil {
		t.Fatal(err)
	}
	ds := synthHists(t)
	hist, err := Histogram(ds, DistOpts{Title: "H", LogY: true})
	if err != nil {
		t.Fatal(err)
	}
	cdf, err := CDF(ds, DistOpts{Title: "C"})
	if err != nil {
		t.Fatal(err)
	}
	attr := regexp.MustCompile(`(?:fill|stroke):([^;"]*)`)
	hex := regexp.MustCompile(`^(#[0-9A-Fa-f]{6}|none)$`)
	for name, f := range map[string]*Figure{"bars": bars, "power": power, "hist": hist, "cdf": cdf} {
		var b bytes.Buffer
		if err := f.Write(&b, "svg"); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n := 0
		for _, m := range attr.FindAllSubmatch(b.Bytes(), -1) {
			n++
			if !hex.Match(m[1]) {
				t.Errorf("%s.svg: colour %q", name, m[1])
				break
			}
		}
		if n == 0 {
			t.Errorf("%s.svg names no colour: %.300s", name, b.String())
		}
	}
}
