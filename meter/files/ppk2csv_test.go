package files

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/meter"
)

// The fixtures were written by the Power Profiler's own export code
// (fixtures/ppk2csv/README.md). Samples 300–309 and 1500 were lost by the
// app (NaN), so their rows are missing.
func lostPPK(n int64) bool { return n >= 300 && n < 310 || n == 1500 }

func TestPPK2Fixtures(t *testing.T) {
	for _, c := range []struct {
		file  string
		rate  float64
		n     int64
		lines bool
		opt   Options
	}{
		{"all-columns-100k.csv", 100000, 2000, true, Options{Voltage: 5}},
		{"time-current-10k.csv", 10000, 3000, false, Options{Voltage: 5}},
		{"current-only-1k.csv", 1000, 1200, false, Options{Voltage: 3.3, Rate: 1000}},
		{"separate-lines-1k.csv", 1000, 1200, true, Options{Voltage: 5}},
	} {
		t.Run(c.file, func(t *testing.T) {
			f := openFile(t, filepath.Join(fixtures, "ppk2csv", c.file), c.opt)
			info := f.Info()
			if info.Format != "ppk2-csv" || float64(info.Rate) != c.rate || info.Meter.Kind != "ppk2" {
				t.Fatalf("info %+v", info)
			}
			if (len(info.Lines) == 8) != c.lines {
				t.Fatalf("lines %v", info.Lines)
			}
			if want := railFor(c.opt.Voltage); info.Channels[0].Rail != want || want == meter.RailOther {
				t.Errorf("rail %v for %g V", info.Channels[0].Rail, float64(c.opt.Voltage))
			}
			r := replay(t, f)
			end := r.checkTiling(t)
			noTime := c.opt.Rate > 0
			if want := c.n; noTime {
				if end != uint64(want) {
					t.Errorf("%d indices, want %d", end, want)
				}
			} else if last := c.n - 1; lostPPK(last) {
				t.Fatalf("fixture ends on a lost sample")
			} else if end != uint64(c.n) {
				t.Errorf("%d indices, want %d", end, c.n)
			}
			for n := int64(0); n < c.n; n++ {
				i, ok := r.i[uint64(n)]
				if lostPPK(n) && !noTime {
					if ok {
						t.Fatalf("sample %d was lost by the app but is in the capture", n)
					}
					continue
				}
				if !ok {
					t.Fatalf("sample %d missing", n)
				}
				// 3 decimals of µA: 0.0005 µA plus float32 rounding of the A value.
				if !near(i, fixtureCurrent(n), 0.6e-9+1e-7*fixtureCurrent(n)) {
					t.Fatalf("sample %d: %.12g A, want %.12g", n, i, fixtureCurrent(n))
				}
				if r.v[uint64(n)] != float64(c.opt.Voltage) {
					t.Fatalf("sample %d voltage %g", n, r.v[uint64(n)])
				}
			}
			if !noTime {
				var miss []string
				for _, g := range r.gaps {
					if g.Reason != "missing" {
						t.Errorf("gap reason %q", g.Reason)
					}
					miss = append(miss, fmt.Sprintf("%d+%d", g.Start, g.Count))
				}
				want := "300+10"
				if c.n > 1500 {
					want += " 1500+1"
				}
				if got := strings.Join(miss, " "); got != want {
					t.Errorf("gaps %s, want %s", got, want)
				}
			}
			if !c.lines {
				if len(r.events) != 0 {
					t.Errorf("%d events from a file without digital columns", len(r.events))
				}
				return
			}
			// Levels: D0 = burst (1000–1099), D3 = 600–899, D5 = X (1) at
			// 50–59; D7 '-' at 20–29 keeps 0.
			level := func(n int64) int64 {
				var l int64
				if (n/1000)%3 == 1 && n%1000 < 100 {
					l |= 1
				}
				if n >= 600 && n < 900 {
					l |= 8
				}
				if n >= 50 && n < 60 {
					l |= 32
				}
				return l
			}
			var got, want []string
			var prev int64 = -1
			for n := int64(0); n < c.n; n++ {
				if lostPPK(n) {
					continue
				}
				if l := level(n); l != prev {
					want = append(want, fmt.Sprintf("%d=%x", n, l))
					prev = l
				}
			}
			for _, e := range r.events {
				got = append(got, fmt.Sprintf("%d=%x", e.Index, e.Value))
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("logic events\n got %s\nwant %s", strings.Join(got, " "), strings.Join(want, " "))
			}
			notes := strings.Join(f.Notes(), "\n")
			for _, w := range []string{"'-'", "'X'"} {
				if !strings.Contains(notes, w) {
					t.Errorf("no note about %s digital values:\n%s", w, notes)
				}
			}
		})
	}
}

func TestPPK2D7First(t *testing.T) {
	csv := "Timestamp(ms),Current(uA),D0-D7\n0,1.000,10000000\n1,1.000,00000001\n"
	f, err := openBytes([]byte(csv), Options{Voltage: 5})
	if err != nil {
		t.Fatal(err)
	}
	r := newRecord()
	if err := f.Replay(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if len(r.events) != 2 || r.events[0].Value != 1 || r.events[1].Value != 0x80 {
		t.Errorf("D0 first: %+v", r.events)
	}
	f, _ = openBytes([]byte(csv), Options{Voltage: 5, D7First: true})
	r = newRecord()
	if err := f.Replay(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if len(r.events) != 2 || r.events[0].Value != 0x80 || r.events[1].Value != 1 {
		t.Errorf("D7 first: %+v", r.events)
	}
}

// TestPPK2Malformed: each broken export is refused with the line and byte
// offset of the first bad row.
func TestPPK2Malformed(t *testing.T) {
	head := "Timestamp(ms),Current(uA),D0-D7\n"
	row := "0,1.000,00000000\n"
	tenRows := ""
	for k := 0; k < 10; k++ {
		tenRows += fmt.Sprintf("%d,1.000,00000000\n", k)
	}
	for _, c := range []struct {
		name, body string
		line, off  int64
		want       string
	}{
		{"not a number", row + "1,abc,00000000\n", 3, int64(len(head) + len(row)), `"abc" is not a number`},
		{"columns", row + "1,2.000\n", 3, int64(len(head) + len(row)), "2 columns"},
		{"bits", row + "1,2.000,0000000\n", 3, int64(len(head) + len(row)), "eight characters"},
		{"bit char", row + "1,2.000,0000000Z\n", 3, int64(len(head) + len(row)), `"Z"`},
		{"off grid", tenRows + "9.5,1.000,00000000\n", 12, int64(len(head) + len(tenRows)), "not on the file's sample grid"},
		{"backwards", row + "1,1.000,00000000\n1,1.000,00000000\n", 4, int64(len(head) + 2*len(row)), "does not come after"},
		{"huge", row + "1,1e12,00000000\n", 3, int64(len(head) + len(row)), "beyond"},
		{"nan", row + "1,NaN,00000000\n", 3, int64(len(head) + len(row)), "not a finite number"},
		{"long line", row + strings.Repeat("9", 5000) + "\n", 3, int64(len(head) + len(row)), "longer than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := openBytes([]byte(head+c.body), Options{Voltage: 5})
			if err == nil {
				err = f.Replay(context.Background(), newRecord())
			}
			var pe *ParseError
			if !errors.As(err, &pe) || !errors.Is(err, ErrMalformed) {
				t.Fatalf("%v: not a ParseError", err)
			}
			if pe.Line != c.line || pe.Offset != c.off || !strings.Contains(pe.Error(), c.want) {
				t.Errorf("%v: want line %d byte %d, %q", err, c.line, c.off, c.want)
			}
		})
	}
	// Options the file needs.
	if _, err := openBytes([]byte(head+row), Options{}); !errors.Is(err, ErrOptions) {
		t.Errorf("no voltage: %v", err)
	}
	if _, err := openBytes([]byte("Current(uA)\n1.000\n"), Options{Voltage: 5}); !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "--rate") {
		t.Errorf("no timestamps, no rate: %v", err)
	}
	if _, err := openBytes([]byte(head+row+"1,1.000,00000000\n"), Options{Voltage: 5, Rate: 10}); !errors.Is(err, ErrOptions) {
		t.Errorf("--rate against the timestamps: %v", err)
	}
}
