package testutil

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps what would fail the test.
type recorder struct {
	testing.TB
	errs  []string
	fatal bool
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.fatal = true
	panic(r) // as FailNow's Goexit: stop the helper
}
func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

func run(t *testing.T, f func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	func() {
		defer func() {
			if p := recover(); p != nil && p != any(r) {
				panic(p)
			}
		}()
		f(r)
	}()
	return r
}

func TestFirstDiff(t *testing.T) {
	for _, tc := range []struct{ want, got, diff string }{
		{"a\nb\nc", "a\nB\nc", "line 2:\n  want: b\n  got:  B"},
		{"a\nb", "a\nb\nc", "line 3:\n  want: \n  got:  c"},
		{"a\nb\nc", "a", "line 2:\n  want: b\n  got:  "},
		{"same\n", "same\n", "(same lines)"},
	} {
		if d := FirstDiff(tc.want, tc.got); d != tc.diff {
			t.Errorf("FirstDiff(%q, %q) = %q, want %q", tc.want, tc.got, d, tc.diff)
		}
	}
}

func TestFirstByteDiff(t *testing.T) {
	for _, tc := range []struct {
		want, got []byte
		diff      string
	}{
		{[]byte{0, 1, 2}, []byte{0, 9, 2}, "byte 1: want 0x01, got 0x09"},
		{[]byte{0, 1}, []byte{0, 1, 2}, "byte 2: one side ends; 2 bytes wanted, 3 got"},
		{[]byte{0, 1, 2}, []byte{0, 7}, "byte 1: want 0x01, got 0x07; 3 bytes wanted, 2 got"},
		{[]byte{5}, []byte{5}, "(same bytes)"},
	} {
		if d := FirstByteDiff(tc.want, tc.got); d != tc.diff {
			t.Errorf("FirstByteDiff(%x, %x) = %q, want %q", tc.want, tc.got, d, tc.diff)
		}
	}
}

func TestGoldenBinary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.bin")
	if err := os.WriteFile(path, []byte{0, 1, 2, 3}, 0o644); err != nil {
		t.Fatal(err)
	}
	defer func(u bool) { *Update = u }(*Update)
	*Update = false
	r := run(t, func(tb testing.TB) { Golden(tb, path, []byte{0, 1, 0xff, 3}) })
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], "byte 2: want 0x02, got 0xff") {
		t.Errorf("changed binary output: %q; want one error naming byte 2", r.errs)
	}
}

func TestGolden(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "x.txt")
	defer func(u bool) { *Update = u }(*Update)

	*Update = false
	if r := run(t, func(tb testing.TB) { Golden(tb, path, []byte("one\n")) }); !r.fatal || !strings.Contains(r.errs[0], "-update") {
		t.Errorf("missing golden file: %q, fatal %v; want a fatal error that says -update", r.errs, r.fatal)
	}
	*Update = true
	if r := run(t, func(tb testing.TB) { Golden(tb, path, []byte("one\ntwo\n")) }); len(r.errs) != 0 {
		t.Fatalf("-update: %q", r.errs)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "one\ntwo\n" {
		t.Fatalf("-update wrote %q, %v", b, err)
	}
	*Update = false
	if r := run(t, func(tb testing.TB) { Golden(tb, path, []byte("one\ntwo\n")) }); len(r.errs) != 0 {
		t.Errorf("equal output: %q", r.errs)
	}
	r := run(t, func(tb testing.TB) { Golden(tb, path, []byte("one\n2\n")) })
	if len(r.errs) != 1 || r.fatal || !strings.Contains(r.errs[0], "line 2:\n  want: two\n  got:  2") {
		t.Errorf("changed output: %q (fatal %v); want one error naming line 2", r.errs, r.fatal)
	}
}

func TestNear(t *testing.T) {
	for _, tc := range []struct {
		got, want, rel float64
		ok             bool
	}{
		{1.005, 1, 0.01, true},
		{1.02, 1, 0.01, false},
		{-0.995, -1, 0.01, true},
		{0, 0, 0, true},
		{1e-9, 0, 0.5, false},
	} {
		if ok := WithinRel(tc.got, tc.want, tc.rel); ok != tc.ok {
			t.Errorf("WithinRel(%g, %g, %g) = %v", tc.got, tc.want, tc.rel, ok)
		}
		r := run(t, func(tb testing.TB) { Near(tb, "x", tc.got, tc.want, tc.rel) })
		if (len(r.errs) == 0) != tc.ok {
			t.Errorf("Near(%g, %g, %g): errors %q", tc.got, tc.want, tc.rel, r.errs)
		}
	}
}

func TestExtract(t *testing.T) {
	src := filepath.Join(t.TempDir(), "a.tree")
	if err := os.WriteFile(src, []byte("payload"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := Extract(t, src, func(r io.Reader, dir string) error {
		b, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, "f"), b, 0o644)
	})
	if b, err := os.ReadFile(filepath.Join(dir, "f")); err != nil || string(b) != "payload" {
		t.Errorf("extracted %q, %v", b, err)
	}
	r := run(t, func(tb testing.TB) {
		Extract(tb, src, func(io.Reader, string) error { return errors.New("bad archive") })
	})
	if !r.fatal || !strings.Contains(r.errs[0], "a.tree: bad archive") {
		t.Errorf("a failing extract: %q", r.errs)
	}
}
