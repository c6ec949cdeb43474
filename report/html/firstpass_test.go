package html

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/synthcap"
	"github.com/idlewatt/idlewatt/meter"
)

// sampleOnly hides a Pyramid's analysis.RecordSink: the analysis hands it
// samples only, so it reads the pin edges and the events itself (the
// reference for what the first pass's records must give).
type sampleOnly struct{ p *Pyramid }

func (s sampleOnly) Begin(c analysis.Clock, t0 float64) { s.p.Begin(c, t0) }
func (s sampleOnly) DriveSamples(port int, t, dt float64, w []float64) {
	s.p.DriveSamples(port, t, dt, w)
}
func (s sampleOnly) DriveState(port int, t float64, st analysis.State) { s.p.DriveState(port, t, st) }
func (s sampleOnly) RailBlock(t, dt float64, b *meter.Block)           { s.p.RailBlock(t, dt, b) }

var _ analysis.RecordSink = (*Pyramid)(nil)

// TestFirstPassRecords: report.html built from the records of analysis'
// first pass (no read of its own) is, to the byte, report.html built from
// the pin edges and events read from the capture again — for the whole
// capture, for an interval of it (whose first pass is still the whole
// capture's), and when the capture has more I/O or more host and meter
// events than a Pyramid keeps (then it reads them again).
func TestFirstPassRecords(t *testing.T) {
	sc := synthcap.Review(80*time.Second, 1000, 50) // two drives, I/O bursts, a DEVSLP cycle each
	path := filepath.Join(t.TempDir(), "c.iwcap")
	if err := synthcap.Write(path, sc); err != nil {
		t.Fatal(err)
	}
	page := func(window *analysis.Window, hide bool) ([]byte, *Pyramid) {
		t.Helper()
		opts := analysis.DefaultOptions()
		opts.States = &analysis.StateOptions{}
		opts.Window = window
		p := NewPyramidFor(path, Budget{})
		opts.Samples = p
		if hide {
			opts.Samples = sampleOnly{p}
		}
		r, err := analysis.Analyze(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Render(r, p, Options{Capture: path})
		if err != nil {
			t.Fatal(err)
		}
		return b, p
	}
	for name, w := range map[string]*analysis.Window{"whole": nil, "window": {FromS: 20, ToS: 70}} {
		t.Run(name, func(t *testing.T) {
			want, ref := page(w, true)
			if ref.fp.done {
				t.Fatal("the reference was handed the first pass's records")
			}
			got, p := page(w, false)
			if !p.fp.done || p.fp.over || len(p.fp.io) == 0 || len(p.fp.events) == 0 || len(p.fp.edges.edges) == 0 {
				t.Fatalf("first pass's records: done %v, I/O %d, events %d (over %v), pin edges %d", p.fp.done, len(p.fp.io), len(p.fp.events), p.fp.over, len(p.fp.edges.edges))
			}
			if !bytes.Equal(got, want) {
				t.Errorf("report.html from the first pass's records differs (%d bytes, want %d)", len(got), len(want))
			}
			if len(ref.edges) == 0 || !bytes.Contains(want, []byte(`"io_k":[`)) {
				t.Errorf("the reference page has %d pin edges and no I/O: nothing compared", len(ref.edges))
			}
		})
	}
	for name, max := range map[string]*int{"io over": &maxKeptIO, "events over": &maxKeptEvents} {
		t.Run(name, func(t *testing.T) {
			want, _ := page(nil, true)
			defer func(n int) { *max = n }(*max)
			*max = 2
			got, p := page(nil, false)
			if !p.fp.over || p.fp.io != nil || p.fp.events != nil {
				t.Fatalf("more than kept: over %v, %d I/O and %d events kept", p.fp.over, len(p.fp.io), len(p.fp.events))
			}
			if !bytes.Equal(got, want) {
				t.Errorf("report.html with its events read again differs (%d bytes, want %d)", len(got), len(want))
			}
		})
	}
}
