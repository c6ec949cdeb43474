package outfile

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Files written in place are locked while they are written (CreateInPlace:
// flock LOCK_EX on the file itself, held by its open file, released by
// close or by the process's death). Check probes the lock, so a second
// writer — a second `record` onto a capture being recorded, with or
// without --overwrite, a `repair --out` onto it — is refused naming the
// holder, instead of unlinking the file under the first, which then
// claimed samples no longer there. A lock outlives no process: a stale
// one from a killed recorder cannot block anybody.

// checkBusy refuses path, an existing regular file, if another open file
// holds its lock. A file that cannot be opened to probe (no read
// permission) is not known to be busy.
func checkBusy(path string, o Options) error {
	f, err := openProbe(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	err = unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return busy(path, o)
	}
	return nil // closing f drops the shared lock
}

// lockOld takes the lock of the file now at path (to be replaced), so
// that nobody starts writing it in place while it is replaced; nil if
// there is none. The lock is taken on the file path names after the lock
// is held: a file replaced between the open and the lock is looked at
// again.
func lockOld(path string, o Options) (*os.File, error) {
	for range 3 {
		f, err := openProbe(path)
		if err != nil {
			return nil, nil // gone, or unreadable: nothing of ours to lock
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, busy(path, o)
			}
			return nil, fmt.Errorf("%s: lock: %w", path, err)
		}
		fi, ferr := f.Stat()
		li, lerr := os.Lstat(path)
		if ferr == nil && lerr == nil && os.SameFile(fi, li) {
			return f, nil
		}
		f.Close()
		if lerr == nil && !li.Mode().IsRegular() {
			return nil, Check(path, o) // a link or special file appeared meanwhile
		}
	}
	return nil, refuse(path, ErrBusy, "keeps being replaced while idlewatt tries to replace it; refusing to write it")
}

// openProbe opens path to take its lock: read-only, never through a
// symbolic link, never blocking (a FIFO swapped in), never a controlling
// terminal.
func openProbe(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
}

func busy(path string, o Options) error {
	pid, comm := FlockHolder(path)
	who := "another process"
	switch {
	case pid > 0 && comm != "":
		who = fmt.Sprintf("PID %d (%s)", pid, comm)
	case pid > 0:
		who = fmt.Sprintf("PID %d", pid)
	}
	return refuse(path, ErrBusy, "is being written in place by %s: a capture being recorded, or a truth log; refusing to replace it (%s does not change this: wait for it to end, or choose another name)", who, o.flag())
}

// FlockHolder returns the PID (and command name, when readable) of a
// process holding an exclusive flock on path's file, as /proc/locks shows
// it; 0 and "" when none is found. Lines look like "1: FLOCK  ADVISORY  WRITE 4242
// 00:19:5 0 EOF" (device major:minor in hex, inode in decimal); "->" lines
// are waiters and are skipped.
func FlockHolder(path string) (int, string) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, ""
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0, ""
	}
	defer f.Close()
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 || fs[1] != "FLOCK" || fs[3] != "WRITE" || fs[5] != want {
			continue
		}
		pid, err := strconv.Atoi(fs[4])
		if err != nil || pid <= 0 {
			continue
		}
		comm := ""
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); err == nil {
			comm = strings.TrimSpace(string(b))
		}
		return pid, comm
	}
	return 0, ""
}
