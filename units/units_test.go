package units

import (
	"fmt"
	"math"
	"testing"
	"time"
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
		{Milliwatts(5).String(), "5 mW"},
		{Seconds(0.25).String(), "250 ms"},
		{Seconds(1.5).String(), "1.5 s"},
		{Seconds(3600).String(), "3600 s"},
		{Seconds(-0.000012).String(), "-12 µs"},
		{Seconds(0).String(), "0 s"},
		{Seconds(math.NaN()).String(), "NaN s"},
		{Milliseconds(250).String(), "250 ms"},
		{Milliseconds(1500).String(), "1.5 s"},
		{Milliseconds(0.1).String(), "100 µs"},
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
	if w := Milliwatts(2.5).Watts(); w != 0.0025 {
		t.Fatalf("2.5 mW = %v W", float64(w))
	}
	if wh := Joules(7200).WattHours(); wh != 2 {
		t.Fatalf("7200 J = %v Wh", wh)
	}
}

func TestTimeAndRate(t *testing.T) {
	if p := Hertz(10000).Period(); p != 100*time.Microsecond {
		t.Errorf("10 kHz period = %v, want 100µs", p)
	}
	if p := Hertz(3).Period(); p != 333333333 {
		t.Errorf("3 Hz period = %d ns, want 333333333 (truncated)", p)
	}
	if n := Hertz(10000).Samples(0.01); n != 100 {
		t.Errorf("10 ms at 10 kHz = %v samples, want 100", n)
	}
	if s := Hertz(1000).Span(250); s != 0.25 {
		t.Errorf("250 samples at 1 kHz = %v, want 0.25 s", float64(s))
	}
	if d := Seconds(1.5).Duration(); d != 1500*time.Millisecond {
		t.Errorf("1.5 s = %v", d)
	}
	if d := Milliseconds(2.5).Duration(); d != 2500*time.Microsecond {
		t.Errorf("2.5 ms = %v", d)
	}
	if m := Seconds(0.25).Milliseconds(); m != 250 {
		t.Errorf("0.25 s = %v ms, want 250", float64(m))
	}
	if s := Milliseconds(250).Seconds(); s != 0.25 {
		t.Errorf("250 ms = %v s, want 0.25", float64(s))
	}
	if s := SecondsOf(90 * time.Second); s != 90 {
		t.Errorf("SecondsOf(90s) = %v", float64(s))
	}
}

// TestFormatVerbs pins what the report writers rely on: a quantity formats
// as its number under the numeric verbs (%g, %.3f) and as its String only
// under %v and %s, so that typing a float64 field changes no output written
// with a numeric verb.
func TestFormatVerbs(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{fmt.Sprintf("%g", Watts(0.4)), "0.4"},
		{fmt.Sprintf("%.3f", Seconds(1.5)), "1.500"},
		{fmt.Sprintf("%g", Hertz(1e4)), "10000"},
		{fmt.Sprintf("%.2f", Milliseconds(3)), "3.00"},
		{fmt.Sprintf("%v", Watts(0.4)), "400 mW"},
		{fmt.Sprintf("%s", Seconds(0.5)), "500 ms"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func ExampleMilliseconds() {
	entry := Milliseconds(42.5) // a report's entry_ms
	fmt.Printf("%v = %g s = %v\n", entry, entry.Seconds(), entry.Duration())
	// Output: 42.5 ms = 0.0425 s = 42.5ms
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
