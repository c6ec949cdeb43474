package target

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Errors callers branch on.
var (
	ErrProtected   = errors.New("device is in use by the system")
	ErrNotAllowed  = errors.New("writing a block device needs --allow-destructive naming it")
	ErrUnsupported = errors.New("target must be a regular file or a block device")
)

// Options says how to open a target.
type Options struct {
	Write            bool   // the workload writes or trims
	AllowDestructive string // block device the user allowed to be overwritten
	Size             int64  // regular file: create or grow to at least this many bytes
	Fill             bool   // regular file: fill grown space with random data
	Direct           bool   // open O_DIRECT (falls back to buffered with a warning)
	System           System
	Warn             func(string)
}

// Target is an open file or block device; it satisfies replay.Target and
// replay.Trimmer.
type Target struct {
	f      *os.File
	path   string
	size   int64
	direct bool
	block  bool
}

// Fd is the open descriptor.
func (t *Target) Fd() int { return int(t.f.Fd()) }

// Size is the file or device size in bytes.
func (t *Target) Size() int64 { return t.size }

// Direct reports whether the target was opened O_DIRECT.
func (t *Target) Direct() bool { return t.direct }

// IsBlock reports a block device.
func (t *Target) IsBlock() bool { return t.block }

// Path is the path the target was opened with.
func (t *Target) Path() string { return t.path }

// Close closes the target.
func (t *Target) Close() error { return t.f.Close() }

// Trim discards a range: BLKDISCARD on a block device, a punched hole in a
// file.
func (t *Target) Trim(off, n int64) error {
	if t.block {
		r := [2]uint64{uint64(off), uint64(n)}
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, t.f.Fd(), unix.BLKDISCARD, uintptr(unsafe.Pointer(&r[0])))
		if errno != 0 {
			return errno
		}
		return nil
	}
	return unix.Fallocate(int(t.f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n)
}

// Open opens path as a workload target, applying the safety rules.
func Open(path string, opt Options) (*Target, error) {
	var st unix.Stat_t
	err := unix.Stat(path, &st)
	switch {
	case errors.Is(err, unix.ENOENT):
		return openFile(path, opt)
	case err != nil:
		return nil, fmt.Errorf("target %s: %w", path, err)
	case st.Mode&unix.S_IFMT == unix.S_IFREG:
		return openFile(path, opt)
	case st.Mode&unix.S_IFMT == unix.S_IFBLK:
		return openBlock(path, Dev{unix.Major(st.Rdev), unix.Minor(st.Rdev)}, opt)
	}
	return nil, fmt.Errorf("%w: %s", ErrUnsupported, path)
}

func openBlock(path string, d Dev, opt Options) (*Target, error) {
	if err := CheckDevice(path, d, opt.System); err != nil {
		return nil, err
	}
	if opt.Write && !sameFile(path, opt.AllowDestructive) {
		return nil, fmt.Errorf("%w: %s (got --allow-destructive=%q)", ErrNotAllowed, path, opt.AllowDestructive)
	}
	flags := unix.O_RDONLY
	if opt.Write {
		flags = unix.O_RDWR
	}
	f, direct, err := open(path, flags, opt)
	if err != nil {
		return nil, err
	}
	var size uint64
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), unix.BLKGETSIZE64, uintptr(unsafe.Pointer(&size))); errno != 0 {
		f.Close()
		return nil, fmt.Errorf("target %s: size: %w", path, errno)
	}
	return &Target{f: f, path: path, size: int64(size), direct: direct, block: true}, nil
}

func sameFile(a, b string) bool {
	if b == "" {
		return false
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && filepath.Clean(ra) == filepath.Clean(rb)
}

func openFile(path string, opt Options) (*Target, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	cur := fi.Size()
	if cur < opt.Size {
		if opt.Fill {
			err = fill(f, cur, opt.Size)
		} else {
			err = f.Truncate(opt.Size)
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("target %s: sizing to %d bytes: %w", path, opt.Size, err)
		}
		cur = opt.Size
	}
	f.Close()
	if cur == 0 {
		return nil, fmt.Errorf("target %s: empty file and no size given", path)
	}
	g, direct, err := open(path, unix.O_RDWR, opt)
	if err != nil {
		return nil, err
	}
	return &Target{f: g, path: path, size: cur, direct: direct}, nil
}

// fill writes random data over [from, to) so later reads hit allocated
// blocks, as fio lays out a file before reading it.
func fill(f *os.File, from, to int64) error {
	rng := rand.New(rand.NewPCG(uint64(from), uint64(to)))
	buf := make([]byte, 1<<20)
	for off := from; off < to; {
		for i := 0; i+8 <= len(buf); i += 8 {
			v := rng.Uint64()
			*(*uint64)(unsafe.Pointer(&buf[i])) = v
		}
		n := min(int64(len(buf)), to-off)
		if _, err := f.WriteAt(buf[:n], off); err != nil {
			return err
		}
		off += n
	}
	return f.Sync()
}

func open(path string, flags int, opt Options) (*os.File, bool, error) {
	if opt.Direct {
		fd, err := unix.Open(path, flags|unix.O_DIRECT|unix.O_CLOEXEC, 0)
		if err == nil {
			return os.NewFile(uintptr(fd), path), true, nil
		}
		if err != unix.EINVAL {
			return nil, false, fmt.Errorf("target %s: %w", path, err)
		}
		if opt.Warn != nil {
			opt.Warn(fmt.Sprintf("%s: the filesystem refuses O_DIRECT; using buffered I/O (page cache hits will flatter the numbers)", path))
		}
	}
	fd, err := unix.Open(path, flags|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false, fmt.Errorf("target %s: %w", path, err)
	}
	return os.NewFile(uintptr(fd), path), false, nil
}
