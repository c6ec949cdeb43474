package testlong

import (
	"os"
	"testing"
)

// Var is the environment variable that turns the long tests on.
const Var = "IDLEWATT_LONG"

// Enabled reports whether Var is set to something other than "" or "0".
func Enabled() bool {
	v := os.Getenv(Var)
	return v != "" && v != "0"
}

// Skip skips t unless the long tests are enabled: the first call of a
// Test…Long function.
func Skip(t testing.TB) {
	t.Helper()
	if !Enabled() {
		t.Skipf("long test: set %s=1 to run it (.ci/run does, once)", Var)
	}
}
