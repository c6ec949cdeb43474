package units

import "testing"

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
