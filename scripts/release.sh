#!/usr/bin/env bash
# release.sh [OUT] — the release build: stripped (no symbol table or DWARF:
# -ldflags "-s -w"), no build paths (-trimpath), the version from git.
# Prints the binary's size beside the unstripped build's.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-dist/idlewatt}
mkdir -p "$(dirname "$out")"
ver=$(git describe --always --dirty 2>/dev/null || echo unknown)
go build -trimpath -ldflags "-s -w" -o "$out" ./cmd/idlewatt
tmp=$(mktemp)
go build -o "$tmp" ./cmd/idlewatt
printf 'release build %s (%s): %s bytes (%.1f MB); unstripped %s bytes (%.1f MB)\n' "$out" "$ver" \
	"$(stat -c %s "$out")" "$(echo "$(stat -c %s "$out") / 1048576" | bc -l)" \
	"$(stat -c %s "$tmp")" "$(echo "$(stat -c %s "$tmp") / 1048576" | bc -l)"
rm -f "$tmp"
