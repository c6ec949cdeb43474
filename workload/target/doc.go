// Package target opens what a workload runs against — a regular file or a
// block device — and refuses the ones it must not touch.
//
// # Safety rules
//
//   - A block device that is mounted, holds the root filesystem or is used
//     as swap is refused, for reads and writes alike, whatever the flags.
//     So is every device that shares a disk with one of those (the whole
//     disk and all its partitions), every holder stacked on them (device
//     mapper, md) and every slave beneath them.
//   - Writing (or trimming) a block device needs Options.AllowDestructive to
//     name that exact device (the --allow-destructive=DEVICE flag); symlinks
//     such as /dev/disk/by-id/... are resolved on both sides before comparing.
//   - A regular file is created if missing and grown to Options.Size (filled
//     with random data when Options.Fill is set, so reads hit real blocks).
//
// Protection is computed from /proc/self/mountinfo, /proc/swaps and sysfs;
// System names those paths so tests run on fixture trees.
//
// # O_DIRECT
//
// Targets are opened O_DIRECT when asked. A filesystem that refuses it
// (tmpfs) gets buffered I/O and a warning through Options.Warn.
package target
