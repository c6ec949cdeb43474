package firmware

import (
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var builds sync.Map // make target → error

// build runs `make -C firmware TARGET` once per test binary and returns the
// firmware directory.
func build(t *testing.T, target string) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	v, _ := builds.LoadOrStore(target, sync.OnceValue(func() error {
		out, err := exec.Command("make", "-s", "-C", dir, target).CombinedOutput()
		if err != nil {
			return &buildError{target, err, string(out)}
		}
		return nil
	}))
	if err := v.(func() error)(); err != nil {
		t.Fatal(err)
	}
	return dir
}

type buildError struct {
	target string
	err    error
	out    string
}

func (e *buildError) Error() string { return "make " + e.target + ": " + e.err.Error() + "\n" + e.out }
