package capture

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter"
)

// TestLegacyCurrentSense: a header written before meter.Info.CurrentSense
// (a PPK2 or SCPI capture without the field) reads with the sense its
// driver now states; a stated sense and a hub's (the zero value, omitted)
// read as written.
func TestLegacyCurrentSense(t *testing.T) {
	for _, tc := range []struct {
		kind  string
		sense meter.CurrentSense
		want  meter.CurrentSense
	}{
		{"ppk2", "", meter.SenseUnipolar},
		{"scpi", "", meter.SenseSink},
		{"hub", "", meter.SenseShunt},
		{"linemeter", "", meter.SenseShunt},
		{"ppk2", meter.SenseSink, meter.SenseSink},
		{"other", meter.SenseUnipolar, meter.SenseUnipolar},
	} {
		h := testHeader()
		h.Meter.Kind, h.Meter.CurrentSense = tc.kind, tc.sense
		var buf bytes.Buffer
		w, err := NewWriter(&buf, h, Options{FlushEvery: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if stated := strings.Contains(buf.String(), `"current_sense"`); stated != (tc.sense != "") {
			t.Errorf("%s %q: current_sense in the header JSON: %v", tc.kind, tc.sense, stated)
		}
		r, err := NewReader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Header().Meter.CurrentSense; got != tc.want {
			t.Errorf("kind %q, written %q: read %q, want %q", tc.kind, tc.sense, got, tc.want)
		}
	}
}
