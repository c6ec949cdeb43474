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
		t.Errorf("%s differs from the output (rerun with -update if the change is intended):\n%s", path, FirstDiff(string(want), string(got)))
	}
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
