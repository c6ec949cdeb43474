package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
)

// syncBuf is a bytes.Buffer safe to read while a command writes to it.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func replayedStream(t *testing.T, dir string, d time.Duration) string {
	t.Helper()
	stream := filepath.Join(dir, "hub.bin")
	f, err := os.Create(stream)
	if err != nil {
		t.Fatal(err)
	}
	if err := hubemu.WriteFast(f, hubemu.Options{Ports: 2, Rate: 1000}, d); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return stream
}

// --view beyond loopback is refused (exit 2, before recording) unless
// --view-any; --view-any alone is a usage error.
func TestViewFlagRules(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stream := replayedStream(t, dir, time.Second)
	for _, args := range [][]string{{"--view", "0.0.0.0:0"}, {"--view-any"}, {"--view", "nohostport"}} {
		out := filepath.Join(dir, "c"+strings.Join(args, "")+".iwcap")
		_, errOut, code := run(t, context.Background(), append([]string{"record", "--meter", "hub", "--port", stream, "--out", out}, args...)...)
		if code != 2 {
			t.Errorf("record %v: exit %d (%s), want 2", args, code, errOut)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("record %v: the capture was made before the refusal", args)
		}
		if args[0] == "--view" && args[1] == "0.0.0.0:0" && !strings.Contains(errOut, "--view-any") {
			t.Errorf("the refusal does not say how to allow it: %s", errOut)
		}
	}
}

// record --view serves the live view while it records from an emulated
// hub: the URL is on stderr, /api/data answers with both drives and their
// newest sample moves on.
func TestRecordViewServes(t *testing.T) {
	emu, err := hubemu.New(hubemu.Options{Ports: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	dir := t.TempDir()
	var o, e syncBuf
	c := newCLI(&o, &e)
	done := make(chan int)
	go func() {
		_, err := c.execute(context.Background(), []string{"record", "--meter", "hub", "--port", emu.Path(), "--duration", "4s",
			"--out", filepath.Join(dir, "c.iwcap"), "--view", "127.0.0.1:0"})
		done <- c.exitCode(err)
	}()
	re := regexp.MustCompile(`live view on (http://127\.0\.0\.1:\d+/)`)
	var url string
	for deadline := time.Now().Add(20 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(e.String()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		t.Fatalf("no URL on stderr: %q", e.String())
	}
	newest := func() (float64, int) {
		resp, err := http.Get(url + "api/data")
		if err != nil {
			return -1, 0
		}
		defer resp.Body.Close()
		var d struct {
			NewestS float64           `json:"newest_s"`
			Drives  []json.RawMessage `json:"drives"`
		}
		if json.NewDecoder(resp.Body).Decode(&d) != nil {
			return -1, 0
		}
		return d.NewestS, len(d.Drives)
	}
	var first float64
	var n int
	for deadline := time.Now().Add(20 * time.Second); first <= 0.2 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		first, n = newest()
	}
	if first <= 0.2 || n != 2 {
		t.Fatalf("the view's newest sample %g s with %d drives", first, n)
	}
	later := first
	for deadline := time.Now().Add(20 * time.Second); later <= first && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		later, _ = newest()
	}
	if later <= first {
		t.Errorf("the view stayed at %g s while recording", first)
	}
	if code := <-done; code != 0 {
		t.Fatalf("record exit %d: %s", code, e.String())
	}
	if _, err := http.Get(url + "api/data"); err == nil {
		t.Error("the view still answers after record ended")
	}
}

// annotate adds notes beside the capture (never changing it); report
// --from/--to reports only that interval and shows the notes in it.
func TestAnnotateAndReportInterval(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stream := replayedStream(t, dir, 3*time.Second)
	capPath := filepath.Join(dir, "c.iwcap")
	if _, e, code := run(t, context.Background(), "record", "--meter", "hub", "--port", stream, "--out", capPath); code != 0 {
		t.Fatalf("record: %d %s", code, e)
	}
	before, _ := os.ReadFile(capPath)
	for _, args := range [][]string{{"--at", "0.5s", "--text", "fan <b>on</b>"}, {"--at", "1s", "--to", "1.5s", "--text", "door"}, {"--at", "2.8s", "--text", "late"}} {
		if o, e, code := run(t, context.Background(), append([]string{"annotate", capPath}, args...)...); code != 0 {
			t.Fatalf("annotate %v: %d %s%s", args, code, o, e)
		}
	}
	if after, _ := os.ReadFile(capPath); !bytes.Equal(before, after) {
		t.Fatal("annotate changed the capture")
	}
	for _, bad := range [][]string{{"--at", "1s", "--text", ""}, {"--at", "2s", "--to", "1s", "--text", "x"}, {"--text", "no time"}} {
		if _, _, code := run(t, context.Background(), append([]string{"annotate", capPath}, bad...)...); code != 2 {
			t.Errorf("annotate %v: exit %d, want 2", bad, code)
		}
	}
	if _, _, code := run(t, context.Background(), "annotate", stream, "--at", "1s", "--text", "x"); code != 2 {
		t.Errorf("annotate of a file that is not a capture: exit %d, want 2", code)
	}
	o, _, code := run(t, context.Background(), "annotate", capPath, "--list", "--json")
	var ns []map[string]any
	if code != 0 || json.Unmarshal([]byte(o), &ns) != nil || len(ns) != 3 {
		t.Fatalf("annotate --list --json: %d %s", code, o)
	}
	out := filepath.Join(dir, "rep")
	o, e, code := run(t, context.Background(), "report", capPath, "--out", out, "--from", "0.4s", "--to", "2s", "--json")
	if code != 0 {
		t.Fatalf("report --from --to: %d %s", code, e)
	}
	var rep struct {
		Interval    map[string]float64 `json:"interval"`
		Annotations []map[string]any   `json:"annotations"`
		Drives      []struct {
			DurationS float64 `json:"duration_s"`
		} `json:"drives"`
	}
	if err := json.Unmarshal([]byte(o), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Interval["from_s"] != 0.4 || rep.Interval["to_s"] != 2 || len(rep.Annotations) != 2 {
		t.Errorf("interval %v, annotations %v: want 0.4–2 s and the two notes in it", rep.Interval, rep.Annotations)
	}
	for _, d := range rep.Drives {
		if d.DurationS < 1.55 || d.DurationS > 1.6 {
			t.Errorf("a drive measured %g s of the 1.6 s interval", d.DurationS)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(md), "covers only 0.4–2 s") || !strings.Contains(string(md), "fan &lt;b&gt;on&lt;/b&gt;") {
		t.Errorf("report.md does not say the interval or list the note escaped")
	}
	if _, _, code := run(t, context.Background(), "report", capPath, "--out", filepath.Join(dir, "r2"), "--from", "2", "--to", "1"); code != 2 {
		t.Errorf("report --from 2 --to 1: exit %d, want 2", code)
	}
}
