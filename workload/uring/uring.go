package uring

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Opcodes (enum io_uring_op).
const (
	OpNop       uint8 = 0
	OpFsync     uint8 = 3
	OpFallocate uint8 = 17
	OpRead      uint8 = 22
	OpWrite     uint8 = 23
)

// FsyncDatasync makes OpFsync an fdatasync (SQE.OpFlags).
const FsyncDatasync = 1

// SQE flags.
const sqeFixedFile = 1 << 0

// Setup flags and features.
const (
	setupCoopTaskrun  = 1 << 8
	setupSingleIssuer = 1 << 12
	setupDeferTaskrun = 1 << 13
	featSingleMmap    = 1 << 0
	enterGetEvents    = 1 << 0
	enterExtArg       = 1 << 3
	registerFiles     = 2
	offSQRing         = 0
	offCQRing         = 0x8000000
	offSQEs           = 0x10000000
)

// SQE is a submission queue entry (struct io_uring_sqe, 64 bytes).
type SQE struct {
	Opcode      uint8
	Flags       uint8
	IoPrio      uint16
	Fd          int32
	Off         uint64
	Addr        uint64
	Len         uint32
	OpFlags     uint32
	UserData    uint64
	BufIndex    uint16
	Personality uint16
	SpliceFdIn  int32
	Addr3       uint64
	_           uint64
}

// CQE is a completion queue entry (struct io_uring_cqe, 16 bytes).
type CQE struct {
	UserData uint64
	Res      int32 // bytes transferred, or -errno
	Flags    uint32
}

type sqOffsets struct {
	Head, Tail, RingMask, RingEntries, Flags, Dropped, Array, Resv1 uint32
	UserAddr                                                        uint64
}

type cqOffsets struct {
	Head, Tail, RingMask, RingEntries, Overflow, Cqes, Flags, Resv1 uint32
	UserAddr                                                        uint64
}

type params struct {
	SQEntries, CQEntries, Flags, SQThreadCPU, SQThreadIdle, Features, WQFd uint32
	Resv                                                                   [3]uint32
	SQOff                                                                  sqOffsets
	CQOff                                                                  cqOffsets
}

// getEventsArg is struct io_uring_getevents_arg for IORING_ENTER_EXT_ARG.
type getEventsArg struct {
	Sigmask   uint64
	SigmaskSz uint32
	MinWaitUs uint32
	Ts        uint64
}

// ErrUnavailable wraps the setup error when the kernel has no usable
// io_uring (ENOSYS, EPERM from a seccomp filter or io_uring_disabled).
var ErrUnavailable = errors.New("io_uring unavailable")

// Ring is one io_uring instance.
type Ring struct {
	fd        int
	sqMem     []byte
	cqMem     []byte
	sqeMem    []byte
	sqHead    *uint32
	sqTail    *uint32
	sqMask    uint32
	sqEntries uint32
	sqArray   unsafe.Pointer
	sqes      unsafe.Pointer
	cqHead    *uint32
	cqTail    *uint32
	cqMask    uint32
	cqes      unsafe.Pointer
	tail      uint32 // local SQ tail: entries prepared, not yet published
	pending   uint32 // entries published, not yet passed to enter
	fixedFile bool
	fixedFd   int32
	extArg    bool
	Flags     uint32 // setup flags the kernel accepted
}

// New sets up a ring with at least entries submission slots.
func New(entries uint32) (*Ring, error) {
	var p params
	var fd uintptr
	var errno unix.Errno
	for _, flags := range []uint32{setupSingleIssuer | setupDeferTaskrun, setupCoopTaskrun, 0} {
		p = params{Flags: flags}
		fd, _, errno = unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
		if errno != unix.EINVAL {
			break
		}
	}
	if errno != 0 {
		if errno == unix.ENOSYS || errno == unix.EPERM || errno == unix.EACCES {
			return nil, fmt.Errorf("%w: io_uring_setup: %v", ErrUnavailable, errno)
		}
		return nil, fmt.Errorf("io_uring_setup: %w", errno)
	}
	r := &Ring{fd: int(fd), Flags: p.Flags, extArg: true}
	if err := r.mmap(&p); err != nil {
		unix.Close(r.fd)
		return nil, err
	}
	return r, nil
}

func (r *Ring) mmap(p *params) error {
	sqSize := int(p.SQOff.Array + p.SQEntries*4)
	cqSize := int(p.CQOff.Cqes + p.CQEntries*uint32(unsafe.Sizeof(CQE{})))
	single := p.Features&featSingleMmap != 0
	if single {
		sqSize = max(sqSize, cqSize)
	}
	var err error
	prot, flags := unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE
	if r.sqMem, err = unix.Mmap(r.fd, offSQRing, sqSize, prot, flags); err != nil {
		return fmt.Errorf("mmap SQ ring: %w", err)
	}
	r.cqMem = r.sqMem
	if !single {
		if r.cqMem, err = unix.Mmap(r.fd, offCQRing, cqSize, prot, flags); err != nil {
			return fmt.Errorf("mmap CQ ring: %w", err)
		}
	}
	if r.sqeMem, err = unix.Mmap(r.fd, offSQEs, int(p.SQEntries)*int(unsafe.Sizeof(SQE{})), prot, flags); err != nil {
		return fmt.Errorf("mmap SQEs: %w", err)
	}
	sq, cq := unsafe.Pointer(&r.sqMem[0]), unsafe.Pointer(&r.cqMem[0])
	r.sqHead = (*uint32)(unsafe.Add(sq, p.SQOff.Head))
	r.sqTail = (*uint32)(unsafe.Add(sq, p.SQOff.Tail))
	r.sqMask = *(*uint32)(unsafe.Add(sq, p.SQOff.RingMask))
	r.sqEntries = *(*uint32)(unsafe.Add(sq, p.SQOff.RingEntries))
	r.sqArray = unsafe.Add(sq, p.SQOff.Array)
	r.sqes = unsafe.Pointer(&r.sqeMem[0])
	r.cqHead = (*uint32)(unsafe.Add(cq, p.CQOff.Head))
	r.cqTail = (*uint32)(unsafe.Add(cq, p.CQOff.Tail))
	r.cqMask = *(*uint32)(unsafe.Add(cq, p.CQOff.RingMask))
	r.cqes = unsafe.Add(cq, p.CQOff.Cqes)
	r.tail = atomic.LoadUint32(r.sqTail)
	return nil
}

// RegisterFile registers fd as fixed file 0; SetFd then uses the fixed
// slot, which saves the kernel a file-table lookup and reference per I/O.
func (r *Ring) RegisterFile(fd int) error {
	fds := [1]int32{int32(fd)}
	_, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(r.fd), registerFiles, uintptr(unsafe.Pointer(&fds[0])), 1, 0, 0)
	if errno != 0 {
		return errno
	}
	r.fixedFile, r.fixedFd = true, int32(fd)
	return nil
}

// SetFd points sqe at fd, through the fixed-file slot if fd is registered.
func (r *Ring) SetFd(sqe *SQE, fd int) {
	if r.fixedFile && int32(fd) == r.fixedFd {
		sqe.Fd, sqe.Flags = 0, sqe.Flags|sqeFixedFile
		return
	}
	sqe.Fd = int32(fd)
}

// GetSQE returns a zeroed free submission entry, or nil when the SQ is full.
// The entry is submitted by the next Enter.
func (r *Ring) GetSQE() *SQE {
	head := atomic.LoadUint32(r.sqHead)
	if r.tail-head >= r.sqEntries {
		return nil
	}
	i := r.tail & r.sqMask
	sqe := (*SQE)(unsafe.Add(r.sqes, uintptr(i)*unsafe.Sizeof(SQE{})))
	*sqe = SQE{}
	*(*uint32)(unsafe.Add(r.sqArray, uintptr(i)*4)) = i
	r.tail++
	r.pending++
	return sqe
}

// Pending is how many prepared entries the next Enter submits.
func (r *Ring) Pending() uint32 { return r.pending }

// Enter submits the prepared entries and, if waitNr > 0, waits until at
// least waitNr completions are available or timeout (if > 0) has passed. A
// timeout or a signal is not an error; the caller looks at the CQ.
func (r *Ring) Enter(waitNr uint32, timeout time.Duration) error {
	return r.enter(waitNr, timeout, false)
}

// EnterNoYield is Enter without the Go scheduler's system-call bookkeeping
// (unix.RawSyscall6): the calling thread keeps its P while it waits, so no
// other thread is woken to take the P over and handed it back afterwards —
// at QD 1 that hand-off costs as much CPU as the I/O itself. Use it only
// for waits bounded by I/O latency, with GOMAXPROCS ≥ 2: a garbage
// collection's stop-the-world waits for the call to return.
func (r *Ring) EnterNoYield(waitNr uint32, timeout time.Duration) error {
	return r.enter(waitNr, timeout, true)
}

func (r *Ring) enter(waitNr uint32, timeout time.Duration, raw bool) error {
	atomic.StoreUint32(r.sqTail, r.tail)
	submit := r.pending
	var flags uintptr
	if waitNr > 0 {
		flags |= enterGetEvents
	}
	var arg unsafe.Pointer
	var argSz uintptr
	var ea getEventsArg
	var ts unix.Timespec
	if waitNr > 0 && timeout > 0 && r.extArg {
		ts = unix.NsecToTimespec(int64(timeout))
		ea.Ts = uint64(uintptr(unsafe.Pointer(&ts)))
		arg, argSz = unsafe.Pointer(&ea), unsafe.Sizeof(ea)
		flags |= enterExtArg
	}
	for {
		var n uintptr
		var errno unix.Errno
		if raw {
			n, _, errno = unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(submit), uintptr(waitNr), flags, uintptr(arg), argSz)
		} else {
			n, _, errno = unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(submit), uintptr(waitNr), flags, uintptr(arg), argSz)
		}
		if errno == 0 {
			r.pending -= min(uint32(n), r.pending)
			submit = r.pending
			if submit == 0 {
				return nil
			}
			continue // partial submission: the rest goes now
		}
		switch errno {
		case unix.ETIME, unix.EINTR:
			return nil
		case unix.EAGAIN, unix.EBUSY:
			// Completions must be reaped before more can be submitted.
			return nil
		}
		return fmt.Errorf("io_uring_enter: %w", errno)
	}
}

// Peek returns the oldest unconsumed completion without consuming it.
func (r *Ring) Peek() (*CQE, bool) {
	head := *r.cqHead // only this thread writes the CQ head
	if head == atomic.LoadUint32(r.cqTail) {
		return nil, false
	}
	return (*CQE)(unsafe.Add(r.cqes, uintptr(head&r.cqMask)*unsafe.Sizeof(CQE{}))), true
}

// Advance consumes n completions.
func (r *Ring) Advance(n uint32) { atomic.StoreUint32(r.cqHead, *r.cqHead+n) }

// Close unmaps the rings and closes the ring fd.
func (r *Ring) Close() error {
	unix.Munmap(r.sqeMem)
	if &r.cqMem[0] != &r.sqMem[0] {
		unix.Munmap(r.cqMem)
	}
	unix.Munmap(r.sqMem)
	return unix.Close(r.fd)
}
