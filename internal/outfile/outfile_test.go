package outfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const precious = "precious bytes that must survive\n"

// seed writes precious into dir/name and returns the path.
func seed(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(precious), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustContain(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if string(b) != want {
		t.Fatalf("%s holds %q, want %q", path, b, want)
	}
}

// noTemp fails if a temporary file is left in dir.
func noTemp(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.Contains(e.Name(), ".idlewatt-tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// every way to write one output file.
var writers = map[string]func(path string, o Options) error{
	"Create+Commit": func(path string, o Options) error {
		f, err := Create(path, o)
		if err != nil {
			return err
		}
		if _, err := f.Write([]byte("new")); err != nil {
			f.Abort()
			return err
		}
		return f.Commit()
	},
	"WriteFile": func(path string, o Options) error { return WriteFile(path, []byte("new"), o) },
	"CreateInPlace": func(path string, o Options) error {
		f, err := CreateInPlace(path, o)
		if err != nil {
			return err
		}
		if _, err := f.WriteString("new"); err != nil {
			return err
		}
		return f.Close()
	},
}

func TestExistingFileRefused(t *testing.T) {
	for name, write := range writers {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := seed(t, dir, "out.trace")
			err := write(p, Options{})
			if !errors.Is(err, ErrExists) || !errors.Is(err, ErrRefused) || !errors.Is(err, fs.ErrExist) {
				t.Fatalf("err = %v, want ErrExists, ErrRefused and fs.ErrExist", err)
			}
			if !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "--overwrite") {
				t.Errorf("message %q names neither the path nor --overwrite", err)
			}
			mustContain(t, p, precious)
			noTemp(t, dir)
			// Another flag name is carried into the message.
			if err := write(p, Options{Flag: "--replace"}); err == nil || !strings.Contains(err.Error(), "--replace") {
				t.Errorf("Flag not in the message: %v", err)
			}
		})
	}
}

func TestSymlinkRefusedTargetUnchanged(t *testing.T) {
	for name, write := range writers {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			target := seed(t, dir, "system.conf")
			link := filepath.Join(dir, "out.png")
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			for _, o := range []Options{{}, {Overwrite: true}} {
				err := write(link, o)
				if !errors.Is(err, ErrSymlink) || !errors.Is(err, ErrRefused) {
					t.Fatalf("overwrite=%v: err = %v, want ErrSymlink", o.Overwrite, err)
				}
				mustContain(t, target, precious)
				if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
					t.Fatalf("the link itself was replaced or removed: %v %v", fi, err)
				}
			}
			noTemp(t, dir)
		})
	}
}

func TestDanglingSymlinkRefused(t *testing.T) {
	for name, write := range writers {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(dir, "not-yet")
			link := filepath.Join(dir, "out.csv")
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			for _, o := range []Options{{}, {Overwrite: true}} {
				if err := write(link, o); !errors.Is(err, ErrSymlink) {
					t.Fatalf("overwrite=%v: err = %v, want ErrSymlink", o.Overwrite, err)
				}
				if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("the link's target was created: %v", err)
				}
			}
			noTemp(t, dir)
		})
	}
}

func TestOutputIsInputRefused(t *testing.T) {
	type alias struct {
		name string
		make func(t *testing.T, dir string) (in, out string)
	}
	aliases := []alias{
		{"same path", func(t *testing.T, dir string) (string, string) {
			p := seed(t, dir, "mid.trace")
			return p, p
		}},
		{"same file, other spelling", func(t *testing.T, dir string) (string, string) {
			p := seed(t, dir, "mid.trace")
			return p, filepath.Join(dir, ".", "sub", "..", "mid.trace")
		}},
		{"output links to input", func(t *testing.T, dir string) (string, string) {
			in := seed(t, dir, "ev.trace")
			out := filepath.Join(dir, "ev.csv")
			if err := os.Symlink(in, out); err != nil {
				t.Fatal(err)
			}
			return in, out
		}},
		{"input links to output", func(t *testing.T, dir string) (string, string) {
			out := seed(t, dir, "real.trace")
			in := filepath.Join(dir, "in.trace")
			if err := os.Symlink(out, in); err != nil {
				t.Fatal(err)
			}
			return in, out
		}},
		{"hard link", func(t *testing.T, dir string) (string, string) {
			in := seed(t, dir, "in.trace")
			out := filepath.Join(dir, "hard.trace")
			if err := os.Link(in, out); err != nil {
				t.Fatal(err)
			}
			return in, out
		}},
		{"through a linked directory", func(t *testing.T, dir string) (string, string) {
			real := filepath.Join(dir, "real")
			os.Mkdir(real, 0o755)
			in := seed(t, real, "a.trace")
			if err := os.Symlink(real, filepath.Join(dir, "alias")); err != nil {
				t.Fatal(err)
			}
			return in, filepath.Join(dir, "alias", "a.trace")
		}},
	}
	for name, write := range writers {
		for _, a := range aliases {
			t.Run(name+"/"+a.name, func(t *testing.T) {
				dir := t.TempDir()
				os.Mkdir(filepath.Join(dir, "sub"), 0o755)
				in, out := a.make(t, dir)
				for _, o := range []Options{{Inputs: []string{"-", "", in}}, {Overwrite: true, Inputs: []string{in}}} {
					err := write(out, o)
					if !errors.Is(err, ErrIsInput) || !errors.Is(err, ErrRefused) {
						t.Fatalf("overwrite=%v: err = %v, want ErrIsInput", o.Overwrite, err)
					}
					if !strings.Contains(err.Error(), out) {
						t.Errorf("message %q does not name %s", err, out)
					}
					mustContain(t, in, precious)
				}
				noTemp(t, dir)
			})
		}
	}
}

// An output that does not exist yet aliases an input that does not exist
// either when both resolve to the same directory and name.
func TestOutputIsInputByResolvedName(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	os.Mkdir(real, 0o755)
	if err := os.Symlink(real, filepath.Join(dir, "alias")); err != nil {
		t.Fatal(err)
	}
	err := Check(filepath.Join(dir, "alias", "new.trace"), Options{Inputs: []string{filepath.Join(real, "new.trace")}})
	if !errors.Is(err, ErrIsInput) {
		t.Fatalf("err = %v, want ErrIsInput", err)
	}
	if err := Check(filepath.Join(dir, "alias", "other.trace"), Options{Inputs: []string{filepath.Join(real, "new.trace")}}); err != nil {
		t.Fatalf("a different name was refused: %v", err)
	}
}

func TestNotRegularRefused(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, write := range writers {
		for _, p := range []string{sub, fifo} {
			if err := write(p, Options{Overwrite: true}); !errors.Is(err, ErrNotRegular) {
				t.Errorf("%s over %s: err = %v, want ErrNotRegular", name, filepath.Base(p), err)
			}
		}
	}
	if fi, err := os.Stat(sub); err != nil || !fi.IsDir() {
		t.Fatal("the directory was replaced")
	}
}

// A write that fails half way, or an Abort, leaves the old file whole.
func TestFailureMidWriteLeavesOldFile(t *testing.T) {
	dir := t.TempDir()
	p := seed(t, dir, "mid.trace")
	before, _ := os.Stat(p)

	f, err := Create(p, Options{Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("half of the new")); err != nil {
		t.Fatal(err)
	}
	mustContain(t, p, precious) // nothing visible before Commit
	f.tmp.Close()               // the disk goes away: the next write fails
	if _, err := f.Write([]byte(" content")); err == nil {
		t.Fatal("write to a closed file succeeded")
	}
	if err := f.Commit(); err == nil {
		t.Fatal("Commit after a failed write succeeded")
	}
	mustContain(t, p, precious)
	after, _ := os.Stat(p)
	if !os.SameFile(before, after) {
		t.Error("the old file was replaced by another inode")
	}
	noTemp(t, dir)

	f, err = Create(p, Options{Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	f.Write(bytes.Repeat([]byte("x"), 1<<20))
	if err := f.Abort(); err != nil {
		t.Fatal(err)
	}
	if err := f.Abort(); err != nil {
		t.Fatalf("second Abort: %v", err)
	}
	mustContain(t, p, precious)
	noTemp(t, dir)
}

// Overwrite replaces the file in one rename: a reader of the old file keeps
// reading the old bytes, a hard link to it keeps them, and the new file
// has the output mode.
func TestOverwriteIsAtomic(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	p := seed(t, dir, "out.csv")
	keep := filepath.Join(dir, "keep.csv")
	if err := os.Link(p, keep); err != nil {
		t.Fatal(err)
	}
	r, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := Create(p, Options{Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("new"))
	mustContain(t, p, precious)
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := f.Abort(); err != nil {
		t.Fatalf("Abort after Commit: %v", err)
	}
	mustContain(t, p, "new")
	mustContain(t, keep, precious)
	var b [64]byte
	n, _ := r.Read(b[:])
	if string(b[:n]) != precious {
		t.Errorf("an open reader saw %q", b[:n])
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	noTemp(t, dir)
}

func TestNewFileMode(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	for name, write := range writers {
		p := filepath.Join(dir, strings.ReplaceAll(name, "+", "-"))
		if err := write(p, Options{}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		mustContain(t, p, "new")
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, want 0644", name, fi.Mode().Perm())
		}
	}
	noTemp(t, dir)
}

// A file that appears under the output's name while it is written is not
// replaced without Overwrite (renameat2 RENAME_NOREPLACE).
func TestAppearedMeanwhileNotReplaced(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.trace")
	f, err := Create(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("new"))
	seed(t, dir, "out.trace")
	if err := f.Commit(); !errors.Is(err, ErrExists) {
		t.Fatalf("Commit = %v, want ErrExists", err)
	}
	mustContain(t, p, precious)
	noTemp(t, dir)
}

// CreateInPlace with Overwrite replaces the old file's name, never its
// bytes: a hard link to it keeps the old bytes.
func TestCreateInPlaceOverwriteUnlinks(t *testing.T) {
	dir := t.TempDir()
	p := seed(t, dir, "c.iwcap")
	keep := filepath.Join(dir, "keep.iwcap")
	if err := os.Link(p, keep); err != nil {
		t.Fatal(err)
	}
	f, err := CreateInPlace(p, Options{Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("new")
	f.Close()
	mustContain(t, p, "new")
	mustContain(t, keep, precious)
}

func TestCreateInMissingDirectory(t *testing.T) {
	p := filepath.Join(t.TempDir(), "no", "such", "x.trace")
	_, err := Create(p, Options{})
	if err == nil || errors.Is(err, ErrRefused) || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), p) {
		t.Fatalf("err = %v, want a not-exist error naming %s", err, p)
	}
	if strings.Contains(err.Error(), "idlewatt-tmp") {
		t.Errorf("message names the temporary file: %v", err)
	}
}

func TestRunDir(t *testing.T) {
	base := t.TempDir()
	fresh := filepath.Join(base, "a", "run1")
	if err := RunDir(fresh, Options{}); err != nil {
		t.Fatalf("missing directory: %v", err)
	}
	if err := RunDir(fresh, Options{}); err != nil {
		t.Fatalf("empty directory: %v", err)
	}
	seed(t, fresh, "capture.iwcap")
	err := RunDir(fresh, Options{})
	if !errors.Is(err, ErrNotEmpty) || !errors.Is(err, ErrRefused) {
		t.Fatalf("directory holding a run: %v, want ErrNotEmpty", err)
	}
	for _, want := range []string{fresh, "new directory", "--overwrite"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	if err := RunDir(fresh, Options{Overwrite: true}); err != nil {
		t.Fatalf("with Overwrite: %v", err)
	}
	mustContain(t, filepath.Join(fresh, "capture.iwcap"), precious)

	link := filepath.Join(base, "link")
	os.Symlink(fresh, link)
	if err := RunDir(link, Options{Overwrite: true}); !errors.Is(err, ErrSymlink) {
		t.Errorf("linked directory: %v, want ErrSymlink", err)
	}
	if err := Dir(link); !errors.Is(err, ErrSymlink) {
		t.Errorf("Dir on a link: %v, want ErrSymlink", err)
	}
	file := seed(t, base, "file")
	if err := RunDir(file, Options{Overwrite: true}); !errors.Is(err, ErrNotRegular) {
		t.Errorf("a file as run directory: %v", err)
	}
	if err := Dir(fresh); err != nil {
		t.Errorf("Dir on a directory with files: %v", err)
	}
}

func TestCheckAll(t *testing.T) {
	dir := t.TempDir()
	seed(t, dir, "report.md")
	err := CheckAll(dir, []string{"report.json", "report.md"}, Options{})
	var e *Error
	if !errors.As(err, &e) || e.Path != filepath.Join(dir, "report.md") || e.Kind != ErrExists {
		t.Fatalf("CheckAll = %v", err)
	}
	if err := CheckAll(dir, []string{"report.json", "report.md"}, Options{Overwrite: true}); err != nil {
		t.Fatal(err)
	}
}

// A file written in place is locked while it is open: Check and
// CreateInPlace refuse it (ErrBusy, naming this process), with or without
// Overwrite, and leave it as it is; once it is closed it may be replaced.
func TestInPlaceLockedWhileOpen(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c.iwcap")
	f, err := CreateInPlace(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if f.Name() != p {
		t.Errorf("Name() = %q, want %q", f.Name(), p)
	}
	noTemp(t, dir)
	f.WriteString("recording")
	want := fmt.Sprintf("is being written in place by PID %d", os.Getpid())
	for _, o := range []Options{{}, {Overwrite: true}} {
		for name, try := range map[string]func() error{
			"Check":         func() error { return Check(p, o) },
			"CreateInPlace": func() error { _, err := CreateInPlace(p, o); return err },
			"Create":        func() error { _, err := Create(p, o); return err },
		} {
			err := try()
			if !errors.Is(err, ErrBusy) || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s (overwrite %v) while it is written: %v, want ErrBusy naming %q", name, o.Overwrite, err, want)
			}
		}
	}
	mustContain(t, p, "recording")
	noTemp(t, dir)
	f.Close()
	g, err := CreateInPlace(p, Options{Overwrite: true})
	if err != nil {
		t.Fatalf("after the writer closed it: %v", err)
	}
	g.Close()
	mustContain(t, p, "")
}

// TestLockHelperProcess is not a test: TestLockDiesWithItsProcess runs this
// binary again as a process holding a file written in place.
func TestLockHelperProcess(t *testing.T) {
	p := os.Getenv("OUTFILE_TEST_HOLD")
	if p == "" {
		t.Skip("helper process for TestLockDiesWithItsProcess")
	}
	f, err := CreateInPlace(p, Options{})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("held")
	io.Copy(io.Discard, os.Stdin) //nolint:errcheck // hold until killed
	f.Close()
	os.Exit(0)
}

// TestLockDiesWithItsProcess: another process writing a file in place is
// named by its PID in the refusal; killed with SIGKILL, it leaves no stale
// lock: the file can be replaced at once.
func TestLockDiesWithItsProcess(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.iwcap")
	cmd := exec.Command(os.Args[0], "-test.run", "^TestLockHelperProcess$")
	cmd.Env = append(os.Environ(), "OUTFILE_TEST_HOLD="+p)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	defer cmd.Process.Kill() //nolint:errcheck // gone when the test passes
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "held\n" {
		t.Fatalf("helper: %q, %v", line, err)
	}
	_, err = CreateInPlace(p, Options{Overwrite: true})
	if want := fmt.Sprintf("by PID %d (", cmd.Process.Pid); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), want) {
		t.Fatalf("replacing the helper's file: %v, want ErrBusy naming %q", err, want)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait() //nolint:errcheck // killed
	f, err := CreateInPlace(p, Options{Overwrite: true})
	if err != nil {
		t.Fatalf("after the holder was killed: %v (a stale lock?)", err)
	}
	f.Close()
}
