package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer written by the command's goroutine.
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

// startEmulate runs an emulate command in-process, as a user would in
// another shell, and returns the pty path it prints first. The command is
// cancelled (as by SIGINT) when the test ends, and must then exit 0.
func startEmulate(t *testing.T, args ...string) string {
	t.Helper()
	pr, pw := io.Pipe()
	stderr := &lockedBuffer{}
	c := newCLI(pw, stderr)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.execute(ctx, args)
		pw.Close()
		done <- err
	}()
	stop := func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%v: %v (%s)", args, err, stderr.String())
			}
		case <-time.After(20 * time.Second):
			t.Errorf("%v did not stop on its context", args)
		}
	}
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		stop()
		t.Fatalf("%v printed no path: %v %s", args, err, stderr.String())
	}
	t.Cleanup(stop)
	go io.Copy(io.Discard, pr) //nolint:errcheck // nothing more is expected
	return strings.TrimSpace(line)
}

// TestPPK2EmulateCommand: `ppk2 emulate` with a constant 20 mA at a
// reported VDD of 3.3 V, recorded for a second at 1 kS/s: 66 mW.
func TestPPK2EmulateCommand(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("live pty test")
	}
	path := startEmulate(t, "ppk2", "emulate", "--supply-mv", "3300", "--ma", "20")
	capPath := filepath.Join(t.TempDir(), "ppk2.iwcap")
	recordOK(t, context.Background(), "--meter", "ppk2", "--port", path, "--rate", "1000", "--duration", "1s", "--out", capPath)
	c := readCapture(t, capPath)
	// How much of the run the emulator streams depends on the machine's load (418 of 1 000 at load 12): a stream, whole, no more than the run holds.
	if c.h.Meter.Kind != "ppk2" || c.h.RateHz != 1000 || c.samples < 10 || c.samples > 1100 || !c.tiled {
		t.Errorf("%q at %g Hz: %d samples (tiled %v), want 10–1100 with no hole", c.h.Meter.Kind, c.h.RateHz, c.samples, c.tiled)
	}
	if !near(c.meanW(), 0.066, 0.02) || !near(c.vLast, 3.3, 1e-6) {
		t.Errorf("mean %.5f W at %v V, want 66 mW at the metadata's 3.3 V", c.meanW(), c.vLast)
	}
}

// TestPPK2EmulateProfile: a simulated JMF667H behind the PPK2 (5 V, the
// drive's 5 V rail): it powers up when record switches the DUT on, then
// idles between its Slumber (70 mW) and its active-idle (400 mW) power,
// with noise.
func TestPPK2EmulateProfile(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("live pty test")
	}
	path := startEmulate(t, "ppk2", "emulate", "--supply-mv", "5000", "--profile", "jmf667h-128-a19")
	capPath := filepath.Join(t.TempDir(), "drive.iwcap")
	recordOK(t, context.Background(), "--meter", "ppk2", "--port", path, "--rate", "1000", "--duration", "1s", "--out", capPath)
	c := readCapture(t, capPath)
	if c.samples < 10 || !c.tiled { // a stream, whole (load decides how much of it)
		t.Fatalf("%d samples (tiled %v)", c.samples, c.tiled)
	}
	if m := c.meanW(); m < 0.06 || m > 0.6 || c.pMax <= c.pMin || c.pMax > 5 {
		t.Errorf("mean %.4f W, %.4f–%.4f W: want a noisy idle between 70 and 400 mW (peaks ≤ 5 W)", m, c.pMin, c.pMax)
	}
}

// TestSCPIEmulateCommand: `scpi emulate --family k2450` is detected from its
// *IDN? and polled at the family's 100 Hz.
func TestSCPIEmulateCommand(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("live pty test")
	}
	path := startEmulate(t, "scpi", "emulate", "--family", "k2450", "--ma", "2", "--voltage", "3.3")
	capPath := filepath.Join(t.TempDir(), "k2450.iwcap")
	recordOK(t, context.Background(), "--meter", "scpi", "--port", path, "--duration", "1s", "--out", capPath)
	c := readCapture(t, capPath)
	if !strings.Contains(c.h.Meter.Model, "MODEL 2450") || c.h.RateHz != 100 || c.samples < 1 || c.samples > 105 || !c.tiled {
		t.Errorf("%q at %g Hz: %d samples (tiled %v), want about 100", c.h.Meter.Model, c.h.RateHz, c.samples, c.tiled)
	}
	if !near(c.pMin, 0.0066, 1e-6) || !near(c.pMax, 0.0066, 1e-6) || c.marks < 1 || c.marks > 3 {
		t.Errorf("%v–%v W, %d marks; want 6.6 mW, about a mark a second", c.pMin, c.pMax, c.marks)
	}
}

func TestEmulateBadOptions(t *testing.T) {
	t.Parallel()
	wantUsage(t, nil, [][]string{
		{"ppk2", "emulate", "--supply-mv", "9000"},
		{"ppk2", "emulate", "--ma", "1500"},
		{"ppk2", "emulate", "--ma", "-1"},
		{"ppk2", "emulate", "--ma", "5", "--profile", "ssd340"},
		{"ppk2", "emulate", "--profile", "ssd34"},
		{"ppk2", "emulate", "--profile", "ssd340", "--policy", "fastest"},
		{"scpi", "emulate", "--family", "hp3458"},
		{"scpi", "emulate", "--delay", "-1s"},
		{"scpi", "emulate", "--ma", "0", "--voltage", "0"},
		{"scpi", "emulate", "extra"},
	})
}

// TestSCPICurrentOnly: a current-only family (Siglent SDM) needs the rail's
// voltage; with it, power is that voltage times the reading.
func TestSCPICurrentOnly(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("live pty test")
	}
	path := startEmulate(t, "scpi", "emulate", "--family", "sdm", "--ma", "40")
	dir := t.TempDir()
	if code, e := runMsg(t, "record", "--meter", "scpi", "--port", path, "--duration", "1s", "--out", filepath.Join(dir, "x.iwcap")); code != 2 || !strings.Contains(e, "--voltage") {
		t.Errorf("sdm without --voltage: exit %d, %s", code, e)
	}
	capPath := filepath.Join(dir, "sdm.iwcap")
	recordOK(t, context.Background(), "--meter", "scpi", "--port", path, "--voltage", "12", "--rate", "20", "--duration", "500ms", "--out", capPath)
	if c := readCapture(t, capPath); c.h.RateHz != 20 || c.samples < 1 || c.samples > 12 || !near(c.pMax, 0.48, 1e-6) || !near(c.pMin, 0.48, 1e-6) {
		t.Errorf("sdm at %g Hz: %d samples, %v–%v W; want about 10 at 480 mW", c.h.RateHz, c.samples, c.pMin, c.pMax)
	}
}
