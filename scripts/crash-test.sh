#!/usr/bin/env bash
# Crash safety (issue 8 item 4). Two parts:
#
#  1. The Go crash tests (cmd/idlewatt/*_crash_test.go), with
#     IDLEWATT_CRASH_RUNS kill -9 runs of `record` to measure how much a
#     kill -9 loses (kill time − end of the last stored sample, on the host
#     clock via the capture's clock marks). They also cover SIGTERM of
#     record, SIGTERM and kill -9 of measure on a lab-like rig whose sysfs
#     is a simulated tree (the ALPM policy restore is checked there), and a
#     record onto a 2 MiB tmpfs (disk full; root only).
#  2. The emulator demo set-up end to end from the shell: `measure --config
#     fixtures/configs/emulator.yaml` stopped with SIGTERM and with kill -9
#     at a few points, then `idlewatt report` on each capture.
#
# Usage: scripts/crash-test.sh [OUTDIR]   (default crash-<time>)
# Environment: CRASH_RUNS (kill -9 runs of record, default 10),
#   CRASH_AT (seconds into measure to signal, default "3 10 20").
# Prints a summary (also OUTDIR/crash.txt); exit 1 if a check failed.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-crash-$(date +%Y%m%d-%H%M%S)}
runs=${CRASH_RUNS:-10}
at=${CRASH_AT:-3 10 20}
mkdir -p "$out"
out=$(cd "$out" && pwd)
fail=0
sum=$out/crash.txt
: >"$sum"
say() { echo "$*" | tee -a "$sum"; }

say "machine: $(nproc) cores, $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo); $(date -u +%FT%TZ); commit $(git rev-parse --short HEAD)"

# Part 1: the Go tests.
IDLEWATT_CRASH_RUNS=$runs go test -count=1 -v -timeout 20m \
  -run 'TestRecordKill9KeepsCaptureToLastChunk|TestRecordSIGTERMClosesCapture|TestRecordDiskFull|TestMeasureSIGTERMRestoresPolicy|TestMeasureKill9KeepsCapture' \
  ./cmd/idlewatt >"$out/go-test.log" 2>&1
rc=$?
grep -E '^(--- |ok|FAIL)' "$out/go-test.log" | tee -a "$sum"
[ $rc -eq 0 ] || { say "FAIL: go crash tests (see $out/go-test.log)"; fail=1; }
grep -oE 'kill -9 run [0-9]+: .*' "$out/go-test.log" >"$out/kill9.txt"
awk '{for (i=1;i<=NF;i++) if ($i=="lost") print $(i-2)}' "$out/kill9.txt" | sort -n |
  awk '{a[NR]=$1; s+=$1} END {if (NR) printf "kill -9 of record (4 ports x 2 rails x 10 kS/s): %d runs, data lost min %.3f s, median %.3f s, max %.3f s (goal <= 1 s)\n", NR, a[1], a[int((NR+1)/2)], a[NR], s/NR}' | tee -a "$sum"
grep -oE 'disk full: .*' "$out/go-test.log" | head -1 | tee -a "$sum"
grep -oE 'measure after terminated: .*' "$out/go-test.log" | head -1 | tee -a "$sum"

# Part 2: the demo set-up, from the shell.
bin=$out/idlewatt
go build -o "$bin" ./cmd/idlewatt || exit 1
for sig in TERM KILL; do
  for t in $at; do
    d=$out/measure-$sig-$t
    rm -rf "$d"
    "$bin" measure --config fixtures/configs/emulator.yaml --out "$d" --quiet >"$d.out" 2>"$d.err" &
    pid=$!
    sleep "$t"
    kill -"$sig" "$pid" 2>/dev/null
    wait "$pid"
    rc=$?
    msg=$(grep '^idlewatt:' "$d.err" | tail -1)
    if [ -z "$msg" ] && [ $rc -gt 128 ]; then
      how="killed by signal $((rc - 128))"
    else
      how="exit $rc"
    fi
    rep=$("$bin" report "$d/capture.iwcap" --out "$d/after" 2>&1)
    rrc=$?
    note=$(grep -o 'capture incomplete[^;]*' <<<"$rep" | head -1 | cut -c1-90)
    say "measure SIG$sig at ${t}s: $how; ${msg:-no message}; report exit $rrc${note:+; $note}"
    [ $rrc -eq 0 ] || { say "FAIL: report on $d/capture.iwcap: $rep"; fail=1; }
    if [ "$sig" = TERM ] && { [ $rc -eq 0 ] || [ -z "$msg" ]; }; then
      say "FAIL: measure survived SIGTERM but did not exit non-zero with a message"
      fail=1
    fi
  done
done
[ $fail -eq 0 ] && say "PASS" || say "FAIL"
exit $fail
