#!/usr/bin/env bash
# Soak test (issue 8 item 3): record the emulated hub at full rate — 4 ports ×
# 2 rails × 10 kS/s — with periodic faults (corrupted bytes and output stalls)
# for a long time, sampling the recorder's RSS and CPU every INTERVAL seconds
# from /proc, then check the capture is intact: `idlewatt report` reads it,
# it is complete, and samples + recorded gaps account for the whole duration.
#
# Usage: scripts/soak.sh [DURATION_S] [OUTDIR]      (default 3600 s, soak-<time>)
# Environment: SOAK_INTERVAL (10 s), SOAK_CORRUPT (1e-4 per byte),
#   SOAK_STALL_EVERY (5m), SOAK_STALL_FOR (1500ms), SOAK_PORTS (4), SOAK_RATE (10000).
#   SOAK_KEEP=1 keeps the capture (about 1.15 GB per hour at the defaults).
#   SOAK_VERIFY=1 skips the recording and re-checks a kept OUTDIR.
# Output in OUTDIR: usage.csv (t_s, rss_kb, hwm_kb, threads, cpu_pct over the
# interval), record.json, report.json, soak.txt (the verdict). Exit 1 if the
# capture is not intact or memory grew by more than 20 % from the first sample
# taken after warm-up (60 s) to the last.
set -euo pipefail
cd "$(dirname "$0")/.."
dur=${1:-3600}
out=${2:-soak-$(date +%Y%m%d-%H%M%S)}
interval=${SOAK_INTERVAL:-10}
corrupt=${SOAK_CORRUPT:-1e-4}
stall_every=${SOAK_STALL_EVERY:-5m}
stall_for=${SOAK_STALL_FOR:-1500ms}
ports=${SOAK_PORTS:-4}
rate=${SOAK_RATE:-10000}
mkdir -p "$out"
bin=$out/idlewatt
go build -o "$bin" ./cmd/idlewatt
if [ "${SOAK_VERIFY:-0}" != 1 ]; then

"$bin" hub emulate --ports "$ports" --corrupt-rate "$corrupt" --stall-every "$stall_every" --stall-for "$stall_for" \
  >"$out/emu.out" 2>"$out/emu.err" &
emu=$!
rec=
cleanup() {
  [ -n "$rec" ] && kill "$rec" 2>/dev/null || true
  kill "$emu" 2>/dev/null || true
}
trap cleanup EXIT
for _ in $(seq 100); do [ -s "$out/emu.out" ] && break; sleep 0.1; done
pty=$(head -1 "$out/emu.out")
[ -e "$pty" ] || { echo "soak: emulator gave no pty ($(cat "$out/emu.err"))" >&2; exit 1; }

"$bin" record --meter hub --port "$pty" --rate "$rate" --duration "${dur}s" --out "$out/soak.iwcap" --json \
  >"$out/record.json" 2>"$out/record.err" &
rec=$!
clk=$(getconf CLK_TCK)
echo "t_s,rss_kb,hwm_kb,threads,cpu_pct" >"$out/usage.csv"
start=$(date +%s.%N)
prev_ticks=
prev_t=
while kill -0 "$rec" 2>/dev/null; do
  t=$(date +%s.%N)
  st=$(cat "/proc/$rec/stat" 2>/dev/null) || break
  status=$(cat "/proc/$rec/status" 2>/dev/null) || break
  # Fields after the ")" that ends comm: utime is the 12th, stime the 13th.
  read -r utime stime <<<"$(echo "${st##*) }" | awk '{print $12, $13}')"
  rss=$(awk '/^VmRSS:/{print $2}' <<<"$status")
  hwm=$(awk '/^VmHWM:/{print $2}' <<<"$status")
  thr=$(awk '/^Threads:/{print $2}' <<<"$status")
  ticks=$((utime + stime))
  cpu=
  if [ -n "$prev_ticks" ]; then
    cpu=$(awk -v d=$((ticks - prev_ticks)) -v c="$clk" -v a="$prev_t" -v b="$t" 'BEGIN{printf "%.1f", 100*d/c/(b-a)}')
  fi
  awk -v a="$start" -v b="$t" -v r="$rss" -v h="$hwm" -v n="$thr" -v c="$cpu" 'BEGIN{printf "%.0f,%s,%s,%s,%s\n", b-a, r, h, n, c}' >>"$out/usage.csv"
  prev_ticks=$ticks
  prev_t=$t
  sleep "$interval"
done
set +e
wait "$rec"
rc=$?
set -e
rec=
kill "$emu" 2>/dev/null || true
else
  rc=0
  [ "$(jq -r .stopped "$out/record.json")" = duration ] || rc=1
fi

verdict=0
{
  echo "soak: $dur s requested, $ports ports × 2 rails at $rate Hz, corrupt $corrupt/byte, stall $stall_for every $stall_every"
  echo "machine: $(nproc) cores, $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)"
  echo "record exit $rc: $(tr -d '\n ' <"$out/record.json")"
  if [ "$rc" -ne 0 ]; then
    echo "FAIL: record exited $rc: $(tail -3 "$out/record.err")"
    verdict=1
  fi
  if "$bin" report "$out/soak.iwcap" --out "$out/report" --overwrite --json >"$out/report.json" 2>"$out/report.err"; then
    complete=$(jq -r '.capture.complete' "$out/report.json")
    echo "report: complete=$complete, notes: $(jq -c '.notes' "$out/report.json")"
    [ "$complete" = true ] || { echo "FAIL: capture not complete"; verdict=1; }
  else
    echo "FAIL: report: $(cat "$out/report.err")"
    verdict=1
  fi
  # Every drive's samples plus the samples its gaps say are missing must
  # cover the capture's span exactly (to a sample), and the span must be
  # the requested duration (to 0.5 s: the first and last blocks). The
  # record process runs longer than that (handshake, closing the capture).
  el=$(jq -r '.elapsed_s' "$out/record.json")
  jq -r --argjson el "$el" '.capture as $c | .drives[] | "\(.name|gsub(" ";"_")) \(.samples.count) \(.samples.dropped) \(.samples.gaps) \($c.rate_hz) \($c.duration_s) \($el)"' "$out/report.json" |
    awk -v dur="$dur" '{cov=($2+$3)/$5; printf "accounting %s: %d samples + %d missing in %d gaps = %.4f s; capture spans %.4f s of %d s requested; record process ran %.3f s\n", $1, $2, $3, $4, cov, $6, dur, $7;
      d=cov-$6; if (d<0) d=-d; e=cov-dur; if (e<0) e=-e; if (d > 2/$5 || e > 0.5) bad=1} END {exit bad}' ||
    { echo "FAIL: samples + gaps do not cover the run"; verdict=1; }
  awk -F, -v warm=60 'NR>1 && $1>=warm && first=="" {first=$2; ft=$1} NR>1 {last=$2; lt=$1; if ($5!="") {n++; s+=$5; ss+=$5*$5; if ($5>mx) mx=$5}}
    END {if (first=="") {first=last; ft=lt}; m=s/n; sd=sqrt(ss/n-m*m);
      printf "memory: RSS %d kB at %d s, %d kB at %d s (%+.1f %%)\ncpu: mean %.1f %%, sd %.1f, max %.1f %% over %d intervals\n", first, ft, last, lt, 100*(last-first)/first, m, sd, mx, n;
      if (last > first*1.2) exit 1}' "$out/usage.csv" || { echo "FAIL: memory grew more than 20 %"; verdict=1; }
  [ "$verdict" -eq 0 ] && echo "PASS"
} | tee "$out/soak.txt"
grep -q '^PASS$' "$out/soak.txt" || exit 1
[ "${SOAK_KEEP:-0}" = 1 ] || rm -f "$out/soak.iwcap"
