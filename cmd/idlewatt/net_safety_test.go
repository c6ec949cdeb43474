package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/internal/testutil"
)

// openFiles lists what process pid has open (readlink of /proc/PID/fd/*),
// the ones open for writing, and the inodes of its sockets.
func openFiles(t *testing.T, pid int) (files []string, writable map[string]bool, sockets map[string]bool) {
	t.Helper()
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	sockets, writable = map[string]bool{}, map[string]bool{}
	for _, e := range ents {
		l, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		files = append(files, l)
		if info, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/fdinfo/" + e.Name()); err == nil {
			for _, ln := range strings.Split(string(info), "\n") {
				if v, ok := strings.CutPrefix(ln, "flags:"); ok {
					if fl, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64); err == nil && fl&3 != 0 {
						writable[l] = true
					}
				}
			}
		}
		if in, ok := strings.CutPrefix(l, "socket:["); ok {
			sockets[strings.TrimSuffix(in, "]")] = true
		}
	}
	return files, writable, sockets
}

// netSockets returns the lines of /proc/net/{tcp,tcp6,udp,udp6,raw,raw6}
// whose inode is in inodes.
func netSockets(t *testing.T, inodes map[string]bool) []string {
	t.Helper()
	var hits []string
	for _, n := range []string{"tcp", "tcp6", "udp", "udp6", "raw", "raw6"} {
		f, err := os.Open("/proc/net/" + n)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) > 9 && inodes[fs[9]] {
				hits = append(hits, n+": "+sc.Text())
			}
		}
		f.Close()
	}
	return hits
}

// allowedFile says whether an open file of the emulator or the recorder is
// one they may hold: stdio pipes, the runtime's epoll/eventfd/pidfd, /dev/null, the
// pty (and, for the recorder, its capture), and — read-only — the cgroup
// CPU quota files the Go runtime reads to size GOMAXPROCS.
func allowedFile(l string, writable bool, extra ...string) bool {
	if strings.HasPrefix(l, "/sys/fs/cgroup/") && !writable {
		return true
	}
	for _, p := range []string{"pipe:", "anon_inode:", "/dev/null", "/dev/ptmx", "/dev/pts/"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	for _, e := range extra {
		if l == e {
			return true
		}
	}
	return false
}

// TestEmulatorOpensOnlyItsPtyAndNoSocket runs `hub emulate` and a `record`
// against it as processes and checks, while they stream, what each holds
// open: the pty (and the capture), nothing else, and no socket at all —
// in particular none in /proc/net/tcp*, udp*, raw*.
func TestEmulatorOpensOnlyItsPtyAndNoSocket(t *testing.T) {
	if testing.Short() {
		t.Skip("runs idlewatt as processes")
	}
	t.Setenv("TMPDIR", t.TempDir())
	enc, _ := json.Marshal([]string{"hub", "emulate", "--ports", "2"})
	emu := exec.Command(os.Args[0], "-test.run=^TestCrashHelperProcess$")
	emu.Env = append(os.Environ(), "IDLEWATT_CRASH_HELPER="+string(enc))
	out, err := emu.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := emu.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emu.Process.Kill(); _ = emu.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("hub emulate printed no pty path: %v", err)
	}
	pty := strings.TrimSpace(line)
	capPath := filepath.Join(t.TempDir(), "n.iwcap")
	rec := startIdlewatt(t, "record", "--meter", "hub", "--port", pty, "--rate", "1000", "--duration", "20s", "--out", capPath)
	testutil.WaitFor(t, 20*time.Second, "the recording to start", func() bool {
		fi, err := os.Stat(capPath)
		return err == nil && fi.Size() > 4<<10
	})
	for _, p := range []struct {
		name  string
		pid   int
		extra []string
	}{{"hub emulate", emu.Process.Pid, nil}, {"record", rec.cmd.Process.Pid, []string{capPath}}} {
		files, wr, socks := openFiles(t, p.pid)
		t.Logf("%s holds: %v", p.name, files)
		for _, l := range files {
			if !allowedFile(l, wr[l], p.extra...) {
				t.Errorf("%s holds %s open (writable %v)", p.name, l, wr[l])
			}
		}
		if hits := netSockets(t, socks); len(hits) > 0 {
			t.Errorf("%s has network sockets:\n%s", p.name, strings.Join(hits, "\n"))
		}
	}
}
