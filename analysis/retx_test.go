package analysis_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/report"
)

// The link's retransmission counters reach the report: numbers for a
// capture of a retransmitting link (0 when nothing was recovered), null
// for one that does not record them.
func TestReportRecoveredRefused(t *testing.T) {
	for _, c := range []struct {
		name               string
		retx               bool
		recovered, refused uint64
		want               string
	}{
		{"retransmitting link", true, 1234, 5, `"samples_recovered": 1234,` + "\n" + `    "frames_refused": 5,`},
		{"retransmitting link, clean", true, 0, 0, `"samples_recovered": 0,` + "\n" + `    "frames_refused": 0,`},
		{"no retransmission recorded", false, 0, 0, `"samples_recovered": null,` + "\n" + `    "frames_refused": null,`},
	} {
		s := twoDrives()
		s.Duration = time.Second
		s.Retransmit, s.Recovered, s.Refused = c.retx, c.recovered, c.refused
		r := analyze(t, s, analysis.DefaultOptions())
		var js bytes.Buffer
		if err := report.WriteJSON(&js, r); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(js.String(), c.want) {
			t.Errorf("%s: report.json lacks %s", c.name, c.want)
		}
	}
}
