package main

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
)

// TestNoSamplesOneAccount: a capture that holds no samples — cut after its
// header, cut after its header and a mark and an event, or closed cleanly
// without a sample — read by report, plot, export and repair. plot used to
// exit 2 ("chart: no data to plot") while report, export and repair exited 0
// and wrote dashes, an empty CSV and an empty capture. Every command now
// gives the same error line, exit 2, and leaves no output behind.
func TestNoSamplesOneAccount(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean.iwcap")
	h := capture.Header{Created: "2026-01-01T00:00:00Z", Meter: meter.Info{Kind: "test"}, RateHz: 1000, StartHost: 1e12, Tool: "test",
		Channels: []meter.Channel{{Port: 1, Rail: meter.Rail5V}, {Port: 1, Rail: meter.Rail12V}},
		Drives:   []capture.DriveInfo{{Port: 1, Name: "d"}}}
	w, err := capture.Create(clean, h, capture.Options{FlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Mark(meter.MarkEcho{ID: 1, HostSent: 1e12, HostRecv: 1e12 + 1e6, MeterIndex: 0}); err != nil {
		t.Fatal(err)
	}
	if err := w.Event(meter.Event{Kind: meter.EventPortPower, Port: 1, Index: 0, Value: 1, HostRecv: 1e12}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(clean)
	if err != nil {
		t.Fatal(err)
	}
	var offs []int
	for off := 16; off < len(b); off += 16 + int(binary.LittleEndian.Uint32(b[off+4:])) + 4 {
		offs = append(offs, off)
	}
	if len(offs) < 4 || b[offs[len(offs)-1]+2] != 0xFF {
		t.Fatalf("chunks at %v: want a header, a mark, an event and an end chunk", offs)
	}
	for _, c := range offs {
		if b[c+2] == 0x10 {
			t.Fatal("the capture holds a samples chunk")
		}
	}
	headerOnly := filepath.Join(dir, "header-only.iwcap")
	os.WriteFile(headerOnly, b[:offs[1]], 0o644)
	noEnd := filepath.Join(dir, "marks-no-end.iwcap")
	os.WriteFile(noEnd, b[:offs[len(offs)-1]], 0o644)

	ctx := context.Background()
	for _, tc := range []struct{ path, why string }{
		{headerOnly, "file ends after chunk 0 without an end chunk"},
		{noEnd, "without an end chunk"},
		{clean, "it ends with its end chunk"},
	} {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			out := t.TempDir()
			want := tc.path + ": the capture holds no samples ("
			var first string
			for _, args := range [][]string{
				{"report", tc.path, "--out", filepath.Join(out, "rep")},
				{"plot", tc.path, "--out", filepath.Join(out, "p.png")},
				{"export", tc.path, "--csv", filepath.Join(out, "x.csv")},
				{"export", tc.path, "--parquet", filepath.Join(out, "pq")},
				{"repair", tc.path, "--out", filepath.Join(out, "z.iwcap")},
			} {
				_, errOut, code := run(t, ctx, args...)
				if code != exitUsage {
					t.Errorf("%s: exit %d, want %d; stderr:\n%s", args[0], code, exitUsage, errOut)
				}
				var line string
				for l := range strings.SplitSeq(errOut, "\n") {
					if strings.HasPrefix(l, "idlewatt: ") {
						line = l
					}
				}
				if !strings.Contains(line, want) || !strings.Contains(line, tc.why) {
					t.Errorf("%s: error %q, want %q … %q", args[0], line, want, tc.why)
				}
				if first == "" {
					first = line
				} else if line != first {
					t.Errorf("%s says %q, report says %q", args[0], line, first)
				}
			}
			if left, _ := os.ReadDir(out); len(left) != 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}
