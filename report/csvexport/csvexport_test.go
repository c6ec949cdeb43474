package csvexport

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// gapCapture is one 5 V channel at 10 samples/s: indices 1000–1009, a gap
// of 10, then 1020–1029; sample k draws 5 V × k mA.
func gapCapture(t *testing.T) *capture.Reader {
	t.Helper()
	h := capture.Header{Created: "2026-01-02T03:04:05Z", Meter: meter.Info{Kind: "hub", Model: "test", Ports: 1},
		Channels: []meter.Channel{{Port: 1, Rail: meter.Rail5V}}, RateHz: 10, Tool: "idlewatt test"}
	var blocks []*meter.Block
	for _, start := range []uint64{1000, 1020} {
		b := &meter.Block{Channel: 0, Start: start, V: make([]units.Volts, 10), I: make([]units.Amps, 10)}
		for k := range 10 {
			b.V[k], b.I[k] = 5, units.Amps(float64(start-1000+uint64(k))/1000)
		}
		blocks = append(blocks, b)
	}
	return captureOf(t, h, blocks...)
}

// captureOf writes a capture of h holding blocks and opens it.
func captureOf(t *testing.T, h capture.Header, blocks ...*meter.Block) *capture.Reader {
	t.Helper()
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, h, capture.Options{FlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		if err := w.Samples(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := capture.NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestWindow(t *testing.T) {
	for _, c := range []struct {
		name string
		win  Window
		want []string // data rows' first two cells: t_s,sample_index
	}{
		{"all", All, nil},
		// The gap [1.0 s, 2.0 s) reaches 1.5 s: its row is kept.
		{"from inside the gap", Window{From: 1500 * time.Millisecond, To: 2500 * time.Millisecond},
			[]string{"1,1010", "2,1020", "2.1,1021", "2.2,1022", "2.3,1023", "2.4,1024"}},
		// A gap that ends at From is before the window.
		{"from the gap's end", Window{From: 2 * time.Second, To: 2200 * time.Millisecond}, []string{"2,1020", "2.1,1021"}},
		{"to zero", Window{To: 0}, []string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			res, err := Write(&out, gapCapture(t), c.win)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if lines[0] != "t_s,sample_index,gap,p1_5v_v,p1_5v_a,p1_5v_w,p1_total_w,p1_drive,run_id" {
				t.Fatalf("header %q", lines[0])
			}
			// run_id, the last cell of every row: docs/capture-format.md's
			// "Run identity", computed here from the header as written there.
			h := gapCapture(t).Header()
			sum := sha256.Sum256([]byte(fmt.Sprintf("idlewatt.run/v1\n%s\n%d\n%s\n%s\n%s\n", h.Created, int64(h.StartHost), h.Meter.Kind, h.Meter.Serial, h.Tool)))
			id := hex.EncodeToString(sum[:])[:16]
			var rows []string
			for _, l := range lines[1:] {
				cut, ok := strings.CutSuffix(l, ",,"+id) // p1_drive empty: the header names no drive
				if !ok {
					t.Fatalf("row %q does not end in run_id %s", l, id)
				}
				rows = append(rows, cut)
			}
			if res.Rows != len(rows) || !res.Samples {
				t.Fatalf("result %+v for %d rows", res, len(rows))
			}
			if c.want == nil { // every index, the gap as one row
				// The power cell is the float32 product, printed shortest.
				w1020 := strconv.FormatFloat(float64(float32(5)*float32(0.02)), 'g', -1, 32)
				if len(rows) != 21 || rows[0] != "0,1000,,5,0,0,0" || rows[10] != "1,1010,10,,,," || rows[11] != "2,1020,,5,0.02,"+w1020+","+w1020 {
					t.Fatalf("rows:\n%s", strings.Join(rows, "\n"))
				}
				return
			}
			var got []string
			for _, r := range rows {
				f := strings.SplitN(r, ",", 3)
				got = append(got, f[0]+","+f[1])
			}
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Fatalf("rows %v, want %v", got, c.want)
			}
		})
	}
}

// The drives' names are in every row, one column per port, quoted as RFC
// 4180 says where they hold a comma or a quote: encoding/csv reads them
// back as written in the header, and a port the header names no drive for
// has an empty cell.
func TestDriveNames(t *testing.T) {
	h := capture.Header{Created: "2026-01-02T03:04:05Z", Meter: meter.Info{Kind: "hub", Model: "test", Ports: 3},
		Channels: []meter.Channel{{Port: 1, Rail: meter.Rail5V}, {Port: 2, Rail: meter.Rail5V}, {Port: 3, Rail: meter.Rail5V}},
		Drives:   []capture.DriveInfo{{Port: 1, Name: `SSD "A", 1 TB`}, {Port: 3, Name: "plain"}}, RateHz: 10, Tool: "idlewatt test"}
	var blocks []*meter.Block
	for c := range 3 {
		blocks = append(blocks, &meter.Block{Channel: c, Start: 0, V: []units.Volts{5, 5}, I: []units.Amps{0.1, 0.2}})
	}
	r := captureOf(t, h, blocks...)
	var out bytes.Buffer
	if _, err := Write(&out, r, All); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatalf("encoding/csv: %v\n%s", err, out.String())
	}
	col := map[string]int{}
	for i, k := range recs[0] {
		col[k] = i
	}
	for _, row := range recs[1:] {
		for k, want := range map[string]string{"p1_drive": `SSD "A", 1 TB`, "p2_drive": "", "p3_drive": "plain"} {
			i, ok := col[k]
			if !ok {
				t.Fatalf("no column %s in %v", k, recs[0])
			}
			if row[i] != want {
				t.Errorf("%s = %q, want %q", k, row[i], want)
			}
		}
		if row[len(row)-1] != capture.RunID(h) {
			t.Errorf("last cell %q, want run_id %s", row[len(row)-1], capture.RunID(h))
		}
	}
	if len(recs) != 3 {
		t.Errorf("%d records, want a header and 2 rows", len(recs))
	}
}
