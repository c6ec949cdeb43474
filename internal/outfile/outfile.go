package outfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Sentinels. Every refusal wraps ErrRefused and one of the others, so a
// command can map any refusal to its bad-usage exit code with one check.
var (
	ErrRefused = errors.New("output refused")
	// ErrExists also matches fs.ErrExist.
	ErrExists     = fmt.Errorf("output exists: %w", fs.ErrExist)
	ErrSymlink    = errors.New("output is a symbolic link")
	ErrIsInput    = errors.New("output is one of the inputs")
	ErrNotRegular = errors.New("output is not a regular file")
	ErrNotEmpty   = errors.New("output directory is not empty")
	// ErrBusy: the output is a file another process is writing in place
	// (a capture being recorded): it holds the file's lock (lock.go).
	ErrBusy = errors.New("output is being written by another process")
)

// Mode is the permission every output file is created with (before the
// umask).
const Mode fs.FileMode = 0o644

// Options say what a command's output may replace.
type Options struct {
	// Overwrite allows replacing an existing regular file (or, for RunDir,
	// writing into a non-empty directory).
	Overwrite bool
	// Inputs are the files the command reads; the output must be none of
	// them. Empty strings and "-" are skipped.
	Inputs []string
	// Flag names the option that sets Overwrite, for error messages
	// (default "--overwrite").
	Flag string
}

func (o Options) flag() string {
	if o.Flag != "" {
		return o.Flag
	}
	return "--overwrite"
}

// Error is a refusal: the path, why, and what the user can do.
type Error struct {
	Path string
	Kind error // ErrExists, ErrSymlink, ErrIsInput, ErrNotRegular, ErrNotEmpty, ErrBusy
	msg  string
}

func (e *Error) Error() string   { return e.Path + ": " + e.msg }
func (e *Error) Unwrap() []error { return []error{e.Kind, ErrRefused} }

func refuse(path string, kind error, format string, a ...any) error {
	return &Error{Path: path, Kind: kind, msg: fmt.Sprintf(format, a...)}
}

// Check reports whether path may be written as an output file with o,
// without creating anything. Create and CreateInPlace call it first;
// commands call it before they start long work, so a refusal comes
// before the work rather than after it.
func Check(path string, o Options) error {
	if err := checkInputs(path, o); err != nil {
		return err
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return refuse(path, ErrSymlink, "is a symbolic link; refusing to write through it (name the file itself; %s does not change this)", o.flag())
	case !fi.Mode().IsRegular():
		return refuse(path, ErrNotRegular, "is a %s, not a regular file; refusing to replace it", kindOf(fi.Mode()))
	}
	if err := checkBusy(path, o); err != nil {
		return err
	}
	if !o.Overwrite {
		return refuse(path, ErrExists, "exists; refusing to replace it (use %s to replace it)", o.flag())
	}
	return nil
}

// CheckAll checks every name in dir (see Check) and returns the first
// refusal.
func CheckAll(dir string, names []string, o Options) error {
	for _, n := range names {
		if err := Check(filepath.Join(dir, n), o); err != nil {
			return err
		}
	}
	return nil
}

// checkInputs refuses path if it is, or would be, one of o.Inputs.
func checkInputs(path string, o Options) error {
	outFI, outErr := os.Stat(path) // follows a link: a link to an input is that input
	outName := resolvedName(path)
	for _, in := range o.Inputs {
		if in == "" || in == "-" {
			continue
		}
		same := false
		if outErr == nil {
			if inFI, err := os.Stat(in); err == nil && os.SameFile(outFI, inFI) {
				same = true
			}
		}
		if !same && outName != "" && outName == resolvedName(in) {
			same = true
		}
		if same {
			if in == path {
				return refuse(path, ErrIsInput, "is also this command's input; refusing to write over it (choose another output; %s does not change this)", o.flag())
			}
			return refuse(path, ErrIsInput, "is the same file as the input %s; refusing to write over it (choose another output; %s does not change this)", in, o.flag())
		}
	}
	return nil
}

// resolvedName is path with every symbolic link resolved, or, when path
// does not exist (or is a dangling link), its resolved directory joined
// with its own name; "" if even the directory cannot be resolved.
func resolvedName(path string) string {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
	}
	d, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return ""
	}
	a, err := filepath.Abs(filepath.Join(d, filepath.Base(path)))
	if err != nil {
		return ""
	}
	return a
}

func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	}
	return "special file"
}

// File is an output being written: bytes go to a temporary file beside
// the output, and only Commit puts them under the output's name.
type File struct {
	path string
	tmp  *os.File
	opt  Options
	done bool
	err  error // first write error: Commit refuses to publish a short file
}

// Create checks path (see Check) and opens a temporary file in its
// directory. The caller must end with Commit or Abort; deferring Abort is
// safe (it does nothing after Commit).
func Create(path string, o Options) (*File, error) {
	if err := Check(path, o); err != nil {
		return nil, err
	}
	f, err := createTemp(path)
	if err != nil {
		return nil, err
	}
	return &File{path: path, tmp: f, opt: o}, nil
}

// createTemp creates a new temporary file beside path, O_EXCL|O_NOFOLLOW.
func createTemp(path string) (*os.File, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	for range 10 {
		var rnd [6]byte
		if _, err := rand.Read(rnd[:]); err != nil {
			return nil, err
		}
		name := filepath.Join(dir, "."+base+".idlewatt-tmp-"+hex.EncodeToString(rnd[:]))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, Mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the temporary name would only confuse
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return f, nil
	}
	return nil, fmt.Errorf("%s: no free temporary name in %s", path, dir)
}

// Name is the output's final path.
func (f *File) Name() string { return f.path }

// Write writes to the temporary file. After a failed Write, Commit fails.
func (f *File) Write(p []byte) (int, error) {
	if f.done {
		return 0, fmt.Errorf("%s: write after Commit or Abort", f.path)
	}
	n, err := f.tmp.Write(p)
	if err != nil && f.err == nil {
		f.err = err
	}
	return n, err
}

// Commit fsyncs the temporary file, renames it to the output's name and
// fsyncs the directory. On any failure the temporary file is removed and
// an old output is left as it was.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("%s: Commit after Commit or Abort", f.path)
	}
	f.done = true
	tmp := f.tmp.Name()
	fail := func(err error) error {
		f.tmp.Close()
		os.Remove(tmp)
		return err
	}
	if f.err != nil {
		return fail(fmt.Errorf("%s: %w", f.path, f.err))
	}
	if err := f.tmp.Sync(); err != nil {
		return fail(fmt.Errorf("%s: %w", f.path, err))
	}
	if err := f.tmp.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %w", f.path, err)
	}
	if err := rename(tmp, f.path, f.opt); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(f.path))
}

// Abort removes the temporary file; an old output is left as it was.
// It does nothing after Commit or a previous Abort.
func (f *File) Abort() error {
	if f.done {
		return nil
	}
	f.done = true
	f.tmp.Close()
	return os.Remove(f.tmp.Name())
}

// rename moves tmp to path: never over an existing file without
// Overwrite, never over anything but a regular file.
func rename(tmp, path string, o Options) error {
	if !o.Overwrite {
		err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_NOREPLACE)
		if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
			// The file system has no RENAME_NOREPLACE: link(2) fails on an
			// existing name just the same.
			if err = os.Link(tmp, path); err == nil {
				os.Remove(tmp)
			}
		}
		if errors.Is(err, fs.ErrExist) {
			return refuse(path, ErrExists, "appeared while it was being written; refusing to replace it (use %s to replace it)", o.flag())
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	}
	// Overwrite: what is there now must still be a regular file (rename
	// replaces a link rather than following it, but the rule is the rule).
	if err := Check(path, o); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("%s: fsync: %w", dir, err)
	}
	return nil
}

// WriteFile writes data to path through Create and Commit.
func WriteFile(path string, data []byte, o Options) error {
	f, err := Create(path, o)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Commit()
}

// CreateInPlace checks path (see Check) and creates it for writing in
// place, for files that must be durable while they grow (captures, truth
// logs). The file is locked (flock LOCK_EX) for as long as the returned
// *os.File is open, so no other idlewatt replaces it meanwhile (ErrBusy,
// naming the holder's PID); the kernel drops the lock when the process
// dies, so a crash leaves none behind. The file is created under a
// temporary name (O_EXCL|O_NOFOLLOW), locked, and renamed into place: it
// never appears unlocked. Without Overwrite the rename never replaces a
// file that appeared meanwhile; with it an existing regular file is
// replaced (never truncated, so a hard link to it keeps its bytes) while
// this process holds its lock. The directory entry is fsynced.
func CreateInPlace(path string, o Options) (*os.File, error) {
	if err := Check(path, o); err != nil {
		return nil, err
	}
	tmp, err := createTemp(path)
	if err != nil {
		var errno unix.Errno
		if errors.As(err, &errno) {
			err = &fs.PathError{Op: "open", Path: path, Err: errno} // as opening path itself would say
		}
		return nil, err
	}
	fail := func(err error) (*os.File, error) {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, err
	}
	if err := unix.Flock(int(tmp.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return fail(fmt.Errorf("%s: lock: %w", path, err))
	}
	if o.Overwrite {
		old, err := lockOld(path, o)
		if err != nil {
			return fail(err)
		}
		err = os.Rename(tmp.Name(), path)
		old.Close() // its lock, held while it was replaced
		if err != nil {
			return fail(fmt.Errorf("%s: %w", path, err))
		}
	} else if err := rename(tmp.Name(), path, o); err != nil {
		if errors.Is(err, ErrExists) {
			err = refuse(path, ErrExists, "appeared while it was being created; refusing to replace it (use %s to replace it)", o.flag())
		}
		return fail(err)
	}
	// The same open file (and lock) under the output's name: os.File.Name
	// says what the caller created, not the temporary name.
	fd, err := unix.FcntlInt(tmp.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		tmp.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tmp.Close()
	f := os.NewFile(uintptr(fd), path)
	if err := syncDir(filepath.Dir(path)); err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	return f, nil
}

// CheckDir reports whether dir may receive output files, without creating
// anything: missing is fine; a symbolic link or anything but a directory is
// refused.
func CheckDir(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return refuse(dir, ErrSymlink, "is a symbolic link; refusing to write through it (name the directory itself)")
	case !fi.IsDir():
		return refuse(dir, ErrNotRegular, "is a %s, not a directory", kindOfFile(fi.Mode()))
	}
	return nil
}

// Dir makes dir ready for output files: refused as CheckDir refuses, else
// created (with its parents) if missing. Files already in it are left to
// Check.
func Dir(dir string) error {
	_, err := mkdir(dir)
	return err
}

// RunDir makes dir ready for a run: as Dir, and refused if it holds any
// entry (a previous run) unless o.Overwrite is set.
func RunDir(dir string, o Options) error {
	created, err := mkdir(dir)
	if err != nil || created || o.Overwrite {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	names, err := d.Readdirnames(1)
	if len(names) > 0 {
		return refuse(dir, ErrNotEmpty, "is not empty (it holds %s, perhaps a previous run); use a new directory, or %s to write into it and replace what the run writes", names[0], o.flag())
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %w", dir, err)
	}
	return nil
}

func mkdir(dir string) (created bool, err error) {
	if err := CheckDir(dir); err != nil {
		return false, err
	}
	if _, err := os.Lstat(dir); err == nil {
		return false, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	return true, nil
}

func kindOfFile(m fs.FileMode) string {
	if m.IsRegular() {
		return "regular file"
	}
	return kindOf(m)
}
