#!/bin/bash
# The test suite under load (docs/reliability.md, "The test suite at load ≥ 10"):
# 8 busy loops at nice 10 beside `go test -count=1 ./...`, N runs (default 5) on a
# fresh clone of REV (default HEAD) of this repository. Prints rc, duration and
# load average of each run; a failing run's FAIL lines. Logs in $OUT (default
# /tmp/load-series).
set -u
N=${N:-5}
REPO=$(cd "$(dirname "$0")/.." && pwd)
REV=${REV:-$(git -C "$REPO" rev-parse HEAD)}
OUT=${OUT:-/tmp/load-series}
D=$OUT/clone
mkdir -p "$OUT"
rm -rf "$D" && git clone -q "$REPO" "$D" && cd "$D" && git checkout -q "$REV"
echo "commit $(git rev-parse --short HEAD), $(nproc) cores, $(go version)"
pids=()
for _ in $(seq 8); do nice -n 10 bash -c 'while :; do :; done' & pids+=($!); done
trap 'kill "${pids[@]}" 2>/dev/null' EXIT
sleep 20
for r in $(seq "$N"); do
  s=$(date +%s); l0=$(cut -d' ' -f1 /proc/loadavg)
  go test -count=1 ./... > "$OUT/run$r.log" 2>&1; rc=$?
  e=$(date +%s); l1=$(cut -d' ' -f1 /proc/loadavg)
  echo "run $r rc=$rc dur=$((e-s))s load_start=$l0 load_end=$l1"
  [ $rc -ne 0 ] && grep -E '^(--- FAIL|FAIL|panic)' "$OUT/run$r.log" | head
done
