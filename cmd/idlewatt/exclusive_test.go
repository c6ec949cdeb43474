package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/capture/record"
)

// TestRecordTwiceOnOnePort (issue 13, deliverable 6): two `record`s on one
// `hub emulate` pty. The second is refused at once (exit 2, naming the
// holder's PID) and never reaches the hub, so it cannot restart the first
// one's stream; the first keeps every sample (1 port × 2 rails at 1 kS/s):
// its capture goes on growing after the refusal, with no gap and no
// restart. The first runs until the test stops it, so no step depends on
// how fast the machine is; each wait has a one-minute hang guard.
func TestRecordTwiceOnOnePort(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("live pty test")
	}
	port := startEmulate(t, "hub", "emulate", "--ports", "1")
	dir := t.TempDir()
	type result struct {
		out, errOut string
		code        int
	}
	first := make(chan result, 1)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	capA := filepath.Join(dir, "a.iwcap")
	go func() {
		o, e, c := run(t, ctx, "record", "--port", port, "--rate", "1000", "--out", capA, "--json")
		first <- result{o, e, c}
	}()
	size := func() int64 {
		fi, err := os.Stat(capA)
		if err != nil {
			return -1
		}
		return fi.Size()
	}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: still waiting after a minute", what)
			}
		}
	}
	// Wait until the first recording holds the port (its capture exists).
	waitUntil("the first record's capture", func() bool { return size() >= 0 })
	o, e, code := run(t, context.Background(), "record", "--port", port, "--rate", "1000", "--duration", "1s",
		"--out", filepath.Join(dir, "b.iwcap"))
	want := fmt.Sprintf("port %s in use by PID %d", port, os.Getpid())
	if code != 2 || !strings.Contains(e, want) {
		t.Fatalf("second record: exit %d, %q%q; want exit 2 and %q", code, o, e, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "b.iwcap")); err == nil {
		t.Error("the refused record created its capture")
	}
	// hub info is refused the same way.
	if _, e, code := run(t, context.Background(), "hub", "info", "--port", port); code != 2 || !strings.Contains(e, want) {
		t.Errorf("hub info while recording: exit %d, %q", code, e)
	}
	// The first one's stream goes on: a stopped stream would leave its
	// capture as it was.
	refused := size()
	waitUntil("the first record's capture to grow after the refusals", func() bool { return size() > refused+4096 })
	stop()
	r := <-first
	if r.code != 0 {
		t.Fatalf("first record: exit %d: %s%s", r.code, r.out, r.errOut)
	}
	var res record.Summary
	if err := json.Unmarshal([]byte(r.out), &res); err != nil {
		t.Fatalf("%v: %s", err, r.out)
	}
	// A restarted stream would show as a restart, a gap or duplicates.
	if res.Stopped != "interrupted" || res.Samples == 0 || res.Gaps != 0 || res.Lost != 0 || res.Restarts != 0 || res.Duplicates != 0 {
		t.Fatalf("first record: %+v", res)
	}
	// Once it is done the port is free again.
	_, e, code = run(t, context.Background(), "hub", "info", "--port", port)
	if code != 0 {
		t.Fatalf("hub info after the recording: exit %d: %s", code, e)
	}
}
