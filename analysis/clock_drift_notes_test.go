package analysis_test

import (
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/meter"
)

// TestClockNotesDoNotContradict (issue 26 item 9): marks whose meter
// indices run a million times too fast agree only on a drift of about
// −1e6 ppm, which is refused; the clock used is the nominal rate through
// the marks' median offset. When that puts the first sample far from the
// header's start time, the note used to say "the clock fit (3 marks that
// agree)" beside "clock drift −1e+06 ppm refused": it now names the offset
// actually used, and the drift note says how far the marks lie from it.
func TestClockNotesDoNotContradict(t *testing.T) {
	s := twoDrives()
	r := analyzeEdited(t, s, func(k int, m *meter.MarkEcho) { m.MeterIndex *= 1e6 })
	notes := strings.Join(r.Notes, "\n")
	a := r.Alignment
	if a.DriftRefusedPPM > -999000 || a.DriftPPM != 0 {
		t.Fatalf("alignment %+v", a)
	}
	if strings.Contains(notes, "marks that agree") {
		t.Errorf("a refused drift beside marks that agree:\n%s", notes)
	}
	for _, want := range []string{"refused", "median offset at the header's rate", "marks lie up to"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	near(t, "A duration_s", float64(r.Drives[0].DurationS), 20, 1e-9) // the nominal rate
}
