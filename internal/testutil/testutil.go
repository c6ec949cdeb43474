package testutil

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// Update is -update: rewrite the golden files and fixtures the tests
// compare against instead of comparing.
var Update = flag.Bool("update", false, "rewrite the golden files and fixtures the tests compare against")

// Golden compares got with the file at path; with -update it writes got
// there instead (creating the directory). A difference is an Errorf with
// the first differing line, a missing file a Fatalf.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		diff := FirstByteDiff(want, got)
		if isText(want) && isText(got) {
			diff = FirstDiff(string(want), string(got))
		}
		t.Errorf("%s differs from the output (rerun with -update if the change is intended):\n%s", path, diff)
	}
}

// isText reports whether b reads as lines of text: a binary golden file
// (a register dump, a capture) is better shown by its first byte offset.
func isText(b []byte) bool {
	return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0
}

// FirstByteDiff names the first byte offset at which want and got
// differ, with both bytes, and the lengths when they differ.
func FirstByteDiff(want, got []byte) string {
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	var s string
	switch {
	case i < len(want) && i < len(got):
		s = fmt.Sprintf("byte %d: want 0x%02x, got 0x%02x", i, want[i], got[i])
	case i < len(want) || i < len(got):
		s = fmt.Sprintf("byte %d: one side ends", i)
	default:
		return "(same bytes)"
	}
	if len(want) != len(got) {
		s += fmt.Sprintf("; %d bytes wanted, %d got", len(want), len(got))
	}
	return s
}

// FirstDiff names the first line on which want and got differ, with
// both lines; a line missing on one side is shown empty.
func FirstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(wl), len(gl)) {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n  want: %s\n  got:  %s", i+1, w, g)
		}
	}
	return "(same lines)"
}

// WithinRel reports whether got is within rel × |want| of want, with
// 1e-12 of absolute slack so that a want of 0 accepts a got of 0 and
// float rounding at zero.
func WithinRel(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Abs(want)+1e-12
}

// Near fails t (Errorf) unless WithinRel(got, want, rel), naming what.
func Near(t testing.TB, what string, got, want, rel float64) {
	t.Helper()
	if !WithinRel(got, want, rel) {
		t.Errorf("%s = %.9g, want %.9g (±%g relative)", what, got, want, rel)
	}
}

// Extract opens the archive at path and unpacks it with extract into a
// fresh directory of t's, which it returns.
func Extract(t testing.TB, path string, extract func(r io.Reader, dir string) error) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir := t.TempDir()
	if err := extract(f, dir); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return dir
}

// WaitFor polls cond every 10 ms until it holds; after limit it fails t
// (Fatalf) naming what it waited for. limit is a hang guard, never a
// timing check: give it many times what the wait takes on an idle
// machine, for a 2-core machine at load 10 and more.
func WaitFor(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// SeedFiles adds every file matching the globs under dir to f's seed
// corpus (a glob that matches nothing adds nothing: the corpus is a
// start, not a test; directories are passed over).
func SeedFiles(f *testing.F, dir string, globs ...string) {
	f.Helper()
	for _, g := range globs {
		files, err := filepath.Glob(filepath.Join(dir, g))
		if err != nil {
			f.Fatalf("seed glob %q: %v", g, err)
		}
		for _, p := range files {
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				continue
			}
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
}
