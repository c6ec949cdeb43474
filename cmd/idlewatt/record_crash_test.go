package main

// Crash safety (issue 8 item 4): idlewatt is run as a separate process —
// this test binary re-executing itself as the command — and killed with
// SIGKILL or SIGTERM mid-run, or made to fill a small filesystem. The
// capture must read back to its last chunk, and a process that survives
// must say what happened and (for measure) put the ALPM policy back.
//
// scripts/crash-test.sh runs these with IDLEWATT_CRASH_RUNS=N to measure how
// much a kill -9 loses; the unit test only logs that figure.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/internal/testutil"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
)

// TestCrashHelperProcess is not a test: it is idlewatt's main when the
// crash tests re-execute this binary with IDLEWATT_CRASH_HELPER set to the
// JSON-encoded argument list.
func TestCrashHelperProcess(t *testing.T) {
	enc := os.Getenv("IDLEWATT_CRASH_HELPER")
	if enc == "" {
		t.Skip("helper process for the crash tests")
	}
	var args []string
	if err := json.Unmarshal([]byte(enc), &args); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(99)
	}
	os.Args = append([]string{"idlewatt"}, args...)
	main()
}

// child is an idlewatt process started by a crash test.
type child struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
}

func startIdlewatt(t *testing.T, args ...string) *child {
	t.Helper()
	enc, _ := json.Marshal(args)
	c := &child{cmd: exec.Command(os.Args[0], "-test.run=^TestCrashHelperProcess$")}
	c.cmd.Env = append(os.Environ(), "IDLEWATT_CRASH_HELPER="+string(enc))
	c.cmd.Stdout, c.cmd.Stderr = &c.stdout, &c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c.cmd.ProcessState == nil {
			_ = c.cmd.Process.Kill()
			_ = c.cmd.Wait()
		}
	})
	return c
}

// wait returns the exit code, or -signal if a signal ended the process.
func (c *child) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(limit):
		_ = c.cmd.Process.Kill()
		<-done
		t.Fatalf("idlewatt did not end within %v; stderr:\n%s", limit, c.stderr.String())
	}
	ws := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return -int(ws.Signal())
	}
	return ws.ExitStatus()
}

// captureTail reads a capture to its end and returns the header, the end
// (exclusive) of the last sample index of every channel, whether the end
// chunk was there, and the error that stopped the reader (nil at a clean end).
type captureTail struct {
	hdr      capture.Header
	end      []uint64
	samples  uint64
	complete bool
	stop     error
	mark     *meter.MarkEcho // the last clock mark, if any
	first    uint64          // first sample index of channel 0
}

func readTail(t *testing.T, path string) captureTail {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatalf("capture.Open(%s): %v", path, err)
	}
	defer r.Close()
	ct := captureTail{hdr: r.Header(), end: make([]uint64, len(r.Header().Channels))}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			ct.stop = err
			break
		}
		if rec.Kind == capture.KindMark && !rec.Mark.Synthetic {
			m := rec.Mark
			ct.mark = &m
		}
		if rec.Kind == capture.KindSamples {
			b := rec.Block
			if b.Channel == 0 && ct.samples == 0 {
				ct.first = b.Start
			}
			ct.end[b.Channel] = max(ct.end[b.Channel], b.Start+uint64(b.Len()))
			ct.samples += uint64(b.Len())
		}
	}
	ct.complete = r.Complete()
	return ct
}

// lastHost is the host time of the end of the last sample every channel
// holds. With a clock mark it is the mark's send time plus the samples
// since the mark's index (the meter's index need not start at 0 when
// recording starts); without one, the header's start time plus the
// samples recorded — which also counts the meter's start-up latency, so
// the loss it gives errs on the high side.
func (ct captureTail) lastHost() hostclock.Time {
	least := ct.end[0]
	for _, e := range ct.end {
		least = min(least, e)
	}
	ns := 1e9 / float64(ct.hdr.RateHz)
	if m := ct.mark; m != nil {
		return m.HostSent + hostclock.Time((float64(least)-float64(m.MeterIndex))*ns)
	}
	return ct.hdr.StartHost + hostclock.Time(float64(least-ct.first)*ns)
}

func newEmulator(t *testing.T, ports int) *hubemu.Emulator {
	t.Helper()
	emu, err := hubemu.New(hubemu.Options{Ports: ports, Symlink: filepath.Join(t.TempDir(), "tty")})
	if err != nil {
		t.Skipf("no pty for the emulator: %v", err)
	}
	t.Cleanup(func() { closeEmulator(emu) })
	return emu
}

// closeEmulator drains the pty while closing the emulator: once its client
// is killed nobody reads, the emulator's Write to the pty master blocks
// when the buffer is full, and Close waits for that Write forever (see
// docs/reliability.md, "known problems").
func closeEmulator(emu *hubemu.Emulator) {
	if f, err := os.OpenFile(emu.Path(), os.O_RDONLY|syscall.O_NOCTTY, 0); err == nil {
		go func() {
			defer f.Close()
			buf := make([]byte, 64<<10)
			for {
				if _, err := f.Read(buf); err != nil {
					return // EIO once the master is closed
				}
			}
		}()
	}
	emu.Close()
}

// crashRuns is how many kill -9 runs TestRecordKill9 makes (the script asks for more).
func crashRuns() int {
	if n, err := strconv.Atoi(os.Getenv("IDLEWATT_CRASH_RUNS")); err == nil && n > 0 {
		return n
	}
	return 1
}

func TestRecordKill9KeepsCaptureToLastChunk(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs idlewatt as a process for seconds")
	}
	emu := newEmulator(t, 4)
	var worst time.Duration
	for i := range crashRuns() {
		path := filepath.Join(t.TempDir(), "k.iwcap")
		c := startIdlewatt(t, "record", "--meter", "hub", "--port", emu.Path(), "--rate", "10000",
			"--duration", "60s", "--out", path)
		// Let it record a while (some seconds of data, several flushes): in
		// capture format 2 the emulator's 80 kS/s take about 14 kB/s.
		testutil.WaitFor(t, 20*time.Second, "the capture to grow", func() bool {
			fi, err := os.Stat(path)
			return err == nil && fi.Size() > 64<<10
		})
		time.Sleep(time.Duration(500+300*i%1000) * time.Millisecond)
		killed := hostclock.Now()
		if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		if code := c.wait(t, 10*time.Second); code != -int(syscall.SIGKILL) {
			t.Fatalf("exit %d, want killed by SIGKILL", code)
		}
		ct := readTail(t, path)
		if ct.complete || !errors.Is(ct.stop, capture.ErrTruncated) {
			t.Fatalf("killed capture: complete %v, reader stopped with %v; want no end chunk and ErrTruncated", ct.complete, ct.stop)
		}
		if errors.Is(ct.stop, capture.ErrCorrupt) {
			t.Fatalf("a kill must cut the capture, not corrupt it: %v", ct.stop)
		}
		if ct.samples == 0 {
			t.Fatal("killed capture holds no samples")
		}
		lost := time.Duration(killed - ct.lastHost())
		worst = max(worst, lost)
		t.Logf("kill -9 run %d: %d samples kept (first index %d, marks %v), %.3f s lost (kill time − end of the last stored sample)",
			i, ct.samples, ct.first, ct.mark != nil, lost.Seconds())

		// report reads it and says what is missing.
		out, errOut, code := run(t, t.Context(), "report", path, "--out", filepath.Join(t.TempDir(), "rep"))
		if code != 0 {
			t.Fatalf("report on a killed capture: exit %d: %s", code, errOut)
		}
		if !strings.Contains(out, "capture incomplete") || !strings.Contains(out, "without the end chunk") {
			t.Errorf("report does not say the capture is incomplete:\n%s", out)
		}
	}
	t.Logf("KILL9_LOST_MAX_S=%.3f over %d runs", worst.Seconds(), crashRuns())
}

func TestRecordSIGTERMClosesCapture(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs idlewatt as a process for seconds")
	}
	emu := newEmulator(t, 2)
	path := filepath.Join(t.TempDir(), "t.iwcap")
	c := startIdlewatt(t, "record", "--meter", "hub", "--port", emu.Path(), "--rate", "1000",
		"--duration", "60s", "--out", path)
	waitForSamples(t, path)
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// A signal that cuts a timed recording short closes the capture and
	// exits 1, saying so (with --duration 0 a signal is the normal end: 0).
	code := c.wait(t, 15*time.Second)
	if code != exitFailure {
		t.Fatalf("record after SIGTERM: exit %d, want 1; stderr:\n%s", code, c.stderr.String())
	}
	if !strings.Contains(c.stdout.String(), "(interrupted)") || !strings.Contains(c.stderr.String(), "interrupted by SIGTERM after") {
		t.Errorf("record after SIGTERM does not say it was interrupted: stdout %q stderr %q", c.stdout.String(), c.stderr.String())
	}
	ct := readTail(t, path)
	if !ct.complete || ct.stop != nil || ct.samples == 0 {
		t.Fatalf("capture after SIGTERM: complete %v, stop %v, %d samples; want a closed capture", ct.complete, ct.stop, ct.samples)
	}
}

// TestRecordDiskFull records onto a 2 MiB tmpfs: record must stop with a
// "disk full" error and exit 1, and the capture must read back up to the
// last chunk that fit.
func TestRecordDiskFull(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs idlewatt as a process for seconds")
	}
	mnt := mountSmallTmpfs(t, "2m")
	emu := newEmulator(t, 4)
	path := filepath.Join(mnt, "full.iwcap")
	// Format 1 (4 B per sample) fills 2 MiB in seconds; format 2 would take
	// minutes on the emulator's quiet drives. The writer's disk-full path is
	// the same for both (capture tests cover format 2 on /dev/full).
	c := startIdlewatt(t, "record", "--meter", "hub", "--port", emu.Path(), "--rate", "10000",
		"--duration", "60s", "--capture-format", "1", "--out", path)
	code := c.wait(t, 45*time.Second)
	stderr := c.stderr.String()
	if code != exitFailure {
		t.Fatalf("record onto a full disk: exit %d, want %d; stderr:\n%s", code, exitFailure, stderr)
	}
	if !strings.Contains(stderr, "disk full") {
		t.Errorf("record onto a full disk does not say so:\n%s", lastLines(stderr, 3))
	}
	ct := readTail(t, path)
	if ct.complete || !errors.Is(ct.stop, capture.ErrTruncated) || ct.samples == 0 {
		t.Fatalf("capture on a full disk: complete %v, stop %v, %d samples; want samples then ErrTruncated", ct.complete, ct.stop, ct.samples)
	}
	t.Logf("disk full: %d samples readable; stderr: %s", ct.samples, lastLines(stderr, 1))
	if _, errOut, code := run(t, t.Context(), "report", path, "--out", filepath.Join(t.TempDir(), "rep")); code != 0 {
		t.Errorf("report on a disk-full capture: exit %d: %s", code, errOut)
	}
}

// mountSmallTmpfs mounts a size-limited tmpfs (root only) and unmounts it
// when the test ends.
func mountSmallTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root; capture's disk-full test covers the writer")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// waitForSamples waits until the capture a recorder is writing at path holds
// samples (more than its header: 20 KiB on disk), so a signal sent next ends
// a recording rather than one that has not started.
func waitForSamples(t *testing.T, path string) {
	t.Helper()
	testutil.WaitFor(t, 20*time.Second, "the capture to hold samples", func() bool {
		fi, err := os.Stat(path)
		return err == nil && fi.Size() > 20<<10
	})
}
