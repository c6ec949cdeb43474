package analysis_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/synthcap"
	"github.com/idlewatt/idlewatt/internal/testutil"
	"github.com/idlewatt/idlewatt/report"
)

// TestGoldenReport checks report.json, report.md and summary.csv for a small
// deterministic capture against fixtures/reports/small/ (go test -update
// rewrites them).
func TestGoldenReport(t *testing.T) {
	s := twoDrives()
	s.Duration = 6 * time.Second
	s.RateHz = 2000
	s.Drives[0].DevSlpW = 0.005
	s.Pins = []synthcap.Pin{{Port: 1, From: 5500 * ms, To: 5800 * ms}}
	s.Gaps = []synthcap.Gap{{Channel: 3, Start: 3000, Count: 200}}
	s.Phases = []synthcap.Phase{{At: 0, Name: "idle"}, {At: 4 * time.Second, Name: "workload:x"}}
	s.IO[1].Start = 3 * time.Second
	s.CRCErrors = 3
	r := analyze(t, s, analysis.DefaultOptions())
	r.Capture.Path = ""
	r.Capture.EndOffset = 0 // depends on the capture encoding, not on analysis
	dir := filepath.Join("..", "fixtures", "reports", "small")
	var js, md, cs bytes.Buffer
	if err := report.WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	report.WriteMarkdown(&md, r)
	if err := report.WriteCSV(&cs, r); err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][]byte{report.FileJSON: js.Bytes(), report.FileMD: md.Bytes(), report.FileCSV: cs.Bytes()} {
		testutil.Golden(t, filepath.Join(dir, name), got)
	}
	back, err := analysis.ReadJSON(bytes.NewReader(js.Bytes()))
	if err != nil || back.Drives[0].EnergyJ != r.Drives[0].EnergyJ {
		t.Errorf("round trip: %v", err)
	}
}

func FuzzReadJSON(f *testing.F) {
	f.Add([]byte(`{"schema":"idlewatt.report/v1","drives":[{"name":"a","port":1}]}`))
	f.Add([]byte(`{"schema":"x"}`))
	f.Add([]byte(`[`))
	f.Add([]byte(`{"schema":"idlewatt.report/v1","drives":[{"name":"a","port":1,"active_idle_w":null,"average_w":0.5,"average_u95_w":0.01,` +
		`"peak_windows":{"1s_w":null},"bursts":{"mean_w":null},"quiet":{"w":null},"phases":[{"name":"p","active_idle_w":null,"segments":{"busy_w":null}}]}]}`))
	if b, err := os.ReadFile(filepath.Join("..", "fixtures", "reports", "small", report.FileJSON)); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := analysis.ReadJSON(bytes.NewReader(b))
		if err != nil {
			return
		}
		var out bytes.Buffer
		report.WriteMarkdown(&out, r)
		if err := report.WriteCSV(&out, r); err != nil {
			t.Fatal(err)
		}
		// What was read writes back and reads again to the same bytes:
		// nulls stay null (NaN in between), numbers stay numbers.
		var j1, j2 bytes.Buffer
		if err := report.WriteJSON(&j1, r); err != nil {
			t.Fatal(err)
		}
		r2, err := analysis.ReadJSON(bytes.NewReader(j1.Bytes()))
		if err != nil {
			t.Fatalf("re-reading what was written: %v\n%s", err, j1.String())
		}
		if err := report.WriteJSON(&j2, r2); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(j1.Bytes(), j2.Bytes()) {
			t.Fatalf("round trip differs:\n%s", testutil.FirstDiff(j1.String(), j2.String()))
		}
	})
}
