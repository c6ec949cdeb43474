package target

import (
	"errors"
	"fmt"
	"io/fs"
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
	ErrExisting    = errors.New("writing an existing file needs --allow-destructive naming it")
	ErrUnsupported = errors.New("target must be a regular file or a block device")
	ErrSystem      = errors.New("target is kernel or process state, not storage")
	ErrSparse      = errors.New("target file has holes")
	ErrEmpty       = errors.New("target file is empty")
	ErrNoSpace     = errors.New("not enough free space to fill the target")
)

// Options says how to open a target.
type Options struct {
	Write bool // the workload writes or trims
	// Read says the workload reads: a regular file with holes (sparse, or
	// never written) is filled first when idlewatt created it or
	// AllowDestructive names it, and refused otherwise, because reads of a
	// hole never reach the drive.
	Read bool
	// AllowDestructive names the existing file or block device the user
	// allowed to be overwritten (the --allow-destructive=PATH flag).
	AllowDestructive string
	// AllowSparse lets a read workload run on a file with holes (or leaves
	// a file idlewatt creates unfilled); Target.Sparse says so afterwards.
	AllowSparse bool
	Size        int64 // a file idlewatt creates: this many bytes (an existing file keeps its size)
	Fill        bool  // a file idlewatt creates: fill with random data (implied by Read unless AllowSparse)
	Direct      bool  // open O_DIRECT (falls back to buffered with a warning)
	System      System
	Warn        func(string)
	// Stop, if set, is asked before each MiB of a fill; an error from it
	// (a signal, say) ends the fill, and a file idlewatt created is removed.
	Stop func() error
}

// Target is an open file or block device; it satisfies replay.Target and
// replay.Trimmer.
type Target struct {
	f       *os.File
	path    string
	real    string
	size    int64
	alloc   int64
	direct  bool
	block   bool
	created bool
	filled  bool
	sparse  bool
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

// RealPath is the path with every symlink resolved: what is read and written.
func (t *Target) RealPath() string { return t.real }

// Created reports a regular file idlewatt created for this run.
func (t *Target) Created() bool { return t.created }

// Filled reports that idlewatt wrote random data into the file (all of a
// file it created, or the holes of one it was allowed to) before the run.
func (t *Target) Filled() bool { return t.filled }

// Sparse reports a regular file that had holes when it was handed over.
func (t *Target) Sparse() bool { return t.sparse }

// Allocated is st_blocks × 512 of a regular file when it was handed over.
func (t *Target) Allocated() int64 { return t.alloc }

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

// Open opens path as a workload target, applying the safety rules (see the
// package documentation). Nothing is created or changed when it refuses.
func Open(path string, opt Options) (*Target, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: no target path given", ErrUnsupported)
	}
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return create(path, opt)
	} else if err != nil {
		return nil, fmt.Errorf("target %s: %w", path, err)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		// A dangling link: creating through it would write wherever it points.
		return nil, fmt.Errorf("%w: %s is a symlink that does not resolve (%v); idlewatt does not create a target through a link", ErrUnsupported, path, err)
	}
	if real, err = filepath.Abs(real); err != nil {
		return nil, fmt.Errorf("target %s: %w", path, err)
	}
	name := path
	if abs, err := filepath.Abs(path); err != nil || abs != real {
		name = path + " (→ " + real + ")"
	}
	if err := checkSystem(name, real); err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Stat(real, &st); err != nil {
		return nil, fmt.Errorf("target %s: %w", name, err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return openExisting(path, real, name, &st, opt)
	case unix.S_IFBLK:
		t, err := openBlock(name, real, Dev{unix.Major(st.Rdev), unix.Minor(st.Rdev)}, opt)
		if t != nil {
			t.path = path
		}
		return t, err
	}
	return nil, fmt.Errorf("%w: %s is %s; refused whatever the flags", ErrUnsupported, name, kind(st.Mode))
}

func kind(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFCHR:
		return "a character device (kernel memory, a terminal or a stream, not a disk)"
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFLNK:
		return "a symlink"
	}
	return fmt.Sprintf("a file of type %#o", mode&unix.S_IFMT)
}

// systemFS are filesystems whose files are kernel or process state
// (/proc/self/mem is a "regular file" of procfs): never a target.
var systemFS = map[int64]string{
	unix.PROC_SUPER_MAGIC:    "procfs",
	unix.SYSFS_MAGIC:         "sysfs",
	unix.DEBUGFS_MAGIC:       "debugfs",
	unix.TRACEFS_MAGIC:       "tracefs",
	unix.SECURITYFS_MAGIC:    "securityfs",
	unix.CGROUP_SUPER_MAGIC:  "cgroupfs",
	unix.CGROUP2_SUPER_MAGIC: "cgroup2",
	0x62656570:               "configfs", // CONFIGFS_MAGIC, not in x/sys/unix
	unix.EFIVARFS_MAGIC:      "efivarfs",
	unix.BPF_FS_MAGIC:        "bpffs",
	unix.PSTOREFS_MAGIC:      "pstore",
	unix.DEVPTS_SUPER_MAGIC:  "devpts",
}

// checkSystem refuses a resolved path under /proc or /sys, or on a
// filesystem of kernel state.
func checkSystem(name, real string) error {
	for _, root := range []string{"/proc", "/sys"} {
		if real == root || len(real) > len(root) && real[:len(root)+1] == root+"/" {
			return fmt.Errorf("%w: %s is under %s; refused whatever the flags", ErrSystem, name, root)
		}
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(real, &fs); err == nil {
		if n, ok := systemFS[int64(fs.Type)]; ok {
			return fmt.Errorf("%w: %s is on %s; refused whatever the flags", ErrSystem, name, n)
		}
	}
	return nil
}

// consented reports whether allow names the same file (or device node) as
// st; allow may be a symlink to it.
func consented(st *unix.Stat_t, allow string) bool {
	if allow == "" {
		return false
	}
	var a unix.Stat_t
	if err := unix.Stat(allow, &a); err != nil {
		return false
	}
	if st.Mode&unix.S_IFMT == unix.S_IFBLK {
		return a.Mode&unix.S_IFMT == unix.S_IFBLK && a.Rdev == st.Rdev
	}
	return a.Dev == st.Dev && a.Ino == st.Ino
}

func openBlock(name, real string, d Dev, opt Options) (*Target, error) {
	if err := CheckDevice(name, d, opt.System); err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Stat(real, &st); err != nil {
		return nil, fmt.Errorf("target %s: %w", name, err)
	}
	if opt.Write && !consented(&st, opt.AllowDestructive) {
		return nil, fmt.Errorf("%w: %s (got --allow-destructive=%q)", ErrNotAllowed, name, opt.AllowDestructive)
	}
	flags := unix.O_RDONLY
	if opt.Write {
		flags = unix.O_RDWR
	}
	f, direct, err := open(real, name, flags, opt)
	if err != nil {
		return nil, err
	}
	if err := sameInode(f, &st, name); err != nil {
		f.Close()
		return nil, err
	}
	var size uint64
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), unix.BLKGETSIZE64, uintptr(unsafe.Pointer(&size))); errno != 0 {
		f.Close()
		return nil, fmt.Errorf("target %s: size: %w", name, errno)
	}
	return &Target{f: f, real: real, size: int64(size), direct: direct, block: true}, nil
}

// create makes a new regular file of opt.Size bytes: idlewatt's own, so it
// may be written and filled.
func create(path string, opt Options) (*Target, error) {
	if opt.Size <= 0 {
		return nil, fmt.Errorf("%w: %s does not exist and no size was given to create it", ErrEmpty, path)
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", path, err)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, fmt.Errorf("target %s: %w", path, err)
	}
	if err := checkSystem(path, dir); err != nil {
		return nil, err
	}
	real := filepath.Join(dir, filepath.Base(path))
	fillIt := opt.Fill || (opt.Read && !opt.AllowSparse)
	if fillIt {
		// Before the file is created: a refusal leaves nothing behind.
		var fs unix.Statfs_t
		if unix.Statfs(dir, &fs) == nil {
			if free := fs.Bavail * uint64(fs.Bsize); uint64(opt.Size) > free {
				return nil, fmt.Errorf("%w: %s: --size %d bytes would be filled with random data, but its filesystem has %d bytes free (give a smaller --size)",
					ErrNoSpace, path, opt.Size, free)
			}
		}
	}
	// O_EXCL|O_NOFOLLOW: a file or link that appeared since Lstat is not ours.
	f, err := os.OpenFile(real, os.O_RDWR|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", path, err)
	}
	keep := false
	defer func() {
		if !keep {
			f.Close()
			os.Remove(real)
		}
	}()
	if fillIt {
		if err = fill(f, 0, opt.Size, opt.Stop); err == nil {
			err = f.Sync()
		}
	} else {
		err = f.Truncate(opt.Size)
	}
	if err != nil {
		return nil, fmt.Errorf("target %s: sizing to %d bytes: %w", path, opt.Size, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, fmt.Errorf("target %s: %w", path, err)
	}
	flags := unix.O_RDWR
	g, direct, err := open(real, path, flags, opt)
	if err != nil {
		return nil, err
	}
	if err := sameInode(g, &st, path); err != nil {
		g.Close()
		return nil, err
	}
	keep = true
	f.Close()
	return &Target{f: g, path: path, real: real, size: opt.Size, alloc: st.Blocks * 512, direct: direct,
		created: true, filled: fillIt, sparse: hasHoles(int(g.Fd()), opt.Size)}, nil
}

// openExisting opens a regular file that was there before: read as it is,
// written or filled only with consent, never resized.
func openExisting(path, real, name string, st *unix.Stat_t, opt Options) (*Target, error) {
	if st.Size == 0 {
		return nil, fmt.Errorf("%w: %s has 0 bytes; idlewatt sizes only files it creates (give a new path, or --size with one)", ErrEmpty, name)
	}
	consent := consented(st, opt.AllowDestructive)
	if opt.Write && !consent {
		return nil, fmt.Errorf("%w: %s holds %d bytes that idlewatt did not create (got --allow-destructive=%q)",
			ErrExisting, name, st.Size, opt.AllowDestructive)
	}
	// Look for holes on a plain read-only descriptor first.
	r, err := os.Open(real)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", name, err)
	}
	if err := sameInode(r, st, name); err != nil {
		r.Close()
		return nil, err
	}
	sparse := hasHoles(int(r.Fd()), st.Size)
	r.Close()
	filled := false
	if sparse && opt.Read {
		switch {
		case consent:
			if opt.Warn != nil {
				opt.Warn(fmt.Sprintf("%s has holes (%d of %d bytes allocated); filling them with random data so reads reach the drive (--allow-destructive names it)",
					name, st.Blocks*512, st.Size))
			}
			if err := fillHoles(real, name, st, opt.Stop); err != nil {
				return nil, err
			}
			filled = true
		case opt.AllowSparse:
			if opt.Warn != nil {
				opt.Warn(fmt.Sprintf("%s has holes (%d of %d bytes allocated): reads of a hole never reach the drive, so read figures flatter it (--allow-sparse)",
					name, st.Blocks*512, st.Size))
			}
		default:
			return nil, fmt.Errorf("%w: %s (%d of %d bytes allocated): reads of a hole never reach the drive and flatter the result; "+
				"fill it first, let idlewatt fill it with --allow-destructive %s, or measure it anyway with --allow-sparse",
				ErrSparse, name, st.Blocks*512, st.Size, path)
		}
	}
	flags := unix.O_RDONLY
	if opt.Write {
		flags = unix.O_RDWR
	}
	f, direct, err := open(real, name, flags, opt)
	if err != nil {
		return nil, err
	}
	if err := sameInode(f, st, name); err != nil {
		f.Close()
		return nil, err
	}
	var now unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &now); err != nil {
		f.Close()
		return nil, fmt.Errorf("target %s: %w", name, err)
	}
	return &Target{f: f, path: path, real: real, size: st.Size, alloc: now.Blocks * 512, direct: direct,
		filled: filled, sparse: hasHoles(int(f.Fd()), st.Size)}, nil
}

// sameInode refuses an open file that is no longer the one checked (the
// path was swapped between the check and the open).
func sameInode(f *os.File, st *unix.Stat_t, name string) error {
	var now unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &now); err != nil {
		return fmt.Errorf("target %s: %w", name, err)
	}
	if now.Dev != st.Dev || now.Ino != st.Ino {
		return fmt.Errorf("%w: %s changed while it was being opened; refusing it", ErrUnsupported, name)
	}
	return nil
}

// hasHoles reports whether [0, size) holds a hole: SEEK_HOLE finds the first
// one (ext4 and XFS also report allocated-but-unwritten extents as holes);
// where the filesystem cannot say, fewer allocated blocks than bytes.
func hasHoles(fd int, size int64) bool {
	off, err := unix.Seek(fd, 0, unix.SEEK_HOLE)
	if err == nil {
		return off < size
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return false
	}
	return st.Blocks*512 < size
}

// fillHoles writes random data into every hole of a file the user allowed
// to be overwritten, leaving its data ranges as they were.
func fillHoles(real, name string, st *unix.Stat_t, stop func() error) error {
	f, err := os.OpenFile(real, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("target %s: %w", name, err)
	}
	defer f.Close()
	if err := sameInode(f, st, name); err != nil {
		return err
	}
	fd, size := int(f.Fd()), st.Size
	for off := int64(0); off < size; {
		hole, err := unix.Seek(fd, off, unix.SEEK_HOLE)
		if err != nil {
			// No SEEK_HOLE: the whole file, which the user allowed.
			return fillSync(f, 0, size, name, stop)
		}
		if hole >= size {
			break
		}
		data, err := unix.Seek(fd, hole, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			data = size
		} else if err != nil {
			return fillSync(f, hole, size, name, stop)
		}
		if err := fill(f, hole, min(data, size), stop); err != nil {
			return fmt.Errorf("target %s: filling holes: %w", name, err)
		}
		off = data
	}
	return fillSync(f, size, size, name, stop)
}

func fillSync(f *os.File, from, to int64, name string, stop func() error) error {
	if err := fill(f, from, to, stop); err != nil {
		return fmt.Errorf("target %s: filling: %w", name, err)
	}
	return f.Sync()
}

// fill writes random data over [from, to) so later reads hit allocated
// blocks, as fio lays out a file before reading it.
func fill(f *os.File, from, to int64, stop func() error) error {
	rng := rand.New(rand.NewPCG(uint64(from), uint64(to)))
	buf := make([]byte, 1<<20)
	for off := from; off < to; {
		if stop != nil {
			if err := stop(); err != nil {
				return err
			}
		}
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
	return nil
}

// open opens the resolved path, O_DIRECT when asked and allowed, never
// following a symlink that replaced it.
func open(real, name string, flags int, opt Options) (*os.File, bool, error) {
	flags |= unix.O_CLOEXEC | unix.O_NOFOLLOW
	if opt.Direct {
		fd, err := unix.Open(real, flags|unix.O_DIRECT, 0)
		if err == nil {
			return os.NewFile(uintptr(fd), real), true, nil
		}
		if err != unix.EINVAL {
			return nil, false, fmt.Errorf("target %s: %w", name, err)
		}
		if opt.Warn != nil {
			opt.Warn(fmt.Sprintf("%s: the filesystem refuses O_DIRECT; using buffered I/O (page cache hits will flatter the numbers)", name))
		}
	}
	fd, err := unix.Open(real, flags, 0)
	if err != nil {
		return nil, false, fmt.Errorf("target %s: %w", name, err)
	}
	return os.NewFile(uintptr(fd), real), false, nil
}
