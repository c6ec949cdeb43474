package units

import (
	"fmt"
	"testing"
)

func TestString(t *testing.T) {
	cases := []struct {
		got  string
		want string
	}{
		{Watts(0.4).String(), "400 mW"},
		{Watts(0.0025).String(), "2.5 mW"},
		{Amps(1.5).String(), "1.5 A"},
		{Volts(12).String(), "12 V"},
		{Joules(0).String(), "0 J"},
		{Hertz(10000).String(), "10 kHz"},
		{Amps(-0.000002).String(), "-2 µA"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestConversions(t *testing.T) {
	if p := Power(5, 0.08); p != 0.4 {
		t.Fatalf("Power(5 V, 80 mA) = %v, want 0.4 W", p)
	}
	if mw := Watts(0.0025).Milliwatts(); mw != 2.5 {
		t.Fatalf("2.5 mW = %v mW", mw)
	}
	if wh := Joules(7200).WattHours(); wh != 2 {
		t.Fatalf("7200 J = %v Wh", wh)
	}
}

func TestReadout(t *testing.T) {
	for _, c := range []struct {
		w    Watts
		want string
	}{
		{0.4, "400.0 mW"},
		{0.4001, "400.1 mW"},
		{0.0045, "4.5 mW"},
		{0, "0.0 mW"},
		{-0.0062, "-6.2 mW"},
		{0.99994, "999.9 mW"},
		{0.99996, "1.000 W"},
		{2.58, "2.580 W"},
		{-1.5, "-1.500 W"},
	} {
		if got := c.w.Readout(); got != c.want {
			t.Errorf("Watts(%v).Readout() = %q, want %q", float64(c.w), got, c.want)
		}
	}
}

func ExampleWatts_Readout() {
	fmt.Println(Watts(0.4).Readout(), Watts(0.41751).Readout(), Watts(2.58).Readout())
	// Output: 400.0 mW 417.5 mW 2.580 W
}
