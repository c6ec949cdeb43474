package target

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fakeSys builds a sysfs tree shaped like the kernel's: devices under
// devices/…/block, class/block symlinks to them, holders and slaves.
func fakeSys(t *testing.T) System {
	t.Helper()
	root := t.TempDir()
	type dev struct{ name, parent, dev string }
	devs := []dev{
		{"sda", "", "8:0"}, {"sda1", "sda", "8:1"}, {"sda2", "sda", "8:2"}, {"sda3", "sda", "8:3"},
		{"sdb", "", "8:16"}, {"sdb1", "sdb", "8:17"},
		{"sdc", "", "8:32"},
		{"sdd", "", "8:48"}, {"sdd1", "sdd", "8:49"},
		{"dm-0", "", "253:0"},
		{"nvme0n1", "", "259:0"}, {"nvme0n1p1", "nvme0n1", "259:1"},
		{"sde", "", "8:64"},
		{"vdz", "", "252:0"}, // holds a swap file
	}
	os.MkdirAll(filepath.Join(root, "class", "block"), 0o755)
	for _, d := range devs {
		p := filepath.Join(root, "devices", "block", d.name)
		if d.parent != "" {
			p = filepath.Join(root, "devices", "block", d.parent, d.name)
		}
		must(t, os.MkdirAll(filepath.Join(p, "holders"), 0o755))
		must(t, os.MkdirAll(filepath.Join(p, "slaves"), 0o755))
		must(t, os.WriteFile(filepath.Join(p, "dev"), []byte(d.dev+"\n"), 0o644))
		if d.parent != "" {
			must(t, os.WriteFile(filepath.Join(p, "partition"), []byte("1\n"), 0o644))
		}
		must(t, os.Symlink(p, filepath.Join(root, "class", "block", d.name)))
	}
	must(t, os.WriteFile(filepath.Join(root, "devices", "block", "sdd", "sdd1", "holders", "dm-0"), nil, 0o644))
	must(t, os.WriteFile(filepath.Join(root, "devices", "block", "dm-0", "slaves", "sdd1"), nil, 0o644))
	return System{
		MountInfo: "testdata/mountinfo",
		Swaps:     "testdata/swaps",
		SysRoot:   root,
		Stat: func(path string) (Dev, error) {
			if path == "/swapfile" {
				return Dev{252, 0}, nil
			}
			return Dev{}, os.ErrNotExist
		},
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestProtected(t *testing.T) {
	sys := fakeSys(t)
	// /dev/mapper/vg-data does not exist here; dm-0 is found by its 253:0.
	byName, _, err := Protected(sys)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for n := range byName {
		got = append(got, n)
	}
	sort.Strings(got)
	want := "dm-0 nvme0n1 nvme0n1p1 sda sda1 sda2 sda3 sdd sdd1 vdz"
	if strings.Join(got, " ") != want {
		t.Errorf("protected %v, want %s", got, want)
	}
	if !strings.Contains(byName["sda3"], "root filesystem") && !strings.Contains(byName["sda3"], "/boot") {
		t.Errorf("sda3 reason %q", byName["sda3"])
	}
	if !strings.Contains(byName["sdd"], "/data disk") {
		t.Errorf("sdd reason %q (mount point with an escaped space)", byName["sdd"])
	}
}

func TestCheckDevice(t *testing.T) {
	sys := fakeSys(t)
	for _, c := range []struct {
		d  Dev
		ok bool
	}{{Dev{8, 0}, false}, {Dev{8, 3}, false}, {Dev{8, 49}, false}, {Dev{253, 0}, false}, {Dev{259, 0}, false},
		{Dev{8, 16}, true}, {Dev{8, 17}, true}, {Dev{8, 32}, true}, {Dev{8, 64}, true}} {
		err := CheckDevice("/dev/x", c.d, sys)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrProtected)) {
			t.Errorf("%s: got %v, want ok=%v", c.d, err, c.ok)
		}
	}
	sys.MountInfo = filepath.Join(t.TempDir(), "missing")
	if err := CheckDevice("/dev/x", Dev{8, 16}, sys); err == nil {
		t.Error("unreadable mountinfo must refuse, not allow")
	}
	bad := filepath.Join(t.TempDir(), "mi")
	os.WriteFile(bad, []byte("garbage line\n"), 0o644)
	sys.MountInfo = bad
	if err := CheckDevice("/dev/x", Dev{8, 16}, sys); err == nil || !strings.Contains(err.Error(), "mi:1") {
		t.Errorf("malformed mountinfo: %v", err)
	}
}

func TestRegularFileCreatedAndSized(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.img")
	tg, err := Open(path, Options{Size: 1 << 20, Fill: true, Direct: true, Write: true, Warn: func(s string) { t.Log(s) }})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if tg.Size() != 1<<20 || tg.IsBlock() {
		t.Errorf("size %d", tg.Size())
	}
	b, _ := os.ReadFile(path)
	zeros := 0
	for _, c := range b {
		if c == 0 {
			zeros++
		}
	}
	if len(b) != 1<<20 || zeros > len(b)/100 {
		t.Errorf("file %d bytes, %d zero bytes: not filled", len(b), zeros)
	}
	if err := tg.Trim(0, 4096); err != nil {
		t.Errorf("trim: %v", err)
	}
	// Opening again keeps the size, even if a smaller one is asked.
	tg2, err := Open(path, Options{Size: 4096})
	if err != nil || tg2.Size() != 1<<20 {
		t.Fatalf("reopen: %v", err)
	}
	tg2.Close()
	if _, err := Open(filepath.Join(t.TempDir(), "empty"), Options{}); err == nil {
		t.Error("a new file with no size must be refused")
	}
}

func TestUnsupported(t *testing.T) {
	if _, err := Open("/dev/null", Options{}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("got %v", err)
	}
}

func TestConsented(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	os.WriteFile(a, []byte("x"), 0o644)
	os.Symlink(a, filepath.Join(dir, "link"))
	os.Link(a, filepath.Join(dir, "hard"))
	os.WriteFile(filepath.Join(dir, "b"), []byte("x"), 0o644)
	var st unix.Stat_t
	must(t, unix.Stat(a, &st))
	for allow, want := range map[string]bool{a: true, filepath.Join(dir, "link"): true, filepath.Join(dir, "hard"): true,
		"": false, filepath.Join(dir, "b"): false, filepath.Join(dir, "missing"): false} {
		if got := consented(&st, allow); got != want {
			t.Errorf("consented(a, %q) = %v, want %v", allow, got, want)
		}
	}
}
func FuzzMountInfo(f *testing.F) {
	b, _ := os.ReadFile("testdata/mountinfo")
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "mi")
		os.WriteFile(p, data, 0o644)
		scanMounts(p, func(Dev, string, string) {})
		scanSwaps(p, func(string, string) {})
	})
}

// TestFillStopsAndChecksSpace: a read target idlewatt creates is filled
// only when its filesystem has room (a 100 TiB --size used to fill the disk
// until ENOSPC), and a fill that Stop ends (a signal) removes the file.
func TestFillStopsAndChecksSpace(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "huge.img")
	if _, err := Open(p, Options{Read: true, Size: 1 << 60}); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("1 EiB fill: %v, want ErrNoSpace", err)
	}
	if _, err := os.Lstat(p); !os.IsNotExist(err) {
		t.Fatalf("refused target left behind: %v", err)
	}
	p = filepath.Join(dir, "stopped.img")
	calls := 0
	stop := errors.New("interrupted")
	_, err := Open(p, Options{Read: true, Size: 8 << 20, Stop: func() error {
		if calls++; calls > 2 {
			return stop
		}
		return nil
	}})
	if !errors.Is(err, stop) || calls != 3 {
		t.Fatalf("stopped fill: %v after %d checks, want the Stop error after 3", err, calls)
	}
	if _, err := os.Lstat(p); !os.IsNotExist(err) {
		t.Fatalf("half-filled target left behind: %v", err)
	}
	tg, err := Open(p, Options{Read: true, Size: 8 << 20, Stop: func() error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	if !tg.Filled() || tg.Sparse() {
		t.Fatalf("filled %v sparse %v, want a filled file", tg.Filled(), tg.Sparse())
	}
}
