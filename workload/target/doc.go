// Package target opens what a workload runs against — a regular file or a
// block device — and refuses the ones it must not touch. Nothing is created
// or changed when it refuses.
//
// # Safety rules
//
//   - The path is resolved (every symlink, filepath.EvalSymlinks) before any
//     check, so a link cannot smuggle a target in; the resolved file is what
//     is opened (O_NOFOLLOW, and its inode checked against the one checked).
//     A link that resolves to nothing is refused: creating through it would
//     write wherever it points.
//   - Refused whatever the flags: anything under /proc or /sys or on a
//     kernel-state filesystem (procfs, sysfs, debugfs, tracefs, cgroup,
//     configfs, efivarfs, bpffs, pstore, devpts — /proc/self/mem is a
//     "regular file" of procfs), character devices (/dev/mem, /dev/zero,
//     terminals), FIFOs, sockets and directories.
//   - A block device that is mounted, holds the root filesystem or is used
//     as swap is refused, for reads and writes alike, whatever the flags.
//     So is every device that shares a disk with one of those (the whole
//     disk and all its partitions), every holder stacked on them (device
//     mapper, md) and every slave beneath them.
//   - Writing (or trimming) a block device or an existing regular file needs
//     Options.AllowDestructive to name it (the --allow-destructive=PATH
//     flag): the same inode for a file (the flag may name it, a symlink to
//     it or a hard link), the same device number for a device.
//   - A missing regular file is created (O_EXCL) with Options.Size bytes: it
//     is idlewatt's own, so it may be written and filled. An existing file
//     keeps its size: it is never grown, truncated or created anew.
//   - Reads on holes never reach the drive (a sparse scratch file read at
//     1.4 M IOPS where the filled one gave 82 k). With Options.Read, a file
//     with holes (SEEK_HOLE; ext4 and XFS count allocated-but-unwritten
//     extents as holes) is filled with random data first if idlewatt created
//     it or AllowDestructive names it (only the holes: data is kept), run as
//     it is if AllowSparse says so, and refused otherwise. Target.Sparse,
//     Filled and Created say which happened.
//
// Protection is computed from /proc/self/mountinfo, /proc/swaps and sysfs;
// System names those paths so tests run on fixture trees.
//
// # O_DIRECT
//
// Targets are opened O_DIRECT when asked. A filesystem that refuses it
// (tmpfs) gets buffered I/O and a warning through Options.Warn;
// Target.Direct says which.
//
// # Where it sits
//
// The workload floor (rank 1), standard library only; app/rig and
// cmd/idlewatt import it.
package target
