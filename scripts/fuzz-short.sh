#!/usr/bin/env bash
# Runs every Fuzz* target for a few seconds each. Usage: scripts/fuzz-short.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for f in $(grep -hoE '^func (Fuzz[A-Za-z0-9_]+)' "$dir"/*_test.go 2>/dev/null | awk '{print $2}' | sort -u); do
    echo "fuzz $pkg $f ${secs}s"
    go test "$pkg" -run '^$' -fuzz "^${f}\$" -fuzztime "${secs}s" >/dev/null
  done
done
