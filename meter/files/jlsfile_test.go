package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter"
)

// logicString lists logic events as index=hex level.
func logicString(r *record) string {
	var s []string
	for _, e := range r.events {
		if e.Kind == meter.EventLogic {
			s = append(s, fmt.Sprintf("%d=%x", e.Index, e.Value))
		}
	}
	return strings.Join(s, " ")
}

func TestJLSUpstreamJS220(t *testing.T) {
	f := openFile(t, filepath.Join(fixtures, "jls", "js220-like.jls"), Options{})
	info := f.Info()
	if info.Format != "jls" || info.Rate != 1000 || info.Meter.Kind != "joulescope" || info.Meter.Serial != "000415" ||
		strings.Join(info.Lines, ",") != "gpi[0],gpi[1]" || info.Channels[0].Rail != meter.Rail5V {
		t.Fatalf("info %+v", info)
	}
	if want := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC); !info.Start.Equal(want) {
		t.Errorf("start %v, want %v", info.Start, want)
	}
	r := replay(t, f)
	if end := r.checkTiling(t); end != 10000 {
		t.Fatalf("%d indices", end)
	}
	gaps := map[string]string{}
	for _, g := range r.gaps {
		gaps[g.Reason] += fmt.Sprintf("%d+%d ", g.Start, g.Count)
	}
	if gaps["no-voltage"] != "0+5 " || gaps["nan"] != "5000+50 " || len(gaps) != 2 {
		t.Errorf("gaps %v", gaps)
	}
	for n := int64(0); n < 10000; n++ {
		if n < 5 || n >= 5000 && n < 5050 {
			continue
		}
		if r.i[uint64(n)] != fixtureCurrent(n) || r.v[uint64(n)] != fixtureVoltage(n) {
			t.Fatalf("sample %d: %.9g A %.9g V, want %.9g %.9g", n, r.i[uint64(n)], r.v[uint64(n)], fixtureCurrent(n), fixtureVoltage(n))
		}
	}
	// gpi[0] (bit 0) during the bursts at 1000–1099, 4000–4099, 7000–7099;
	// gpi[1] (bit 1) for 6000–8999.
	if got, want := logicString(r), "0=0 1000=1 1100=0 4000=1 4100=0 6000=2 7000=3 7100=2 9000=0"; got != want {
		t.Errorf("logic\n got %s\nwant %s", got, want)
	}
}

func TestJLSUpstreamLevelsOmit(t *testing.T) {
	path := filepath.Join(fixtures, "jls", "levels-omit.jls")
	if _, err := Open(path, Options{}); !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "--voltage") {
		t.Fatalf("no voltage signal and no --voltage: %v", err)
	}
	f := openFile(t, path, Options{Voltage: 3.3})
	if info := f.Info(); !info.Start.IsZero() || info.Channels[0].Rail != meter.Rail3V3 || info.Meter.Model != "JS110 (JLS file)" {
		t.Errorf("info %+v", info)
	}
	r := replay(t, f)
	if end := r.checkTiling(t); end != 20000 || len(r.gaps) != 0 {
		t.Fatalf("%d indices, gaps %v", end, r.gaps)
	}
	for n := int64(0); n < 20000; n++ {
		if r.i[uint64(n)] != fixtureCurrent(n) || r.v[uint64(n)] != 3.3 {
			t.Fatalf("sample %d: %g A %g V", n, r.i[uint64(n)], r.v[uint64(n)])
		}
	}
	if got, want := logicString(r), "0=0 6000=1 6500=0 12000=2"; got != want {
		t.Errorf("logic %s, want %s", got, want)
	}
}

// TestJLSCut: a JLS file cut short (a writer that did not finish) imports
// what it holds, and says so.
func TestJLSCut(t *testing.T) {
	b := readFixture(t, "jls/js220-like.jls")
	cut := b[:len(b)*2/3]
	f, err := jlsFormat.Open(bytes.NewReader(cut), int64(len(cut)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := newRecord()
	if err := f.Replay(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	end := r.checkTiling(t)
	if end == 0 || end >= 10000 {
		t.Fatalf("%d indices from a file cut at 2/3", end)
	}
	for idx, i := range r.i {
		if i != fixtureCurrent(int64(idx)) {
			t.Fatalf("sample %d: %g", idx, i)
		}
	}
	if !strings.Contains(strings.Join(f.Notes(), "\n"), "ends before its writer finished") {
		t.Errorf("notes %q", f.Notes())
	}
}
