// Package outfile writes idlewatt's outputs so that no command destroys a
// file it was not asked to replace. Every file a command writes (traces,
// CSV, reports, charts, captures, truth logs) goes through it.
//
// # Rules
//
//   - An existing output is refused unless Options.Overwrite is set (the
//     commands' --overwrite flag); the error names the path and the flag.
//   - A symbolic link as the final component is refused, whatever
//     Overwrite says: writing through it would replace a file the user did
//     not name (the link's target), and replacing the link itself would
//     surprise whoever made it. Links in the directories above are
//     followed as usual.
//   - An output that is one of the command's inputs (Options.Inputs) is
//     refused, also with Overwrite: the same path, a symbolic link either
//     way, or a hard link (os.SameFile), and, when the output does not
//     exist yet, the same resolved directory and name.
//   - Anything but a regular file (a directory, a device, a FIFO) is
//     refused as an output file.
//
// # Temporary file, then rename
//
// Create writes into a temporary file in the output's directory, opened
// with O_CREAT|O_EXCL|O_NOFOLLOW, and File.Commit fsyncs it, renames it
// into place and fsyncs the directory. Without Overwrite the rename is
// renameat2(RENAME_NOREPLACE), so a file that appeared meanwhile is still
// not replaced. File.Abort, or a failed write, removes the temporary file
// and leaves the old output byte for byte as it was. Outputs are created
// with mode 0644 (less the umask).
//
// # Written in place
//
// A capture is appended to while it is recorded and must survive kill -9
// with everything already flushed (docs/capture-format.md): it cannot sit
// in a temporary file until the end. CreateInPlace applies the same checks,
// creates the file under a temporary name (O_EXCL|O_NOFOLLOW), takes an
// exclusive flock on it and renames it into place; with Overwrite an old
// file's name is replaced (never truncated, so a hard link to it keeps its
// bytes) while its lock is held.
//
// # Locks
//
// A file written in place stays locked while its *os.File is open: Check
// refuses it (ErrBusy: "is being written in place by PID N (comm)", from
// /proc/locks, FlockHolder), with or without Overwrite, so a second
// recording can never unlink a capture under the first. The kernel drops
// a flock with its process: a killed writer leaves no stale lock.
//
// # Directories
//
// RunDir prepares a run directory (measure, demo, idle, devslp verify):
// created if missing, refused if it is a symbolic link, not a directory,
// or holds any entry (a previous run) unless Overwrite is set. Dir
// prepares a directory for derived files (report, compare), which may
// hold other files; each file in it is still checked on its own.
//
// # Where it sits
//
// A leaf (rank 0) that imports nothing of the project; whatever writes an
// output file imports it: capture, capture/notes, report and its
// sub-packages, the application layer and the commands.
package outfile
