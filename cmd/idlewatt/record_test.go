package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
	"github.com/idlewatt/idlewatt/units"
)

// testCmd returns a command named use that runs in a command line of its
// own with configuration cfg (a fresh one if nil), for tests that call a
// command's helpers directly.
func testCmd(use string, cfg *viper.Viper) *cobra.Command {
	c := newCLI(io.Discard, io.Discard)
	if cfg != nil {
		c.cfg = cfg
	}
	cmd := &cobra.Command{Use: use}
	cmd.SetContext(withCLI(context.Background(), c))
	return cmd
}

// run executes the idlewatt command line in-process, in a command line of
// its own (tests that only use run can run in parallel).
func run(t *testing.T, ctx context.Context, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	c := newCLI(&o, &e)
	_, err := c.execute(ctx, args)
	code = c.exitCode(err) // writes the error message to stderr first
	return o.String(), e.String(), code
}

func TestRecordReplayedStreamThenExport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stream := filepath.Join(dir, "hub.bin")
	f, err := os.Create(stream)
	if err != nil {
		t.Fatal(err)
	}
	if err := hubemu.WriteFast(f, hubemu.Options{Ports: 2, Rate: 1000}, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	f.Close()
	capPath := filepath.Join(dir, "c.iwcap")
	out, errOut, code := run(t, context.Background(), "record", "--meter", "hub", "--port", stream, "--out", capPath, "--json")
	if code != 0 {
		t.Fatalf("record exit %d: %s%s", code, out, errOut)
	}
	if !strings.Contains(out, `"samples": 8000`) {
		t.Errorf("record result: %s", out)
	}
	r, err := capture.Open(capPath)
	if err != nil {
		t.Fatal(err)
	}
	h := r.Header()
	if len(h.Channels) != 4 || h.RateHz != 1000 || h.Meter.Kind != "hub" {
		t.Errorf("header: %d channels at %g Hz from %q", len(h.Channels), h.RateHz, h.Meter.Kind)
	}
	n := 0
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Kind == capture.KindSamples {
			n += rec.Block.Len()
		}
	}
	r.Close()
	if n != 8000 {
		t.Errorf("capture holds %d samples, want 2 s × 1000 Hz × 4 channels", n)
	}

	csvPath := filepath.Join(dir, "c.csv")
	if _, e, code := run(t, context.Background(), "export", capPath, "--csv", csvPath, "--from", "500ms", "--to", "1s"); code != 0 {
		t.Fatalf("export exit %d: %s", code, e)
	}
	rows := readCSV(t, csvPath)
	want := []string{"t_s", "sample_index", "gap", "p1_5v_v", "p1_5v_a", "p1_5v_w", "p1_12v_v", "p1_12v_a", "p1_12v_w",
		"p2_5v_v", "p2_5v_a", "p2_5v_w", "p2_12v_v", "p2_12v_a", "p2_12v_w", "p1_total_w", "p2_total_w", "p1_drive", "p2_drive", "run_id"}
	if strings.Join(rows[0], ",") != strings.Join(want, ",") {
		t.Fatalf("CSV header %v", rows[0])
	}
	if len(rows) != 501 || rows[1][0] != "0.5" || rows[500][0] != "0.999" {
		t.Fatalf("export --from 500ms --to 1s: %d rows, first t %s, last t %s", len(rows)-1, rows[1][0], rows[len(rows)-1][0])
	}
	// The default emulated drive draws 5 V × 80 mA on its 5 V rail.
	if w, _ := strconv.ParseFloat(rows[1][5], 64); w < 0.35 || w > 0.45 {
		t.Errorf("p1 5 V power %s W, want about 0.4", rows[1][5])
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestExportCSVContent checks exact cells, a partial row and a gap row.
func TestExportCSVContent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	capPath := filepath.Join(dir, "c.iwcap")
	h := capture.Header{RateHz: 4, Channels: []meter.Channel{{Port: 1, Rail: meter.Rail5V}, {Port: 1, Rail: meter.Rail12V}}}
	w, err := capture.Create(capPath, h, capture.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Samples(&meter.Block{Channel: 0, Start: 10, V: []units.Volts{5, 5, 5}, I: []units.Amps{0.5, 0.25, 1}})
	w.Samples(&meter.Block{Channel: 1, Start: 10, V: []units.Volts{12, 12}, I: []units.Amps{0.125, 0}})
	w.Gap(meter.Gap{Channel: -1, Start: 13, Count: 2, Reason: "crc"})
	w.Samples(&meter.Block{Channel: 0, Start: 15, V: []units.Volts{4.5}, I: []units.Amps{0.5}})
	w.Samples(&meter.Block{Channel: 1, Start: 15, V: []units.Volts{11.5}, I: []units.Amps{0.5}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	csvPath := filepath.Join(dir, "c.csv")
	if _, e, code := run(t, context.Background(), "export", capPath, "--csv", csvPath); code != 0 {
		t.Fatalf("export exit %d: %s", code, e)
	}
	got, _ := os.ReadFile(csvPath)
	cr, err := capture.Open(capPath)
	if err != nil {
		t.Fatal(err)
	}
	id := capture.RunID(cr.Header())
	cr.Close()
	want := strings.ReplaceAll(`t_s,sample_index,gap,p1_5v_v,p1_5v_a,p1_5v_w,p1_12v_v,p1_12v_a,p1_12v_w,p1_total_w,p1_drive,run_id
0,10,,5,0.5,2.5,12,0.125,1.5,4,,ID
0.25,11,,5,0.25,1.25,12,0,0,1.25,,ID
0.5,12,,5,1,5,,,,,,ID
0.75,13,2,,,,,,,,,ID
1.25,15,,4.5,0.5,2.25,11.5,0.5,5.75,8,,ID
`, "ID", id)
	if string(got) != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", got, want)
	}
	// A capture cut short exports what it holds, with a warning, exit 0.
	b, _ := os.ReadFile(capPath)
	os.WriteFile(capPath, b[:len(b)-10], 0o644)
	if _, e, code := run(t, context.Background(), "export", capPath, "--csv", "-"); code != 0 || !strings.Contains(e, "cut short") {
		t.Errorf("export of a cut capture: exit %d, stderr %q", code, e)
	}
	if _, _, code := run(t, context.Background(), "export", capPath, "--csv", csvPath); code != 2 {
		t.Errorf("export over an existing CSV: exit %d, want 2", code)
	}
	if _, _, code := run(t, context.Background(), "export", filepath.Join(dir, "missing"), "--csv", "-"); code != 2 {
		t.Errorf("export of a missing capture: exit %d, want 2", code)
	}
	if _, _, code := run(t, context.Background(), "export", capPath, "--csv", "-", "--from", "soon"); code != 2 {
		t.Errorf("export --from soon: exit %d, want 2", code)
	}
}

func TestRecordBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.bin")
	os.WriteFile(garbage, bytes.Repeat([]byte("not a hub "), 100), 0o644)
	good := filepath.Join(dir, "good.bin")
	var stream bytes.Buffer
	if err := hubemu.WriteFast(&stream, hubemu.Options{Ports: 2}, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(good, stream.Bytes(), 0o644)
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"record", "--meter", "ppk9", "--port", garbage, "--out", filepath.Join(dir, "a")}, 2},
		{[]string{"record", "--port", filepath.Join(dir, "nope"), "--out", filepath.Join(dir, "b")}, 2},
		{[]string{"record", "--port", garbage}, 2},
		{[]string{"record", "--port", garbage, "--out", filepath.Join(dir, "c"), "--ports", "1,x"}, 2},
		{[]string{"record", "--port", garbage, "--out", filepath.Join(dir, "d")}, 2},
		{[]string{"record", "--port", garbage, "--out", garbage}, 2},
		{[]string{"record", "--port", good, "--out", filepath.Join(dir, "no", "such", "dir")}, 2},
		{[]string{"record", "--port", good, "--out", filepath.Join(dir, "e"), "--ports", "7"}, 2},
		{[]string{"record", "--port", good, "--out", filepath.Join(dir, "f"), "--rate", "12345"}, 2},
	} {
		if _, e, code := run(t, context.Background(), c.args...); code != c.code {
			t.Errorf("%v: exit %d, want %d (%s)", c.args, code, c.code, e)
		}
	}
}

// TestRecordLiveEmulator records from the emulator on a pty until the
// context is cancelled, as SIGINT would, and checks the capture is whole.
func TestRecordLiveEmulator(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("live pty test")
	}
	emu, err := hubemu.New(hubemu.Options{Ports: 1})
	if err != nil {
		t.Skip("no pty:", err)
	}
	defer emu.Close()
	capPath := filepath.Join(t.TempDir(), "live.iwcap")
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	out, e, code := run(t, ctx, "record", "--port", emu.Path(), "--out", capPath, "--rate", "1000")
	if code != 0 {
		t.Fatalf("record exit %d: %s%s", code, out, e)
	}
	if !strings.Contains(e, "record 1s") || !strings.Contains(e, "p1 ") {
		t.Errorf("no progress lines on stderr: %q", e)
	}
	r, err := capture.Open(capPath)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var samples, marks, stats int
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch rec.Kind {
		case capture.KindSamples:
			samples += rec.Block.Len()
		case capture.KindMark:
			marks++
		case capture.KindStats:
			stats++
		}
	}
	if samples < 1 || marks < 1 || stats < 2 { // how many: the machine's load decides
		t.Errorf("live capture: %d samples, %d marks, %d stats records", samples, marks, stats)
	}
}
