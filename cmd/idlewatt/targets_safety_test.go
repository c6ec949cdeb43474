package main

// Consent for replay and bench targets (issue 13, deliverable 2): only a
// file idlewatt creates, or an existing file or device --allow-destructive
// names (resolved through symlinks), is written; kernel state, character
// devices, FIFOs and sockets are refused whatever the flags; reads on holes
// are filled, refused or said; every flag is checked before a target is
// created; zero-length ops are skipped, not a panic. Each case asserts the
// exit code, the message, and the bytes of every file involved afterwards.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// files records the bytes (or absence) of paths, to prove a run left them
// as they were.
type files map[string][]byte

func snap(t *testing.T, paths ...string) files {
	t.Helper()
	m := files{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			m[p] = nil
			continue
		}
		if err != nil {
			m[p] = []byte("unreadable: " + err.Error())
			continue
		}
		m[p] = b
	}
	return m
}

// changed names the paths whose bytes (or existence) differ from before.
func (before files) changed(t *testing.T) []string {
	t.Helper()
	var out []string
	for p, b := range before {
		var now []byte
		if fi, err := os.Lstat(p); err == nil && fi.Mode().Type()&(os.ModeNamedPipe|os.ModeSocket|os.ModeDevice|os.ModeCharDevice) != 0 {
			continue // nothing to read back; existence is checked by Lstat below
		}
		now = snap(t, p)[p]
		if (b == nil) != (now == nil) || !bytes.Equal(b, now) {
			out = append(out, p)
		}
	}
	return out
}

// nativeTrace writes a native trace of lines after the header.
func nativeTrace(t *testing.T, dir, name string, lines ...string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	text := "# idlewatt trace v1\n" + strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTargetsNeedConsent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes.txt")
	must(t, os.WriteFile(notes, []byte("hello, notes\n"), 0o644)) // 13 bytes
	text := filepath.Join(dir, "unrelated.txt")
	must(t, os.WriteFile(text, bytes.Repeat([]byte("an unrelated text file\n"), 3000), 0o644)) // 69 kB
	link := filepath.Join(dir, "LINK")
	must(t, os.Symlink(text, link))
	memLink := filepath.Join(dir, "mem")
	must(t, os.Symlink("/proc/self/mem", memLink))
	fifo := filepath.Join(dir, "fifo")
	must(t, unix.Mkfifo(fifo, 0o644))
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	sparse := filepath.Join(dir, "sparse.img")
	must(t, os.WriteFile(sparse, nil, 0o644))
	must(t, os.Truncate(sparse, 4<<20))
	dangling := filepath.Join(dir, "dangling")
	elsewhere := filepath.Join(dir, "elsewhere.img")
	must(t, os.Symlink(elsewhere, dangling))
	writes := nativeTrace(t, dir, "w.trace", "0 W 4096 4096", "0.001 W 16384 8192", "0.002 R 0 4096")
	newImg := filepath.Join(dir, "new.img")
	watched := []string{notes, text, sparse, writes, newImg, elsewhere}

	bench := func(target string, more ...string) []string {
		return append([]string{"bench", "--target", target, "--qd", "2", "--duration", "200ms", "--size", "1MiB"}, more...)
	}
	replayW := func(target string, more ...string) []string {
		return append([]string{"replay", "--trace", writes, "--target", target, "--timing", "afap"}, more...)
	}
	cases := []struct {
		name string
		args []string
		want string // in stderr
	}{
		{"bench randwrite4k on an existing 13-byte file", bench(notes, "--pattern", "randwrite4k"), "--allow-destructive"},
		{"bench consistency on an existing file", bench(notes, "--pattern", "consistency"), "holds 13 bytes"},
		{"bench randwrite4k, flag names another file", bench(notes, "--pattern", "randwrite4k", "--allow-destructive", text), "--allow-destructive"},
		{"replay writes through a symlink", replayW(link, "--wrap"), "→ " + text},
		{"replay writes through a symlink, flag names another file", replayW(link, "--wrap", "--allow-destructive", notes), "--allow-destructive"},
		{"replay writes its own trace", replayW(writes), "an existing file"},
		{"replay through a dangling symlink", replayW(dangling), "does not resolve"},
		{"bench on /proc/self/mem", bench("/proc/self/mem", "--pattern", "randread4k"), "whatever the flags"},
		{"bench writes /proc/self/mem with the flag", bench("/proc/self/mem", "--pattern", "randwrite4k", "--allow-destructive", "/proc/self/mem"), "whatever the flags"},
		{"replay on a link to /proc/self/mem", replayW(memLink, "--allow-destructive", memLink, "--wrap"), "under /proc"},
		{"bench on a /sys file", bench("/sys/kernel/mm/transparent_hugepage/enabled", "--pattern", "randread4k", "--allow-destructive", "/sys/kernel/mm/transparent_hugepage/enabled"), "whatever the flags"},
		{"bench on /dev/zero", bench("/dev/zero", "--pattern", "randread4k", "--allow-destructive", "/dev/zero"), "character device"},
		{"bench on /dev/null", bench("/dev/null", "--pattern", "randwrite4k", "--allow-destructive", "/dev/null"), "character device"},
		{"bench on a FIFO", bench(fifo, "--pattern", "randread4k", "--allow-destructive", fifo), "a FIFO"},
		{"bench on a socket", bench(sock, "--pattern", "randwrite4k", "--allow-destructive", sock), "a socket"},
		{"bench on a directory", bench(dir, "--pattern", "randread4k"), "a directory"},
		{"bench randread4k on a sparse file", bench(sparse, "--pattern", "randread4k"), "--allow-sparse"},
		{"bench seqread128k on a sparse file", bench(sparse, "--pattern", "seqread128k"), "has holes"},
		{"bench on an empty existing file", bench(func() string {
			p := filepath.Join(dir, "empty")
			os.WriteFile(p, nil, 0o644)
			return p
		}(), "--pattern", "randread4k"), "0 bytes"},
		// Flags and patterns are checked before anything is created.
		{"bench unknown pattern", bench(newImg, "--pattern", "randraed4k"), `--pattern: unknown pattern "randraed4k"`},
		{"bench qd 0", append(bench(newImg, "--pattern", "randread4k"), "--qd", "0"), "--qd 0"},
		{"bench qd 5000", append(bench(newImg, "--pattern", "randread4k"), "--qd", "5000"), "--qd 5000"},
		{"bench negative duration", append(bench(newImg, "--pattern", "randread4k"), "--duration", "-1s"), `"--duration" flag: -1s is negative`},
		{"bench size 0", append(bench(newImg, "--pattern", "randread4k"), "--size", "0"), "--size 0"},
		{"bench size too small for the pattern", append(bench(newImg, "--pattern", "seqread128k"), "--size", "64KiB"), "smaller than one"},
		{"bench junk size", append(bench(newImg, "--pattern", "randread4k"), "--size", "lots"), "not a byte size"},
		{"bench unknown engine", bench(newImg, "--pattern", "randread4k", "--engine", "aio"), "--engine"},
		{"bench rt priority 200", bench(newImg, "--pattern", "randread4k", "--rt-priority", "200"), "--rt-priority 200"},
		{"replay negative duration", replayW(newImg, "--duration", "-5s"), `"--duration" flag: -5s is negative`},
		{"replay bad timing", replayW(newImg, "--timing", "sometimes"), "--timing"},
		{"replay zero speed", replayW(newImg, "--speed", "0"), "--speed"},
		{"replay size 0", replayW(newImg, "--size", "0"), "--size 0"},
		{"replay qd 0", replayW(newImg, "--qd", "0"), "--qd 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := snap(t, watched...)
			_, errOut, code := runFull(t, c.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2: %s", code, lastLines(errOut, 3))
			}
			if !strings.Contains(errOut, c.want) {
				t.Errorf("stderr lacks %q: %s", c.want, lastLines(errOut, 3))
			}
			if strings.Contains(errOut, "panic") {
				t.Errorf("panicked: %s", errOut)
			}
			if ch := before.changed(t); len(ch) > 0 {
				t.Errorf("a refused run changed %v", ch)
			}
			if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Error("the symlink was replaced")
			}
		})
	}
}

// benchJSON runs bench with --json and decodes the result.
func benchJSON(t *testing.T, args ...string) (map[string]any, string) {
	t.Helper()
	out, errOut, code := run(t, t.Context(), append(args, "--json")...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, lastLines(errOut, 3))
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return m, errOut
}

func targetOf(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	tg, ok := m["target"].(map[string]any)
	if !ok {
		t.Fatalf("result has no target: %v", m)
	}
	if _, ok := m["direct"].(bool); !ok {
		t.Fatalf("result does not say whether O_DIRECT was in effect: %v", m)
	}
	return tg
}

func TestTargetsWithConsent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	text := filepath.Join(dir, "unrelated.txt")
	orig := bytes.Repeat([]byte("an unrelated text file\n"), 3000)
	must(t, os.WriteFile(text, orig, 0o644))
	link := filepath.Join(dir, "LINK")
	must(t, os.Symlink(text, link))
	writes := nativeTrace(t, dir, "w.trace", "0 W 4096 4096", "0.001 W 16384 8192", "0.002 R 0 4096")

	// The flag naming the link or the resolved file allows it; the resolved
	// file is what is written, and the link stays a link.
	for _, allow := range []string{link, text} {
		must(t, os.WriteFile(text, orig, 0o644))
		_, errOut, code := run(t, t.Context(), "replay", "--trace", writes, "--target", link, "--timing", "afap", "--allow-destructive", allow)
		if code != 0 {
			t.Fatalf("allowed by %s: exit %d: %s", allow, code, lastLines(errOut, 3))
		}
		got, _ := os.ReadFile(text)
		if len(got) != len(orig) || bytes.Equal(got, orig) || !bytes.Equal(got[:4096], orig[:4096]) {
			t.Errorf("allowed by %s: %d bytes, changed %v, first 4 KiB kept %v; want the writes at 4096 and 16384 only",
				allow, len(got), !bytes.Equal(got, orig), bytes.Equal(got[:4096], orig[:4096]))
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Error("the symlink was replaced")
		}
	}

	// Reading an existing filled file needs no flag and changes nothing.
	must(t, os.WriteFile(text, orig, 0o644))
	m, _ := benchJSON(t, "bench", "--target", text, "--pattern", "randread4k", "--qd", "2", "--duration", "200ms")
	tg := targetOf(t, m)
	if tg["created"] != false || tg["sparse"] != false || tg["filled"] != false || tg["size_bytes"] != float64(len(orig)) {
		t.Errorf("existing filled file: target %v", tg)
	}
	if got, _ := os.ReadFile(text); !bytes.Equal(got, orig) {
		t.Error("a read pattern changed the file")
	}
	// --size does not grow an existing file, and says so.
	_, errOut, code := run(t, t.Context(), "bench", "--target", text, "--pattern", "randread4k", "--qd", "2", "--duration", "100ms", "--size", "1GiB")
	if got, _ := os.ReadFile(text); code != 0 || !bytes.Equal(got, orig) || !strings.Contains(errOut, "--size 1GiB ignored") {
		t.Errorf("--size on an existing file: exit %d, %d bytes after: %s", code, len(got), lastLines(errOut, 2))
	}

	// A file bench creates for a read pattern is filled and said to be.
	img := filepath.Join(dir, "new.img")
	m, errOut = benchJSON(t, "bench", "--target", img, "--pattern", "randread4k", "--qd", "2", "--duration", "200ms", "--size", "1MiB")
	tg = targetOf(t, m)
	if tg["created"] != true || tg["filled"] != true || tg["sparse"] != false || tg["size_bytes"] != float64(1<<20) {
		t.Errorf("created target %v", tg)
	}
	if !strings.Contains(errOut, "filled with random data") {
		t.Errorf("stderr does not say the new file was filled: %s", errOut)
	}
	// The same file on the next run is an existing file: reading is fine,
	// writing needs the flag.
	before := snap(t, img)
	if _, e, code := runFull(t, "bench", "--target", img, "--pattern", "randwrite4k", "--duration", "100ms"); code != 2 || !strings.Contains(e, "--allow-destructive") {
		t.Errorf("second run writing the scratch: exit %d: %s", code, lastLines(e, 2))
	}
	if ch := before.changed(t); len(ch) > 0 {
		t.Error("the refused second run changed the scratch file")
	}
	if _, e, code := run(t, t.Context(), "bench", "--target", img, "--pattern", "randwrite4k", "--duration", "100ms", "--allow-destructive", img); code != 0 {
		t.Errorf("with the flag: exit %d: %s", code, lastLines(e, 2))
	}

	// Sparse: --allow-sparse runs and says SPARSE; --allow-destructive fills
	// the holes first.
	sparse := filepath.Join(dir, "sparse.img")
	must(t, os.WriteFile(sparse, nil, 0o644))
	must(t, os.Truncate(sparse, 2<<20))
	out, errOut, code := run(t, t.Context(), "bench", "--target", sparse, "--pattern", "randread4k", "--qd", "2", "--duration", "200ms", "--allow-sparse")
	if code != 0 || !strings.Contains(out, "SPARSE") || !strings.Contains(errOut, "--allow-sparse") {
		t.Errorf("--allow-sparse: exit %d, stdout %q, stderr %s", code, out, lastLines(errOut, 2))
	}
	if b, _ := os.ReadFile(sparse); len(b) != 2<<20 || bytes.Count(b, []byte{0}) != len(b) {
		t.Error("--allow-sparse changed the file")
	}
	m, _ = benchJSON(t, "bench", "--target", sparse, "--pattern", "randread4k", "--qd", "2", "--duration", "200ms", "--allow-sparse")
	if tg := targetOf(t, m); tg["sparse"] != true || tg["filled"] != false {
		t.Errorf("--allow-sparse JSON target %v", tg)
	}
	m, _ = benchJSON(t, "bench", "--target", sparse, "--pattern", "randread4k", "--qd", "2", "--duration", "200ms", "--allow-destructive", sparse)
	if tg := targetOf(t, m); tg["sparse"] != false || tg["filled"] != true {
		t.Errorf("filled JSON target %v", tg)
	}
	if b, _ := os.ReadFile(sparse); len(b) != 2<<20 || bytes.Count(b, []byte{0}) > len(b)/100 {
		t.Error("--allow-destructive did not fill the holes (or changed the size)")
	}
}

// TestZeroLengthOpsDoNotPanic is the reproduction, on both engines
// and an existing file: the ops are skipped and counted, the file unchanged.
func TestZeroLengthOpsDoNotPanic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	z := filepath.Join(dir, "z")
	must(t, os.WriteFile(z, []byte("# idlewatt trace v1\n0 R 0 0\n"), 0o644))
	zw := nativeTrace(t, dir, "zw", "0 W 100 0", "0 R 0 0", "0.001 W 4096 0", "0.002 R 0 4096")
	img := filepath.Join(dir, "f.img")
	must(t, os.WriteFile(img, bytes.Repeat([]byte("keep me "), 8192), 0o644))
	for _, engine := range []string{"uring", "sync"} {
		before := snap(t, img, z, zw)
		for _, c := range []struct {
			trace string
			zero  string
		}{{z, "1 zero-length ops"}, {zw, "3 zero-length ops"}} {
			args := []string{"replay", "--trace", c.trace, "--target", img, "--engine", engine, "--allow-destructive", img}
			out, errOut, code := run(t, t.Context(), args...)
			if code != 0 || !strings.Contains(out, c.zero) {
				t.Errorf("%s %s: exit %d, stdout %q: %s", engine, c.trace, code, out, lastLines(errOut, 3))
			}
			out, _, _ = run(t, t.Context(), append(args, "--json")...)
			var m map[string]any
			if err := json.Unmarshal([]byte(out), &m); err != nil || fmt.Sprint(m["zero_length_ops_skipped"]) != strings.Fields(c.zero)[0] {
				t.Errorf("%s %s: JSON zero_length_ops_skipped %v (%v)", engine, c.trace, m["zero_length_ops_skipped"], err)
			}
		}
		if ch := before.changed(t); len(ch) > 0 {
			t.Errorf("%s: zero-length writes changed %v", engine, ch)
		}
		// A new target for the exact command.
		fresh := filepath.Join(dir, "fresh-"+engine+".img")
		if _, e, code := run(t, t.Context(), "replay", "--trace", z, "--target", fresh, "--engine", engine); code != 0 {
			t.Errorf("%s: replay on a new target: exit %d: %s", engine, code, lastLines(e, 3))
		}
	}
}

// TestTraceCountsAreTrue: trace convert's written count is what was
// written, the dropped ops are named once with the reason, and a blkparse
// empty preflush is one op.
func TestTraceCountsAreTrue(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "out.csv")
	_, errOut, code := run(t, t.Context(), "trace", "convert", "../../fixtures/traces/native.trace", "--to", "msr", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	b, _ := os.ReadFile(out)
	lines := strings.Count(string(b), "\n") - 1 // the header
	want := fmt.Sprintf("%d ops written to %s (msr); 2 ops dropped (1 flush, 1 trim): MSR CSV carries only reads and writes", lines, out)
	if lines != 3 || !strings.Contains(errOut, want) {
		t.Errorf("%d lines written; stderr %q, want %q", lines, errOut, want)
	}
	if strings.Count(errOut, "dropped") != 1 {
		t.Errorf("dropped ops counted more than once: %q", errOut)
	}
	js, errOut, code := run(t, t.Context(), "trace", "info", "--json", "../../fixtures/traces/blkparse-preflush.txt")
	if code != 0 {
		t.Fatalf("trace info: exit %d: %s", code, errOut)
	}
	var info struct {
		Stats struct {
			Ops int64 `json:"ops"`
		} `json:"stats"`
	}
	if err := json.Unmarshal([]byte(js), &info); err != nil || info.Stats.Ops != 8 {
		t.Errorf("blkparse-preflush.txt: %d ops (%v), want 8: six queued requests, one preflush with data", info.Stats.Ops, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
