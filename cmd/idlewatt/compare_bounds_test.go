package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompareBoundsDrives: more drives than one table and chart can hold is
// bad input, refused before anything is drawn (a 25,000-drive report.json
// drew for 90 s, ignoring SIGTERM).
func TestCompareBoundsDrives(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cmp")
	args := []string{"compare", "--out", out}
	for range maxCompareDrives/2 + 1 { // the fixture holds 2 drives
		args = append(args, "../../fixtures/reports/small/report.json")
	}
	_, e, code := run(t, context.Background(), args...)
	if code != 2 || !strings.Contains(e, "at most 500 fit one table and chart") {
		t.Fatalf("exit %d: %s", code, e)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("--out created for a refused comparison: %v", err)
	}
	if _, e, code := run(t, context.Background(), "compare", "--out", out, "../../fixtures/reports/small/report.json"); code != 0 {
		t.Fatalf("one report: exit %d: %s", code, e)
	}
}
