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

// TestCore runs the firmware core's C unit tests (make test: every fixture
// of docs/hub-protocol.md the core can produce, the NAK reasons, the
// parser's resynchronisation, RESEND from the ring, the INA228 driver
// against a register model) and a short fuzz run of the command parser,
// both under AddressSanitizer and UBSan.
func TestCore(t *testing.T) {
	dir := build(t, "test")
	out, err := exec.Command(filepath.Join(dir, "build", "host", "test_core"), filepath.Join(dir, "..", "fixtures", "hub")).CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatal(err)
	}
	build(t, "build/host/fuzz")
	out, err = exec.Command(filepath.Join(dir, "build", "host", "fuzz"), "20000").CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatal(err)
	}
}
