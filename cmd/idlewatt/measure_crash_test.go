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

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/testutil"
)

// realHubRig sets up measure as on a lab rig — meter kind hub on the
// emulator's pty, a regular-file target, and sysfs_root at a simulated
// sysfs tree — so the test can read the ALPM policy measure writes and
// restores. It returns the config file, the output directory and the
// policy file of host0.
func realHubRig(t *testing.T, emuPath string) (config, out, policyFile string) {
	t.Helper()
	dir := t.TempDir()
	sys := filepath.Join(dir, "sys")
	if _, e, code := run(t, context.Background(), "states", "simulate", sys, "--drives", "1"); code != 0 {
		t.Fatalf("states simulate: %s", e)
	}
	m, _ := filepath.Glob(filepath.Join(sys, "devices", "*", "*", "*", "host0", "scsi_host", "host0", "link_power_management_policy"))
	if len(m) != 1 {
		t.Fatalf("simulated tree has %d host0 policy files", len(m))
	}
	config = filepath.Join(dir, "rig.yaml")
	yaml := fmt.Sprintf(`meter:
  kind: hub
  port: %s
  rate_hz: 1000
drives:
  - name: crash drive
    port: 1
    target: %s
    host: host0
    size_bytes: 16777216
policy: max_performance
sysfs_root: %s
idle: 60s
workload:
  trace: none
devslp:
  cycles: 0
`, emuPath, filepath.Join(dir, "target.img"), sys)
	if err := os.WriteFile(config, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return config, filepath.Join(dir, "out"), m[0]
}

func readPolicy(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestMeasureSIGTERMRestoresPolicy stops measure with SIGTERM while it
// holds the link at max_performance: it must exit 1 saying where the
// recording is, put the policy back, and leave a readable capture.
func TestMeasureSIGTERMRestoresPolicy(t *testing.T) {
	t.Parallel()
	testMeasureSignal(t, syscall.SIGTERM)
}

// TestMeasureKill9KeepsCapture kills measure outright: nothing can restore
// the policy then (docs/reliability.md says so), but the capture reads
// back to its last chunk.
func TestMeasureKill9KeepsCapture(t *testing.T) {
	t.Parallel()
	testMeasureSignal(t, syscall.SIGKILL)
}

func testMeasureSignal(t *testing.T, sig syscall.Signal) {
	if testing.Short() {
		t.Skip("runs idlewatt as a process for seconds")
	}
	emu := newEmulator(t, 1)
	config, out, policyFile := realHubRig(t, emu.Path())
	before := readPolicy(t, policyFile)
	if before == "max_performance" {
		t.Fatalf("simulated host already at %s; the test could not see a change", before)
	}
	c := startIdlewatt(t, "measure", "--config", config, "--out", out, "--quiet")
	capPath := filepath.Join(out, "capture.iwcap")
	testutil.WaitFor(t, 30*time.Second, "measure to set the policy and record", func() bool {
		fi, err := os.Stat(capPath)
		return readPolicy(t, policyFile) == "max_performance" && err == nil && fi.Size() > 16<<10
	})
	if err := c.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	code := c.wait(t, 30*time.Second)
	stderr := c.stderr.String()
	ct := readTail(t, capPath)
	if ct.samples == 0 {
		t.Fatalf("capture holds no samples (stop %v)", ct.stop)
	}
	if sig == syscall.SIGKILL {
		if code != -int(syscall.SIGKILL) {
			t.Fatalf("exit %d, want killed", code)
		}
		if ct.complete || !errors.Is(ct.stop, capture.ErrTruncated) {
			t.Fatalf("killed measure's capture: complete %v, stop %v", ct.complete, ct.stop)
		}
		if p := readPolicy(t, policyFile); p != "max_performance" {
			t.Logf("policy after kill -9: %s", p)
		}
	} else {
		if code != exitFailure {
			t.Fatalf("measure after %v: exit %d, want %d; stderr:\n%s", sig, code, exitFailure, stderr)
		}
		if !strings.Contains(stderr, "idlewatt:") || !strings.Contains(stderr, out) {
			t.Errorf("measure after %v does not say what happened and where the recording is:\n%s", sig, lastLines(stderr, 3))
		}
		if p := readPolicy(t, policyFile); p != before {
			t.Errorf("policy after %v: %s, want it restored to %s", sig, p, before)
		}
		if ct.stop != nil {
			t.Errorf("capture after %v: reader stopped with %v", sig, ct.stop)
		}
		t.Logf("measure after %v: exit %d, %s", sig, code, lastLines(stderr, 1))
	}
	if _, errOut, code := run(t, context.Background(), "report", capPath, "--out", filepath.Join(t.TempDir(), "rep")); code != 0 {
		t.Errorf("report on the capture: exit %d: %s", code, errOut)
	}
}
