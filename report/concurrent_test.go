package report

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/analysis/synthcap"
	"github.com/idlewatt/idlewatt/report/chart"
)

// TestBuildChartsInOrder: the charts rendered concurrently come out as
// drawn one after another, in the same order, to the byte; a stop at the
// third chart ends the build with the stop's error and no charts.
func TestBuildChartsInOrder(t *testing.T) {
	s := synthcap.Review(80*time.Second, 1000, 50) // two drives, a DEVSLP cycle each
	path := filepath.Join(t.TempDir(), "c.iwcap")
	if err := synthcap.Write(path, s); err != nil {
		t.Fatal(err)
	}
	opts := analysis.DefaultOptions()
	opts.States = &analysis.StateOptions{}
	r, err := analysis.Analyze(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	var want []Output
	if err := makeCharts(r, func(f *chart.Figure, err error, name string) error {
		o, err := renderFig(f, err, name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		} else if o.Data != nil {
			want = append(want, o)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(want) < 6 {
		t.Fatalf("%d charts drawn, want power, active idle, average, histogram, CDF and DevSlp ones", len(want))
	}
	got, err := buildCharts(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d charts, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Name != want[i].Name || !bytes.Equal(got[i].Data, want[i].Data) {
			t.Errorf("chart %d: %s (%d bytes), want %s (%d bytes)", i, got[i].Name, len(got[i].Data), want[i].Name, len(want[i].Data))
		}
	}
	stop := errors.New("stop")
	n := 0
	outs, err := buildCharts(r, func() error {
		if n++; n == 3 {
			return stop
		}
		return nil
	})
	if outs != nil || !errors.Is(err, stop) {
		t.Errorf("stopped at the third chart: %d charts, %v", len(outs), err)
	}
}

// TestGoRenderRaisesPanicOnCaller: a panic while report.html is built on
// its goroutine is raised again where its result is awaited.
func TestGoRenderRaisesPanicOnCaller(t *testing.T) {
	wait := goRender(func() ([]byte, error) { panic("boom") })
	defer func() {
		if p := recover(); p != "boom" {
			t.Errorf("recovered %v, want boom", p)
		}
	}()
	wait()
	t.Error("no panic")
}
