package notes

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzParse: any input is parsed or refused, never a panic, and what is
// accepted passes Check and survives a round trip.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"at_s": 61.5, "text": "fan came on"}`,
		"{\"at_s\": 60, \"to_s\": 65, \"text\": \"DevSlp held\", \"created\": \"2026-12-02T14:00:00Z\", \"source\": \"cli\"}\n\n{\"at_s\": 1e3, \"text\": \"<script>\"}",
		`{"at_s": -1, "text": "before"}`, `{"at_s": 1}`, `{"at_s": NaN}`, "\xff", `{"at_s": 1, "to_s": 0.5, "text": "x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ns, err := Parse(bytes.NewReader(b), "fuzz")
		if err != nil {
			return
		}
		var buf bytes.Buffer
		for _, n := range ns {
			if err := Check(n); err != nil {
				t.Fatalf("accepted %+v: %v", n, err)
			}
			line, _ := json.Marshal(n)
			buf.Write(append(line, '\n'))
		}
		again, err := Parse(&buf, "again")
		if err != nil || len(again) != len(ns) {
			t.Fatalf("round trip: %v (%d of %d)", err, len(again), len(ns))
		}
	})
}
