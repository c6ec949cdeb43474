package analysis

import (
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/meter"
)

// TestNegativeMeaningBySense: what negative readings mean follows the
// meter's stated current sense (meter.Info.CurrentSense), not its kind.
func TestNegativeMeaningBySense(t *testing.T) {
	ch := meter.Channel{Port: 1, Rail: meter.Rail5V, CurrentLSB: 100e-6}
	// Every sample at −0.5 A on 5 V: measured backwards.
	backwards := negativePower{n: 3000, total: 3000, min: -2.5, sum: -7500}
	// 30 of 3000 at one value far beyond 20 LSBs (10 mW): not an offset,
	// clustered, so not a noise tail either.
	beyond := negativePower{n: 30, total: 3000, min: -0.5, sum: -15}
	for _, tc := range []struct {
		sense          meter.CurrentSense
		backwards, far string
	}{
		{meter.SenseShunt, "shunt's IN+/IN−", "check the wiring"},
		{meter.SenseSink, "leads (or the ammeter's HI/LO) are reversed", "check the wiring"},
		{meter.SenseUnipolar, "does not measure reverse current, so its offset calibration", "check its offset calibration and the DUT for back-feeding"},
	} {
		if got := negativeMeaning(tc.sense, ch, backwards); !strings.Contains(got, tc.backwards) {
			t.Errorf("sense %q, mostly negative: %q, want it to say %q", tc.sense, got, tc.backwards)
		}
		if got := negativeMeaning(tc.sense, ch, beyond); !strings.Contains(got, tc.far) {
			t.Errorf("sense %q, beyond the offset: %q, want it to say %q", tc.sense, got, tc.far)
		}
	}
}
