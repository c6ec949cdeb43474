package files

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func fixtureVoltage(n int64) float64 {
	return float64(float32(5.0 + 0.001*float64((n*13)%7-3)))
}

func TestOtiiFixture(t *testing.T) {
	f := openFile(t, filepath.Join(fixtures, "otii", "arc-main-wallclock.csv"), Options{})
	info := f.Info()
	if info.Format != "otii-csv" || info.Rate != 4000 || info.Meter.Kind != "otii" || !strings.HasPrefix(info.Meter.Model, "Arc") {
		t.Fatalf("info %+v", info)
	}
	if want := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC); !info.Start.Equal(want) {
		t.Errorf("start %v", info.Start)
	}
	notes := strings.Join(info.Notes, "\n")
	if !strings.Contains(notes, "Arc Main Energy (J)") {
		t.Errorf("the unused energy column is not in the notes:\n%s", notes)
	}
	r := replay(t, f)
	if end := r.checkTiling(t); end != 1200 {
		t.Errorf("%d indices, want 1200", end)
	}
	if len(r.gaps) != 1 || r.gaps[0].Start != 500 || r.gaps[0].Count != 4 || r.gaps[0].Reason != "missing" {
		t.Errorf("gaps %+v", r.gaps)
	}
	for n := int64(0); n < 1200; n++ {
		if n >= 500 && n < 504 {
			continue
		}
		i, v := r.i[uint64(n)], r.v[uint64(n)]
		if float32(i) != float32(fixtureCurrent(n)) || math.Abs(v-fixtureVoltage(n)) > 5e-7 {
			t.Fatalf("sample %d: %.9g A %.9g V, want %.9g %.9g", n, i, v, fixtureCurrent(n), fixtureVoltage(n))
		}
	}
}

func TestOtiiVariants(t *testing.T) {
	row := func(k int) string { return fmt.Sprintf("%g,%g,%d\n", float64(k)*0.001, 0.5+float64(k%3), k/2%2) }
	var b strings.Builder
	b.WriteString("Timestamp (s),Main Current (mA),GPI1\n")
	for k := 0; k < 20; k++ {
		b.WriteString(row(k))
	}
	f, err := openBytes([]byte(b.String()), Options{Voltage: 3.3})
	if err != nil {
		t.Fatal(err)
	}
	if f.Info().Rate != 1000 || len(f.Info().Lines) != 1 || f.Info().Lines[0] != "GPI1" {
		t.Fatalf("info %+v", f.Info())
	}
	r := newRecord()
	if err := f.Replay(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if r.i[4] != 0.0015 || r.v[4] != 3.3 || len(r.events) != 10 {
		t.Errorf("sample 4: %g A %g V; %d events", r.i[4], r.v[4], len(r.events))
	}
	// Without --voltage and without a voltage column: refused.
	if _, err := openBytes([]byte(b.String()), Options{}); !errors.Is(err, ErrOptions) {
		t.Errorf("no voltage: %v", err)
	}
	// A bad wall-clock value names its line.
	bad := "\"Wall-clock time (UTC)\",\"Arc Main Current (A)\"\n\"2024-03-01T12:00:00Z\",\"0.1\"\n\"yesterday\",\"0.1\"\n"
	_, err = openBytes([]byte(bad), Options{Voltage: 5, Rate: 1})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 3 {
		t.Errorf("bad time: %v", err)
	}
	// A digital column that is not 0/1.
	dig := "Timestamp (s),Main Current (A),GPI1\n0,0.1,0\n0.001,0.1,2\n"
	f, err = openBytes([]byte(dig), Options{Voltage: 5})
	if err == nil {
		err = f.Replay(context.Background(), newRecord())
	}
	if !errors.As(err, &pe) || pe.Line != 3 || !strings.Contains(err.Error(), "digital level") {
		t.Errorf("digital 2: %v", err)
	}
}
