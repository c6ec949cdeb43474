package main

// Cancellation at every stage (issue 26 item 1), without a clock: the
// command's context carries a hook that every cancellation check calls
// (ctxio.Stopped); a first run counts the checks, then the command is run again
// and "signalled" at its k-th check for k spread over the whole run — in
// the first pass, the second, building the files and charts, report.html,
// writing. Each must exit 1 saying it was interrupted and leave nothing
// under a final name, nor a temporary file.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis/synthcap"
	"github.com/idlewatt/idlewatt/internal/ctxio"
)

// stageCapture writes a capture of drives drives at 1 kS/s for d, with I/O
// bursts and DEVSLP pin spans (so every stage has work).
func stageCapture(t *testing.T, path string, drives int, d time.Duration) {
	t.Helper()
	s := synthcap.Scenario{RateHz: 1000, Duration: d, Seed: 3, CurrentLSB: 1e-4, VoltLSB: 1.25e-3, NoiseA: 1e-4, BlockLen: 250,
		MarkEvery: time.Second, RTTMin: time.Millisecond, Jitter: 100 * time.Microsecond}
	for i := 1; i <= drives; i++ {
		s.Drives = append(s.Drives, synthcap.Drive{Port: i, Name: fmt.Sprintf("SSD %d", i), IdleW: 0.4, BusyW: 2, DevSlpW: 0.005, Split5V: 0.7})
		s.Bursts = append(s.Bursts, synthcap.Bursts{Port: i, First: time.Second, Every: 3 * time.Second, Ops: 20, OpDur: 2 * time.Millisecond, Size: 4096})
		s.Pins = append(s.Pins, synthcap.Pin{Port: i, From: d / 2, To: d/2 + 500*time.Millisecond})
	}
	if err := synthcap.Write(path, s); err != nil {
		t.Fatal(err)
	}
}

// runCounted runs args with a stop hook; cancelAt > 0 cancels the command
// at that check as SIGINT would. It returns the checks made, stderr and the
// exit code.
func runCounted(t *testing.T, cancelAt int64, args ...string) (int64, string, int) {
	t.Helper()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var n atomic.Int64
	ctx = ctxio.WithStopHook(ctx, func() {
		if n.Add(1) == cancelAt {
			cancel(signalError{Sig: syscall.SIGINT})
		}
	})
	_, e, code := run(t, ctx, args...)
	return n.Load(), e, code
}

// leftovers lists what is under dir (recursively), but the inputs.
func leftovers(t *testing.T, dir string, inputs ...string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		for _, in := range inputs {
			if p == in {
				return nil
			}
		}
		out = append(out, strings.TrimPrefix(p, dir+"/"))
		return nil
	})
	return out
}

func TestCancelAtEveryStage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	capt := filepath.Join(dir, "c.iwcap")
	stageCapture(t, capt, 3, 20*time.Second)
	for _, c := range []struct {
		name   string
		args   func(out string) []string
		checks int64 // at least (export --csv checks at each 64 KiB read)
	}{
		{"report", func(o string) []string { return []string{"report", capt, "--out", filepath.Join(o, "r")} }, 20},
		{"report-json", func(o string) []string {
			return []string{"report", capt, "--json", "--no-html", "--out", filepath.Join(o, "r")}
		}, 20},
		{"plot", func(o string) []string { return []string{"plot", capt, "--out", filepath.Join(o, "p.png")} }, 20},
		{"plot-zoomed", func(o string) []string {
			return []string{"plot", capt, "--from", "1s", "--to", "3s", "--out", filepath.Join(o, "p.svg")}
		}, 20},
		{"export-parquet", func(o string) []string { return []string{"export", capt, "--parquet", filepath.Join(o, "pq")} }, 20},
		{"export-csv", func(o string) []string { return []string{"export", capt, "--csv", filepath.Join(o, "x.csv")} }, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			full := t.TempDir()
			total, e, code := runCounted(t, 0, c.args(full)...)
			if code != 0 {
				t.Fatalf("uninterrupted: exit %d: %s", code, e)
			}
			if len(leftovers(t, full)) == 0 {
				t.Fatal("uninterrupted: nothing written")
			}
			if total < c.checks {
				t.Fatalf("only %d cancellation checks in the whole run", total)
			}
			t.Logf("%d checks", total)
			for _, k := range []int64{1, 2, total / 8, total / 4, total / 2, 3 * total / 4, total - 3, total - 1, total} {
				if k < 1 {
					continue
				}
				out := t.TempDir()
				_, e, code := runCounted(t, k, c.args(out)...)
				if code != 1 || !strings.Contains(e, "interrupted by SIGINT") {
					t.Errorf("cancelled at check %d of %d: exit %d, want 1 saying interrupted:\n%s", k, total, code, e)
				}
				if left := leftovers(t, out); len(left) > 0 {
					t.Errorf("cancelled at check %d of %d: left %v", k, total, left)
				}
				if strings.Contains(e, "capture incomplete") || strings.Contains(e, "did not finish cleanly") {
					t.Errorf("cancelled at check %d: the signal was taken for a damaged capture:\n%s", k, e)
				}
			}
		})
	}
}

// TestSignalsOnBigCaptures: the real binary on a 256-channel capture (and a
// 4096-channel one of 50 samples), SIGINT or SIGTERM at several moments.
// Each run that the signal reaches exits 1 saying so and leaves nothing.
// The only timing is a hang guard (signalDeadline×6): the moments vary with
// the machine's load, and a run that finished before its signal is skipped,
// but at least one run per command must have been interrupted.
func TestSignalsOnBigCaptures(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("generates and reads big captures")
	}
	dir := t.TempDir()
	wide, widest := filepath.Join(dir, "c256.iwcap"), filepath.Join(dir, "c4096.iwcap")
	stageCapture(t, wide, 128, 30*time.Second)
	manyDrives(t, widest, 2048, 50)
	for _, c := range []struct {
		name string
		args func(out string) []string
	}{
		{"report-256", func(o string) []string { return []string{"report", wide, "--out", filepath.Join(o, "r")} }},
		{"report-4096", func(o string) []string { return []string{"report", widest, "--out", filepath.Join(o, "r")} }},
		{"plot-4096", func(o string) []string { return []string{"plot", widest, "--out", filepath.Join(o, "p.png")} }},
		{"export-parquet-256", func(o string) []string { return []string{"export", wide, "--parquet", filepath.Join(o, "pq")} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			interrupted := 0
			for i, after := range []time.Duration{300 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second} {
				sig := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}[i%2]
				out := t.TempDir()
				cmd, buf := startBin(t, out, c.args(out)...)
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				select {
				case <-done:
					continue // finished before the signal
				case <-time.After(after):
				}
				cmd.Process.Signal(sig)
				select {
				case err := <-done:
					code := 0
					if ee, ok := err.(*exec.ExitError); ok {
						code = ee.ExitCode()
					}
					if code == 0 {
						continue // the signal came as it finished: its outputs are whole
					}
					interrupted++
					want := map[syscall.Signal]string{syscall.SIGINT: "interrupted by SIGINT", syscall.SIGTERM: "interrupted by SIGTERM"}[sig]
					if code != 1 || !strings.Contains(buf.String(), want) {
						t.Errorf("%v after %v: exit %d, want 1 with %q:\n%s", sig, after, code, want, buf)
					}
					if left := leftovers(t, out); len(left) > 0 {
						t.Errorf("%v after %v: left %v", sig, after, left)
					}
				case <-time.After(6 * signalDeadline):
					cmd.Process.Kill()
					t.Fatalf("%v after %v: still running %v later (a hang)", sig, after, 6*signalDeadline)
				}
			}
			if interrupted == 0 {
				t.Errorf("no run was interrupted: every one finished before its signal")
			}
		})
	}
}

// manyDrives writes a capture of drives drives (2 rails each) and n
// samples per channel, at 1 kS/s.
func manyDrives(t *testing.T, path string, drives, n int) {
	t.Helper()
	s := synthcap.Scenario{RateHz: 1000, Duration: time.Duration(n) * time.Millisecond, Seed: 1, CurrentLSB: 1e-4, VoltLSB: 1.25e-3}
	for i := 1; i <= drives; i++ {
		s.Drives = append(s.Drives, synthcap.Drive{Port: i, Name: fmt.Sprintf("d%d", i), IdleW: 0.4, BusyW: 2, Split5V: 0.7})
	}
	if err := synthcap.Write(path, s); err != nil {
		t.Fatal(err)
	}
}
