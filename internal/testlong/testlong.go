package testlong

import (
	"os"
	"strconv"
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

// CoverageVar sets how many drives per noise family the noise-coverage
// tests of analysis and analysis/judge draw: the long runs
// docs/analysis.md reports.
const CoverageVar = "IDLEWATT_COVERAGE_DRIVES"

// CoverageDrives is how many drives per noise family a coverage test
// draws: def, short under -short, or CoverageVar when it holds a positive
// number.
func CoverageDrives(def, short int) int {
	if n, err := strconv.Atoi(os.Getenv(CoverageVar)); err == nil && n > 0 {
		return n
	}
	if testing.Short() {
		return short
	}
	return def
}
