#!/usr/bin/env bash
# Runs every Fuzz* target for a few seconds each (CI). The long campaign is scripts/fuzz.sh.
# Usage: scripts/fuzz-short.sh [SECONDS]
#
# A target that finds a failing input fails the run (Go saves the input under
# the package's testdata/fuzz/, which the output names). A run that dies without
# an input — "fuzzing process hung or terminated unexpectedly", which a loaded
# 2-core machine can cause, or "context deadline exceeded" as -fuzztime expires
# (a go1.26 coordinator race, golang/go#75804, fixed in go1.27; 1–2 of the 27
# targets per clean-clone CI run here) — is
# shown and retried, up to 3 attempts in all; a third such death fails.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
fail=0
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for f in $(grep -hoE '^func (Fuzz[A-Za-z0-9_]+)' "$dir"/*_test.go 2>/dev/null | awk '{print $2}' | sort -u); do
    for attempt in 1 2 3; do
      echo "fuzz $pkg $f ${secs}s (attempt $attempt)"
      if go test "$pkg" -run '^$' -fuzz "^${f}\$" -fuzztime "${secs}s" -fuzzminimizetime 5s >"$log" 2>&1; then
        break
      fi
      cat "$log"
      if grep -q 'testdata/fuzz' "$log" || [ "$attempt" = 3 ]; then
        echo "FAIL: $pkg $f"
        fail=1
        break
      fi
      echo "retrying $f: the fuzzing process died without a failing input"
    done
  done
done
exit $fail
