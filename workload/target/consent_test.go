package target

// Consent (issue 13): a workload writes only a file idlewatt creates, or an
// existing file or device --allow-destructive names, resolved through
// symlinks; kernel state, character devices, FIFOs and sockets are refused
// whatever the flags; reads never run silently on holes. Every refusal
// leaves the path as it was.

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// snapshot is a file's bytes, or nil when it does not exist.
func snapshot(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func openClose(path string, opt Options) (*Target, error) {
	tg, err := Open(path, opt)
	if err == nil {
		tg.Close()
	}
	return tg, err
}

func TestExistingFileNeedsConsent(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	must(t, os.WriteFile(notes, []byte("hello, notes\n"), 0o644)) // 13 bytes
	other := filepath.Join(dir, "other.txt")
	must(t, os.WriteFile(other, []byte("other\n"), 0o644))
	link := filepath.Join(dir, "link")
	must(t, os.Symlink(notes, link))
	before := snapshot(t, notes)
	refused := []struct {
		name, path, allow string
	}{
		{"write, no flag", notes, ""},
		{"write, flag names another file", notes, other},
		{"write, flag names a missing path", notes, filepath.Join(dir, "nope")},
		{"write through a link, no flag", link, ""},
		{"write through a link, flag names another file", link, other},
	}
	for _, c := range refused {
		_, err := openClose(c.path, Options{Write: true, Size: 1 << 30, Fill: true, AllowDestructive: c.allow})
		if !errors.Is(err, ErrExisting) || !strings.Contains(err.Error(), "--allow-destructive") {
			t.Errorf("%s: got %v, want ErrExisting naming the flag", c.name, err)
		}
		if !bytes.Equal(snapshot(t, notes), before) {
			t.Fatalf("%s: the refused open changed notes.txt", c.name)
		}
	}
	if _, err := openClose(link, Options{Write: true}); err == nil || !strings.Contains(err.Error(), "→ "+notes) {
		t.Errorf("a refusal through a link must name the resolved file: %v", err)
	}
	// Consent by the file itself or by the link: the resolved file is what
	// is opened, at its own size (never grown).
	for _, allow := range []string{notes, link} {
		tg, err := Open(link, Options{Write: true, Size: 1 << 30, AllowDestructive: allow})
		if err != nil {
			t.Fatalf("allowed by %s: %v", allow, err)
		}
		if tg.RealPath() != notes || tg.Size() != 13 || tg.Created() || tg.Filled() {
			t.Errorf("allowed by %s: real %s size %d created %v filled %v", allow, tg.RealPath(), tg.Size(), tg.Created(), tg.Filled())
		}
		tg.Close()
	}
	if !bytes.Equal(snapshot(t, notes), before) {
		t.Fatal("opening (without I/O) changed notes.txt")
	}
	// Reading an existing file needs no consent and changes nothing.
	tg, err := Open(notes, Options{Read: true, Size: 1 << 30, Fill: true})
	if err != nil {
		t.Fatalf("read-only open: %v", err)
	}
	if tg.Size() != 13 {
		t.Errorf("size %d, want 13", tg.Size())
	}
	tg.Close()
	if !bytes.Equal(snapshot(t, notes), before) {
		t.Fatal("a read-only open changed notes.txt")
	}
}

func TestRefusedWhateverTheFlags(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	must(t, unix.Mkfifo(fifo, 0o644))
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	procLink := filepath.Join(dir, "mem-link")
	must(t, os.Symlink("/proc/self/mem", procLink))
	cases := []struct {
		path string
		want error
	}{
		{"/proc/self/mem", ErrSystem},
		{procLink, ErrSystem},
		{"/proc/sys/vm/drop_caches", ErrSystem},
		{"/sys/kernel/mm/transparent_hugepage/enabled", ErrSystem},
		{"/dev/mem", ErrUnsupported},
		{"/dev/zero", ErrUnsupported},
		{"/dev/null", ErrUnsupported},
		{fifo, ErrUnsupported},
		{sock, ErrUnsupported},
		{dir, ErrUnsupported},
		{"/proc/new-file", ErrSystem}, // would be created: refused before
	}
	for _, c := range cases {
		if _, err := os.Lstat(c.path); err != nil && c.path != "/proc/new-file" {
			t.Logf("%s: %v (skipped)", c.path, err)
			continue
		}
		for _, opt := range []Options{
			{Read: true, Size: 4096},
			{Write: true, Size: 4096, Fill: true, AllowDestructive: c.path, AllowSparse: true},
		} {
			if _, err := openClose(c.path, opt); !errors.Is(err, c.want) || !strings.Contains(err.Error(), "whatever the flags") {
				t.Errorf("%s %+v: got %v, want %v", c.path, opt, err, c.want)
			}
		}
	}
}

func TestDanglingLinkIsNotFollowed(t *testing.T) {
	dir := t.TempDir()
	link, where := filepath.Join(dir, "link"), filepath.Join(dir, "elsewhere.img")
	must(t, os.Symlink(where, link))
	if _, err := openClose(link, Options{Write: true, Size: 1 << 20}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("got %v", err)
	}
	if snapshot(t, where) != nil {
		t.Error("a file was created through the dangling link")
	}
}

func TestNothingCreatedWithoutASize(t *testing.T) {
	p := filepath.Join(t.TempDir(), "new.img")
	if _, err := openClose(p, Options{Write: true}); !errors.Is(err, ErrEmpty) {
		t.Errorf("got %v", err)
	}
	if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
		t.Error("a refused open left a file behind")
	}
	empty := filepath.Join(t.TempDir(), "empty")
	must(t, os.WriteFile(empty, nil, 0o644))
	if _, err := openClose(empty, Options{Read: true, Size: 1 << 20, Fill: true, AllowDestructive: empty}); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty existing file: got %v", err)
	}
	if fi, _ := os.Stat(empty); fi.Size() != 0 {
		t.Error("an empty existing file was grown")
	}
}

// sparseFile is 1 MiB with 4 KiB of data at 64 KiB and holes elsewhere.
func sparseFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "sparse.img")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	must(t, f.Truncate(1<<20))
	_, err = f.WriteAt(bytes.Repeat([]byte("DATA"), 1024), 64<<10)
	must(t, err)
	must(t, f.Close())
	fd, _ := unix.Open(p, unix.O_RDONLY, 0)
	defer unix.Close(fd)
	if !hasHoles(fd, 1<<20) {
		t.Skip("the filesystem does not report holes")
	}
	return p
}

func TestSparseReadTarget(t *testing.T) {
	p := sparseFile(t)
	before := snapshot(t, p)
	_, err := openClose(p, Options{Read: true, Size: 1 << 20, Fill: true})
	if !errors.Is(err, ErrSparse) || !strings.Contains(err.Error(), "--allow-sparse") || !strings.Contains(err.Error(), "--allow-destructive") {
		t.Fatalf("got %v, want ErrSparse saying what to do", err)
	}
	if !bytes.Equal(snapshot(t, p), before) {
		t.Fatal("the refusal changed the file")
	}
	// Accepted as it is: said so.
	tg, err := openClose(p, Options{Read: true, AllowSparse: true})
	if err != nil || !tg.Sparse() || tg.Filled() {
		t.Fatalf("--allow-sparse: %v sparse %v filled %v", err, tg != nil && tg.Sparse(), tg != nil && tg.Filled())
	}
	// A write-only workload does not care.
	if _, err := openClose(p, Options{Write: true, AllowDestructive: p}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(snapshot(t, p), before) {
		t.Fatal("opening changed the file")
	}
	// With consent the holes are filled and the data kept.
	tg, err = openClose(p, Options{Read: true, AllowDestructive: p})
	if err != nil || tg.Sparse() || !tg.Filled() {
		t.Fatalf("filled: %v sparse %v filled %v", err, tg != nil && tg.Sparse(), tg != nil && tg.Filled())
	}
	after := snapshot(t, p)
	if len(after) != 1<<20 || !bytes.Equal(after[64<<10:68<<10], before[64<<10:68<<10]) {
		t.Fatal("filling the holes changed the size or the data")
	}
	if zeros := bytes.Count(after[:64<<10], []byte{0}); zeros > 1<<10 {
		t.Errorf("hole at 0 still has %d zero bytes: not filled", zeros)
	}
}

func TestCreatedTargets(t *testing.T) {
	dir := t.TempDir()
	r, err := openClose(filepath.Join(dir, "r.img"), Options{Read: true, Size: 1 << 20})
	if err != nil || !r.Created() || !r.Filled() || r.Sparse() {
		t.Fatalf("read target: %v created %v filled %v sparse %v", err, r.Created(), r.Filled(), r.Sparse())
	}
	w, err := openClose(filepath.Join(dir, "w.img"), Options{Write: true, Size: 1 << 20})
	if err != nil || !w.Created() || w.Filled() || w.Size() != 1<<20 {
		t.Fatalf("write target: %v", err)
	}
	if !w.Sparse() {
		t.Log("the filesystem does not report the new file's holes")
	}
	s, err := openClose(filepath.Join(dir, "s.img"), Options{Read: true, AllowSparse: true, Size: 1 << 20})
	if err != nil || s.Filled() {
		t.Fatalf("--allow-sparse: %v filled %v", err, s.Filled())
	}
	// A second run finds the file there: it is no longer idlewatt's to write.
	if _, err := openClose(filepath.Join(dir, "w.img"), Options{Write: true, Size: 1 << 20}); !errors.Is(err, ErrExisting) {
		t.Errorf("second run: got %v, want ErrExisting", err)
	}
}

// /proc/self/fd/N, /proc/PID/fd/N and /dev/fd/N name the same open file:
// each is resolved to it and needs the same consent (issue 26: the two
// /proc forms were once treated differently).
func TestProcFdFormsAgree(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	must(t, os.WriteFile(notes, []byte("hello, notes\n"), 0o644))
	f, err := os.Open(notes)
	must(t, err)
	defer f.Close()
	fd := strconv.Itoa(int(f.Fd()))
	forms := []string{"/proc/self/fd/" + fd, "/proc/" + strconv.Itoa(os.Getpid()) + "/fd/" + fd, "/dev/fd/" + fd}
	for _, p := range forms {
		if _, err := openClose(p, Options{Write: true}); !errors.Is(err, ErrExisting) || !strings.Contains(err.Error(), "→ "+notes) {
			t.Errorf("%s without consent: %v, want ErrExisting naming %s", p, err, notes)
		}
		tg, err := Open(p, Options{Write: true, AllowDestructive: notes})
		if err != nil {
			t.Errorf("%s with consent for %s: %v", p, notes, err)
			continue
		}
		if tg.RealPath() != notes {
			t.Errorf("%s resolved to %s, want %s", p, tg.RealPath(), notes)
		}
		tg.Close()
	}
}
