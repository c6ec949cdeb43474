#!/usr/bin/env bash
# Fuzz campaign (issue 8 item 5): runs every Fuzz* target in the repo for
# DURATION each (default 10m; CI runs scripts/fuzz-short.sh instead) and
# records the outcome of each in OUTDIR/results.csv:
#   package,target,fuzztime,result,execs,new_interesting,elapsed_s,crasher
# A crashing input is kept where `go test` puts it
# (PKG/testdata/fuzz/TARGET/…) and named in the crasher column; rerun it with
# `go test -run 'TARGET/NAME' PKG`.
#
# Usage: scripts/fuzz.sh [DURATION] [OUTDIR]        e.g. scripts/fuzz.sh 60s /tmp/fuzz
# Environment: FUZZ_PARALLEL (fuzzing workers per target, default 1 — the
# machine is shared), FUZZ_MATCH (regexp: only targets whose pkg.Target matches),
# FUZZ_MINIMIZE (-fuzzminimizetime, default 5s: at Go's default of 60 s a
# worker spends most of a short run minimising each new interesting input
# and reports "0/sec" meanwhile — golang/go#51484).
# Exit 1 if any target failed.
set -uo pipefail
cd "$(dirname "$0")/.."
dur=${1:-10m}
out=${2:-fuzz-$(date +%Y%m%d-%H%M%S)}
par=${FUZZ_PARALLEL:-1}
minimize=${FUZZ_MINIMIZE:-5s}
match=${FUZZ_MATCH:-.}
mkdir -p "$out"
res=$out/results.csv
echo "package,target,fuzztime,result,execs,new_interesting,elapsed_s,crasher" >"$res"
{
  echo "fuzz campaign: $dur per target, $par worker(s), minimize ≤ $minimize, $(date -u +%FT%TZ)"
  echo "machine: $(nproc) cores, $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo), $(go version)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null)"
} | tee "$out/campaign.txt"
fail=0
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for f in $(grep -hoE '^func (Fuzz[A-Za-z0-9_]+)' "$dir"/*_test.go 2>/dev/null | awk '{print $2}' | sort -u); do
    echo "$pkg.$f" | grep -qE "$match" || continue
    log=$out/$(echo "${pkg#github.com/idlewatt/idlewatt/}" | tr / _)-$f.log
    start=$(date +%s)
    go test "$pkg" -run '^$' -fuzz "^${f}\$" -fuzztime "$dur" -fuzzminimizetime "$minimize" -parallel "$par" >"$log" 2>&1
    rc=$?
    el=$(($(date +%s) - start))
    last=$(grep -E '^fuzz: elapsed' "$log" | tail -1)
    execs=$(sed -nE 's/.*execs: ([0-9]+).*/\1/p' <<<"$last")
    newi=$(sed -nE 's/.*new interesting: ([0-9]+).*/\1/p' <<<"$last")
    crasher=$(grep -oE 'testdata/fuzz/[A-Za-z0-9_]+/[0-9a-f]+' "$log" | head -1)
    result=pass
    if [ $rc -ne 0 ]; then
      result=FAIL
      fail=1
    fi
    echo "$pkg,$f,$dur,$result,${execs:-0},${newi:-0},$el,$crasher" | tee -a "$res"
  done
done
targets=$(($(wc -l <"$res") - 1))
failed=$(grep -c ',FAIL,' "$res")
echo "fuzz campaign: $targets targets, $failed failed; results in $res" | tee -a "$out/campaign.txt"
exit $fail
