package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/testutil"
)

// busy reports whether another process holds path's lock (a capture being
// recorded).
func busy(path string) bool {
	return errors.Is(outfile.Check(path, outfile.Options{Overwrite: true}), outfile.ErrBusy)
}

// TestRecordOntoACaptureBeingRecorded (issue 26): a record process is
// writing a capture; a second record onto it — with or without
// --overwrite — and a repair --out onto it are refused (exit 2) naming the
// first one's PID, and the first keeps its capture: it stops on SIGINT
// (its --duration 0 end), exit 0, and the capture reads back closed with
// its samples. A recorder killed with SIGKILL leaves no stale lock: the
// capture can be replaced at once.
func TestRecordOntoACaptureBeingRecorded(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs idlewatt as a process for seconds")
	}
	emu := newEmulator(t, 1)
	dir := t.TempDir()
	path := filepath.Join(dir, "a.iwcap")
	first := startIdlewatt(t, "record", "--meter", "hub", "--port", emu.Path(), "--rate", "1000", "--duration", "0", "--out", path)
	testutil.WaitFor(t, 20*time.Second, "the first record to hold its capture", func() bool { return busy(path) })
	want := fmt.Sprintf("is being written in place by PID %d", first.cmd.Process.Pid)
	stream, _ := filepath.Abs("../../fixtures/hostile/hub-100ms.bin")
	for _, args := range [][]string{
		{"record", "--port", stream, "--out", path},
		{"record", "--port", stream, "--out", path, "--overwrite"},
		{"repair", "../../fixtures/hostile/six-seconds.iwcap", "--out", path, "--overwrite"},
	} {
		_, errOut, code := run(t, context.Background(), args...)
		if code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("idlewatt %s: exit %d, %q; want exit 2 and %q", strings.Join(args, " "), code, errOut, want)
		}
	}
	// SIGINT is the normal end of a --duration 0 recording once it holds
	// samples; before the first sample it is a failed recording (exit 1).
	waitForSamples(t, path)
	if err := first.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := first.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("the first record: exit %d; stderr:\n%s", code, first.stderr.String())
	}
	ct := readTail(t, path)
	if !ct.complete || ct.stop != nil || ct.samples == 0 {
		t.Fatalf("the first capture: complete %v, stop %v, %d samples; want it closed with its samples", ct.complete, ct.stop, ct.samples)
	}
	if !strings.Contains(first.stdout.String(), fmt.Sprintf("%d samples", ct.samples)) {
		t.Errorf("the first record's summary does not claim what the capture holds (%d samples): %q", ct.samples, first.stdout.String())
	}

	// kill -9: the lock dies with the process.
	path2 := filepath.Join(dir, "b.iwcap")
	killed := startIdlewatt(t, "record", "--meter", "hub", "--port", emu.Path(), "--rate", "1000", "--duration", "0", "--out", path2)
	testutil.WaitFor(t, 20*time.Second, "the second recorder to hold its capture", func() bool { return busy(path2) })
	if err := killed.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed.wait(t, 10*time.Second)
	if busy(path2) {
		t.Fatal("a killed recorder's capture is still locked")
	}
	if _, errOut, code := run(t, context.Background(), "record", "--port", stream, "--out", path2, "--overwrite"); code != 0 {
		t.Fatalf("record --overwrite onto a killed recorder's capture: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(path2); err != nil {
		t.Fatal(err)
	}
}
