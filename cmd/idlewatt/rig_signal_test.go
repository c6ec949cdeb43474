package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/app/rig"
	"github.com/idlewatt/idlewatt/capture"
)

// TestSignalStopsRigRuns: SIGINT or SIGTERM in the middle of `idle` and of
// `devslp verify` (mid-hold) on the emulator ends the run with exit 1 and
// the signal named, the capture closed and kept (it reads to its end
// chunk), and no analysis: no verdict such as "power did not rise after
// DEVSLP was released" for a pin that was never released (issue 26 item
// 1, issue 29). The only timing is interrupt's hang guard.
func TestSignalStopsRigRuns(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the emulator")
	}
	dir := t.TempDir()
	cfg := oneDriveConfig(t, dir, "devslp: {cycles: 2, hold: 5s}\n")
	for i, c := range []struct {
		name  string
		after time.Duration // before interrupt's own 0.7 s
		args  []string
	}{
		{"idle", 0, []string{"idle", "--config", cfg, "--policies", "max_performance", "--settle", "200ms", "--measure", "20s"}},
		// The hold is 5 s, after about 2 s of setup and active idle: 3.7 s
		// in is mid-hold on an idle machine, and inside the run on a busy one.
		{"devslp-verify", 3 * time.Second, []string{"devslp", "verify", "--config", cfg, "--cycles", "1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sig := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}[i%2]
			work := t.TempDir()
			out := filepath.Join(work, "out")
			cmd, buf := startBin(t, work, append(c.args, "--out", out)...)
			time.Sleep(c.after)
			code, _ := interrupt(t, cmd, sig)
			msg := buf.String()
			want := map[syscall.Signal]string{syscall.SIGINT: "interrupted by SIGINT", syscall.SIGTERM: "interrupted by SIGTERM"}[sig]
			if code != 1 || !strings.Contains(msg, want) || !strings.Contains(msg, "idlewatt report") {
				t.Fatalf("exit %d, want 1 naming the signal and how to analyse the capture:\n%s", code, msg)
			}
			if strings.Contains(msg, "did not rise") || strings.Contains(msg, "FAIL") {
				t.Errorf("an interrupted run was judged:\n%s", msg)
			}
			r, err := capture.Open(filepath.Join(out, rig.CaptureFile))
			if err != nil {
				t.Fatalf("the capture is not kept readable: %v", err)
			}
			defer r.Close()
			for {
				if _, err := r.Next(); err != nil {
					break
				}
			}
			if acc := r.Account(); !acc.EndSeen {
				t.Errorf("capture not closed cleanly: %+v", acc)
			}
		})
	}
}

// `idle` writes the capture's report beside idle.json, as its help and
// --no-html say (issue 29: it wrote idle.json and the capture only), and
// the report's figures are those of `report` of the same capture.
func TestIdleWritesTheReport(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the emulator")
	}
	dir := t.TempDir()
	cfg := oneDriveConfig(t, dir, "")
	for _, html := range []bool{true, false} {
		out := filepath.Join(dir, fmt.Sprintf("out-%v", html))
		args := []string{"idle", "--config", cfg, "--policies", "max_performance", "--settle", "200ms", "--measure", "500ms", "--out", out, "--quiet"}
		if !html {
			args = append(args, "--no-html")
		}
		if _, e, code := run(t, context.Background(), args...); code != 0 {
			t.Fatalf("idle exit %d: %s", code, e)
		}
		for _, f := range []string{"idle.json", "report.json", "report.md", "summary.csv", rig.CaptureFile} {
			if _, err := os.Stat(filepath.Join(out, f)); err != nil {
				t.Errorf("html %v: %v", html, err)
			}
		}
		if _, err := os.Stat(filepath.Join(out, "report.html")); (err == nil) != html {
			t.Errorf("report.html written %v, want %v", err == nil, html)
		}
		if html {
			again := filepath.Join(dir, "again")
			if _, e, code := run(t, context.Background(), "report", filepath.Join(out, rig.CaptureFile), "--out", again, "--no-html"); code != 0 {
				t.Fatalf("report exit %d: %s", code, e)
			}
			a, _ := os.ReadFile(filepath.Join(out, "summary.csv"))
			b, _ := os.ReadFile(filepath.Join(again, "summary.csv"))
			if len(a) == 0 || string(a) != string(b) {
				t.Errorf("idle's summary.csv differs from report's:\n%s\n%s", a, b)
			}
		}
	}
}

// oneDriveConfig writes a config of one emulated JMF667H on port 1 at
// 1 kS/s with no workload, plus extra, into dir and returns its path.
func oneDriveConfig(t *testing.T, dir, extra string) string {
	t.Helper()
	cfg := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(cfg, []byte("meter: {kind: emulator, rate_hz: 1000}\n"+
		"drives: [{name: a, port: 1, profile: jmf667h-128-a19, size_bytes: 16777216}]\nworkload: {trace: none}\n"+extra), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}
