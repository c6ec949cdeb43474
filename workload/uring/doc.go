// Package uring is a minimal io_uring binding on golang.org/x/sys/unix raw
// system calls: io_uring_setup, the mmapped submission and completion rings,
// and io_uring_enter. It offers exactly what the replay engine needs (read,
// write, fsync, fallocate, nop) and nothing else.
//
// # Threading
//
// A Ring is not safe for concurrent use. Create it and drive it from one
// goroutine locked to its OS thread (runtime.LockOSThread): New asks the
// kernel for IORING_SETUP_SINGLE_ISSUER|DEFER_TASKRUN when available, which
// ties the ring to the creating thread and runs completion work only when
// that thread enters the kernel to wait — the cheapest mode for a ring that
// one thread both fills and reaps.
//
// # Memory ordering
//
// The ring head and tail indexes are shared with the kernel. They are read
// and written with sync/atomic, whose sequentially consistent loads and
// stores give the acquire/release ordering the io_uring ABI requires.
//
// # References
//
// io_uring(7), io_uring_setup(2), io_uring_enter(2); include/uapi/linux/io_uring.h.
//
// # Where it sits
//
// The workload floor (rank 1), standard library and golang.org/x/sys only;
// workload/replay imports it.
package uring
