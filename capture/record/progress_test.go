package record_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/capture/record"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
)

// TestProgressLine: the one line format, with and without a total, a
// phase, a replay's missing CRC count and an outage.
func TestProgressLine(t *testing.T) {
	pr := record.Progress{Ports: []record.PortPower{{Port: 1, W: 0.4, OK: true}, {Port: 2}}}
	pr.Samples, pr.Gaps, pr.Lost = 1000, 2, 7
	pr.Stats.CRCErrors = 3
	out := pr
	out.DownNow = 2500 * time.Millisecond
	out.Disconnects = 1
	back := pr
	back.Disconnects, back.MarkErrors = 2, 4
	for _, c := range []struct {
		o    record.ProgressOptions
		el   time.Duration
		pr   record.Progress
		want string
	}{
		{record.ProgressOptions{Label: "record", Total: 10 * time.Second}, 5300 * time.Millisecond, pr,
			"record 5s/10s  1000 samples  p1 400.0 mW  p2 -  crc 3  gaps 2 (7 lost)"},
		{record.ProgressOptions{Label: "record", Total: 10 * time.Second, Replayed: true}, 5 * time.Second, pr,
			"record 5s  1000 samples  p1 400.0 mW  p2 -  gaps 2 (7 lost)"},
		{record.ProgressOptions{Label: "idle", Phase: func() string { return "settle:min_power" }}, 65 * time.Second, pr,
			"idle 1m5s  settle:min_power              1000 samples  p1 400.0 mW  p2 -  crc 3  gaps 2 (7 lost)"},
		{record.ProgressOptions{Label: "measure"}, time.Second, out,
			"measure 1s  1000 samples  p1 400.0 mW  p2 -  crc 3  gaps 2 (7 lost)  meter gone 2s, reconnecting"},
		{record.ProgressOptions{Label: "devslp verify"}, time.Second, back,
			"devslp verify 1s  1000 samples  p1 400.0 mW  p2 -  crc 3  gaps 2 (7 lost)  reconnected 2×  mark errors 4"},
	} {
		if got := record.ProgressLine(c.o, c.el, c.pr); got != c.want {
			t.Errorf("ProgressLine(%+v, %v):\n got %q\nwant %q", c.o, c.el, got, c.want)
		}
	}
}

// lockedBuffer is a bytes.Buffer the reporter's goroutine and the test
// may share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestReportProgress: a live recording's reporter prints a line per
// interval with the phase and the port's power, none after stop; in place
// it rewrites one line and ends it at stop.
func TestReportProgress(t *testing.T) {
	emu, err := hubemu.New(hubemu.Options{Ports: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	m, err := hub.Open(emu.Path(), hub.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	rec, err := record.Start(context.Background(), m, record.Options{Path: filepath.Join(t.TempDir(), "c.iwcap"),
		Stream: meter.StreamConfig{Rate: 1000}, Header: capture.Header{Tool: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()

	var lines lockedBuffer
	stop := record.ReportProgress(&lines, rec.Progress, record.ProgressOptions{Label: "idle",
		Phase: func() string { return "idle:min_power" }, Every: 150 * time.Millisecond})
	time.Sleep(700 * time.Millisecond)
	stop()
	got := lines.String()
	time.Sleep(300 * time.Millisecond)
	if after := lines.String(); after != got {
		t.Errorf("lines after stop: %q", strings.TrimPrefix(after, got))
	}
	ls := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(ls) < 3 {
		t.Fatalf("%d lines in 700 ms at 150 ms: %q", len(ls), got)
	}
	for _, l := range ls[1:] { // the first interval may end before the first block
		if !strings.HasPrefix(l, "idle ") || !strings.Contains(l, "  idle:min_power  ") ||
			!strings.Contains(l, "  p1 400.0 mW  ") || !strings.Contains(l, " samples  ") {
			t.Errorf("progress line %q: want label, phase and port 1 at 400.0 mW (5 V × 80 mA)", l)
		}
	}

	var tty lockedBuffer
	stop = record.ReportProgress(&tty, rec.Progress, record.ProgressOptions{Label: "record", InPlace: true, Every: 100 * time.Millisecond})
	time.Sleep(350 * time.Millisecond)
	stop()
	s := tty.String()
	if strings.Count(s, "\n") != 1 || !strings.HasSuffix(s, "\n") || strings.Count(s, "\r") < 2 || !strings.HasPrefix(s, "\rrecord ") {
		t.Errorf("in place: %q, want lines rewritten after \\r and one final newline", s)
	}
	if stop := record.ReportProgress(nil, rec.Progress, record.ProgressOptions{}); stop == nil {
		t.Error("nil writer: no stop")
	} else {
		stop()
	}
}
