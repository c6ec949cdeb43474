package main

// Safety (issue 8 item 7): paths in the config and on the command line
// cannot make idlewatt write outside the chosen output directory, nor to a
// block device without --allow-destructive naming it; the emulator opens
// only its pty and listens on no network port.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// runFull is run with the exit message included in stderr (run reads its
// stderr buffer before exitCode writes the "idlewatt: ..." line into it).
func runFull(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	c := newCLI(&o, &e)
	_, err := c.execute(context.Background(), args)
	code = c.exitCode(err)
	return o.String(), e.String(), code
}

// tree lists every file and directory under root, relative to it.
func tree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != root {
			rel, _ := filepath.Rel(root, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// TestMeasureEmulatorWritesOnlyIntoOut runs measure on the emulator from a
// scratch working directory with a private TMPDIR: every file it leaves
// must be under --out (the capture, reports, charts, truth files), and its
// temporary files (the emulator's pty link, the simulated sysfs tree) must
// be gone when it returns. The simulated drives' scratch images are removed
// at the end, unless --keep-scratch keeps them.
func TestMeasureEmulatorWritesOnlyIntoOut(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a short measurement")
	}
	work, tmp := t.TempDir(), t.TempDir()
	t.Chdir(work)
	t.Setenv("TMPDIR", tmp)
	conf := filepath.Join(tmp, "..", filepath.Base(tmp)+"-conf.yaml") // outside work and tmp
	yaml := `meter: {kind: emulator, rate_hz: 1000}
drives:
  - {name: a, port: 1, profile: jmf667h-128-a19, size_bytes: 16777216}
  - {name: b, port: 2, profile: jmf667h-256-a19, size_bytes: 16777216}
idle: 300ms
workload: {trace: none}
devslp: {cycles: 0}
`
	if err := os.WriteFile(conf, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(conf) })
	_, errOut, code := run(t, context.Background(), "measure", "--config", conf, "--out", "run1", "--quiet")
	if code != 0 {
		t.Fatalf("measure exit %d: %s", code, errOut)
	}
	for _, p := range tree(t, work) {
		if p != "run1" && !strings.HasPrefix(p, "run1"+string(filepath.Separator)) {
			t.Errorf("measure wrote %s outside --out", p)
		}
	}
	got := strings.Join(tree(t, filepath.Join(work, "run1")), " ")
	for _, want := range []string{"capture.iwcap", "truth-p1.jsonl", "report.json"} {
		if !strings.Contains(got, want) {
			t.Errorf("--out lacks %s: %s", want, got)
		}
	}
	if strings.Contains(got, ".img") || strings.Contains(got, "idlewatt-tmp") {
		t.Errorf("scratch or temporary files left in --out: %s", got)
	}
	if left := tree(t, tmp); len(left) > 0 {
		t.Errorf("measure left temporary files behind in TMPDIR: %v", left)
	}
	_, errOut, code = run(t, context.Background(), "measure", "--config", conf, "--out", "run2", "--quiet", "--keep-scratch")
	if code != 0 {
		t.Fatalf("measure --keep-scratch exit %d: %s", code, errOut)
	}
	got = strings.Join(tree(t, filepath.Join(work, "run2")), " ")
	if !strings.Contains(got, "drive-p1.img") || !strings.Contains(got, "drive-p2.img") {
		t.Errorf("--keep-scratch did not keep the drive images: %s", got)
	}
}

// loopDevice attaches a 4 MiB file to a free loop device (root only) and
// returns the device and the backing file.
func loopDevice(t *testing.T) (dev, backing string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("attaching a loop device needs root")
	}
	backing = filepath.Join(t.TempDir(), "loop.img")
	data := bytes.Repeat([]byte("idlewatt safety "), 4<<20/16)
	if err := os.WriteFile(backing, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("losetup", "--find", "--show", backing).Output()
	if err != nil {
		t.Skipf("losetup: %v", err)
	}
	dev = strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if err := exec.Command("losetup", "-d", dev).Run(); err != nil {
			t.Errorf("losetup -d %s: %v", dev, err)
		}
	})
	return dev, backing
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestBlockDeviceNeedsTheDestructiveFlag points replay and bench at a loop
// device: without --allow-destructive, or with it naming another device,
// both must refuse (exit 2, saying why) and leave the device untouched;
// naming the exact device lets bench write it.
func TestBlockDeviceNeedsTheDestructiveFlag(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("uses a loop device")
	}
	dev, backing := loopDevice(t)
	before := fileSum(t, backing)
	trace := filepath.Join(t.TempDir(), "w.trace")
	if _, e, code := run(t, context.Background(), "trace", "gen", "iometer", "--pattern", "randwrite4k", "--ops", "200", "--span", "4MiB", "--out", trace); code != 0 {
		t.Skipf("trace gen: %s", e)
	}
	cases := [][]string{
		{"replay", "--trace", trace, "--target", dev, "--timing", "afap", "--wrap"},
		{"replay", "--trace", trace, "--target", dev, "--timing", "afap", "--wrap", "--allow-destructive", "/dev/loop-not-this-one"},
		{"bench", "--target", dev, "--pattern", "randwrite4k", "--qd", "1", "--duration", "1s"},
		{"bench", "--target", dev, "--pattern", "randwrite4k", "--qd", "1", "--duration", "1s", "--allow-destructive", dev + "0"},
	}
	for _, args := range cases {
		_, errOut, code := runFull(t, args...)
		if code == 0 {
			t.Errorf("%v: exit 0, want a refusal", args)
			continue
		}
		if !strings.Contains(errOut, "--allow-destructive") {
			t.Errorf("%v: exit %d without naming the flag: %s", args, code, lastLines(errOut, 2))
		}
	}
	if fileSum(t, backing) != before {
		t.Fatal("a refused run changed the device")
	}
	// The flag naming the exact device is what allows writing.
	_, errOut, code := run(t, context.Background(), "bench", "--target", dev, "--pattern", "randwrite4k", "--qd", "1",
		"--duration", "300ms", "--allow-destructive", dev)
	if code != 0 {
		t.Fatalf("bench with --allow-destructive=%s: exit %d: %s", dev, code, lastLines(errOut, 3))
	}
	if fileSum(t, backing) == before {
		t.Error("bench with the flag wrote nothing: the test proves nothing")
	}
}
