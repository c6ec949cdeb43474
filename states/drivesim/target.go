package drivesim

import (
	"fmt"
	"os"
	"runtime"
	"time"

	"golang.org/x/sys/unix"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/workload"
)

// TargetOptions configure OpenTarget.
type TargetOptions struct {
	// Size is the target's size in bytes. If the backing file is smaller it
	// is extended (sparse); 0 = the file's current size.
	Size int64
	// Direct opens the backing file with O_DIRECT; buffers and offsets must
	// then be aligned to the file system's block size.
	Direct bool
	// Clock maps a host monotonic time (a hostclock.Time) to emulator
	// time, e.g. the hub emulator's EmuTime. nil = time since OpenTarget.
	Clock func(host hostclock.Time) time.Duration
	// Sleep waits for a wake latency; nil = preciseSleep. Tests replace it.
	Sleep func(time.Duration)
}

// Target is a simulated block device: a regular file that stands for the
// drive's media, and the Model that tells how the drive behaves. Each I/O
// tells the model it was issued, waits the model's wake latency for real,
// does the pread/pwrite, and tells the model it completed. Safe for
// concurrent use.
type Target struct {
	f     *os.File
	m     *Model
	size  int64
	clock func(hostclock.Time) time.Duration
	sleep func(time.Duration)
}

// OpenTarget opens (creating if needed) the backing file at path for the
// drive model m.
func OpenTarget(path string, m *Model, opt TargetOptions) (*Target, error) {
	if m == nil {
		return nil, fmt.Errorf("drivesim: OpenTarget %s: nil model", path)
	}
	flags := os.O_RDWR | os.O_CREATE
	if opt.Direct {
		flags |= unix.O_DIRECT
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return nil, fmt.Errorf("drivesim: backing file: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("drivesim: backing file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("drivesim: backing file %s is not a regular file", path)
	}
	size := fi.Size()
	if opt.Size < 0 {
		f.Close()
		return nil, fmt.Errorf("drivesim: backing file %s: negative size %d", path, opt.Size)
	}
	if opt.Size > size {
		if err := f.Truncate(opt.Size); err != nil {
			f.Close()
			return nil, fmt.Errorf("drivesim: backing file: %w", err)
		}
	}
	if opt.Size > 0 {
		size = opt.Size
	}
	t := &Target{f: f, m: m, size: size, clock: opt.Clock, sleep: opt.Sleep}
	if t.clock == nil {
		t0 := hostclock.Now()
		t.clock = func(host hostclock.Time) time.Duration { return host.Sub(t0) }
	}
	if t.sleep == nil {
		t.sleep = preciseSleep
	}
	return t, nil
}

// Model returns the drive model behind t.
func (t *Target) Model() *Model { return t.m }

// Size returns the target's size in bytes.
func (t *Target) Size() int64 { return t.size }

// File returns the backing file, for engines that do their own I/O (e.g.
// io_uring) between Before and After.
func (t *Target) File() *os.File { return t.f }

// Before tells the model a request is being issued now and returns the
// request's service time: how long the drive takes to serve it (the wake
// from the state it found the drive in, the transfers queued before it and
// its own transfer at the drive's rate). It does not sleep. The caller
// waits that long inside the request's I/O interval — issue stamped before
// the wait, completion after it — so the host sees the request complete
// when the model's transfer ends, as on a real drive (before: the wait
// covered only the wake and came before the issue stamp, so the host saw
// neither the wake nor the transfer as outstanding, and the model's active
// power ran on after the host's completion). Every Before must be
// followed by After.
func (t *Target) Before(op workload.Op, off int64, size int) (time.Duration, error) {
	if err := t.check(off, size); err != nil {
		return 0, err
	}
	_, svc, on := t.m.issue(t.clock(hostclock.Now()), op, size)
	if !on {
		return 0, ErrPoweredOff
	}
	return svc, nil
}

// After tells the model the request completed now.
func (t *Target) After(op workload.Op, off int64, size int) {
	t.m.IODone(t.clock(hostclock.Now()), op, size)
}

// AfterAt tells the model the request completed at host time hostNs
// (internal/hostclock), the engine's own completion stamp: a thread
// preempted between stamping and telling the model does not lengthen the
// request in the model's truth.
func (t *Target) AfterAt(op workload.Op, off int64, size int, hostNs int64) {
	t.m.IODone(t.clock(hostclock.Time(hostNs)), op, size)
}

// ReadAt reads len(p) bytes at off, waiting the request's service time
// (wake and transfer) first.
func (t *Target) ReadAt(p []byte, off int64) (int, error) {
	return t.do(workload.OpRead, p, off)
}

// WriteAt writes p at off, waiting the request's service time first.
func (t *Target) WriteAt(p []byte, off int64) (int, error) {
	return t.do(workload.OpWrite, p, off)
}

func (t *Target) do(op workload.Op, p []byte, off int64) (int, error) {
	w, err := t.Before(op, off, len(p))
	if err != nil {
		return 0, err
	}
	if w > 0 {
		t.sleep(w)
	}
	var n int
	if op == workload.OpRead {
		n, err = t.f.ReadAt(p, off)
	} else {
		n, err = t.f.WriteAt(p, off)
	}
	t.After(op, off, len(p))
	return n, err
}

// Sync flushes the backing file (the drive sees a flush command).
func (t *Target) Sync() error {
	w, err := t.Before(workload.OpFlush, 0, 0)
	if err != nil {
		return err
	}
	if w > 0 {
		t.sleep(w)
	}
	err = t.f.Sync()
	t.After(workload.OpFlush, 0, 0)
	return err
}

// Close closes the backing file. The model keeps running.
func (t *Target) Close() error { return t.f.Close() }

func (t *Target) check(off int64, size int) error {
	if off < 0 || size < 0 || off > t.size || int64(size) > t.size-off {
		return fmt.Errorf("drivesim: I/O [%d, +%d) outside the target's %d bytes", off, size, t.size)
	}
	return nil
}

// preciseSleep waits d, sleeping all but the last 300 µs and spinning
// (yielding) the rest: time.Sleep alone wakes up to a millisecond late on a
// busy host, and that would add to the wake latency the model prescribes.
func preciseSleep(d time.Duration) {
	const spin = 300 * time.Microsecond
	end := hostclock.Now().Add(d)
	if d > spin {
		time.Sleep(d - spin)
	}
	for hostclock.Now() < end {
		runtime.Gosched()
	}
}
