package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestReportAverageMatchesExportCSV checks the report's average power
// against an independent computation from `export --csv`: the mean over the
// exported rows of the sum of the port's rail powers. The stream comes from
// the emulated hub with a simulated drive (whose power varies: partial,
// slumber, GC, noise), so the check is not a constant.
func TestReportAverageMatchesExportCSV(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stream := filepath.Join(dir, "hub.bin")
	ctx := context.Background()
	if o, e, code := run(t, ctx, "hub", "emulate", "--fast", "--duration", "4s", "--rate", "5000", "--ports", "2",
		"--profile", "jmf667h-128-a19,hdd-7200", "--policy", "med_power_with_dipm", "--out", stream); code != 0 {
		t.Fatalf("hub emulate --fast: exit %d %s%s", code, o, e)
	}
	capPath := filepath.Join(dir, "c.iwcap")
	if o, e, code := run(t, ctx, "record", "--meter", "hub", "--port", stream, "--out", capPath); code != 0 {
		t.Fatalf("record: exit %d %s%s", code, o, e)
	}
	out, e, code := run(t, ctx, "report", capPath, "--out", filepath.Join(dir, "rep"), "--json")
	if code != 0 {
		t.Fatalf("report: exit %d %s", code, e)
	}
	var rep struct {
		Drives []struct {
			Port     int     `json:"port"`
			AverageW float64 `json:"average_w"`
			Samples  struct {
				Count uint64 `json:"count"`
			} `json:"samples"`
		} `json:"drives"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		// --json may print more than the report; fall back to the file.
		b, ferr := os.ReadFile(filepath.Join(dir, "rep", "report.json"))
		if ferr != nil || json.Unmarshal(b, &rep) != nil {
			t.Fatalf("report JSON: %v", err)
		}
	}
	csvPath := filepath.Join(dir, "c.csv")
	if o, e, code := run(t, ctx, "export", capPath, "--csv", csvPath); code != 0 {
		t.Fatalf("export: exit %d %s%s", code, o, e)
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cr := csv.NewReader(f)
	head, err := cr.Read()
	if err != nil {
		t.Fatal(err)
	}
	cols := map[int][]int{} // port → its rails' _w columns
	total := map[int]int{}  // port → its pN_total_w column
	for i, h := range head {
		var port int
		if strings.HasSuffix(h, "_total_w") {
			if _, err := fmtSscan(h[1:], &port); err == nil {
				total[port] = i
			}
			continue
		}
		if strings.HasSuffix(h, "_w") && strings.HasPrefix(h, "p") {
			if _, err := fmtSscan(h[1:], &port); err == nil {
				cols[port] = append(cols[port], i)
			}
		}
	}
	sum := map[int]float64{}
	n := map[int]int{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	port:
		for p, cs := range cols {
			var w float64
			for _, c := range cs {
				if rec[c] == "" {
					continue port // a missing rail: the drive sample is missing
				}
				x, err := strconv.ParseFloat(rec[c], 64)
				if err != nil {
					t.Fatalf("cell %q: %v", rec[c], err)
				}
				w += x
			}
			// The export's own total is the sum of the rails it printed.
			if tc, ok := total[p]; !ok {
				t.Fatalf("no p%d_total_w column in %v", p, head)
			} else if x, err := strconv.ParseFloat(rec[tc], 64); err != nil || math.Abs(x-w) > 1e-6*math.Max(1, math.Abs(w)) {
				t.Fatalf("p%d_total_w %q, rails sum to %v", p, rec[tc], w)
			}
			sum[p] += w
			n[p]++
		}
	}
	if len(rep.Drives) != 2 {
		t.Fatalf("report has %d drives", len(rep.Drives))
	}
	for _, d := range rep.Drives {
		csvAvg := sum[d.Port] / float64(n[d.Port])
		rel := math.Abs(d.AverageW-csvAvg) / csvAvg
		t.Logf("port %d: report average %.6f W, export CSV %.6f W over %d rows: %.4f %% apart", d.Port, d.AverageW, csvAvg, n[d.Port], 100*rel)
		if rel > 0.005 {
			t.Errorf("port %d: report average %.6f W vs export CSV %.6f W: %.3f %% apart (goal ≤ 0.5 %%)", d.Port, d.AverageW, csvAvg, 100*rel)
		}
		if uint64(n[d.Port]) != d.Samples.Count {
			t.Errorf("port %d: %d CSV rows with all rails, report counts %d samples", d.Port, n[d.Port], d.Samples.Count)
		}
	}
}

// fmtSscan parses the port number at the start of s ("1_5v_w" → 1).
func fmtSscan(s string, port *int) (int, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	p, err := strconv.Atoi(s[:i])
	*port = p
	return i, err
}
