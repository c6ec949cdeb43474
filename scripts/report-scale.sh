#!/usr/bin/env bash
# Generates a synthetic capture (default 1 hour × 2 drives × 2 rails at 10 kS/s), then times, with
# the page cache warm, each best of RUNS (default 3):
#   cat FILE >/dev/null                the goal's reference: merely reading the file
#   gencap -scan FILE                  decoding every record with capture.Reader, nothing else
#   idlewatt report FILE --out DIR     the report (peak RSS from /usr/bin/time -v)
# and prints the report's speed relative to each (time ratio; ≥ 0.5 against cat is issue 6's goal).
# If cmd/idlewatt does not build (a shared tree mid-edit), `gencap -report` runs the same
# analysis.Analyze + WriteFiles instead, and the output says so.
# Usage: scripts/report-scale.sh [DURATION] [DIR]     (env RUNS=n)
set -euo pipefail
cd "$(dirname "$0")/.."
dur=${1:-1h}
dir=${2:-$(mktemp -d)}
runs=${RUNS:-3}
cap="$dir/scale-$dur.iwc"
go build -o "$dir/gencap" ./analysis/synthcap/gencap
if go build -o "$dir/idlewatt" ./cmd/idlewatt 2>"$dir/build.txt"; then
  report=("$dir/idlewatt" report "$cap" --out "$dir/report")
  how="idlewatt report"
else
  report=("$dir/gencap" -report "$cap" -out "$dir/report")
  how="gencap -report (cmd/idlewatt does not build: $(head -1 "$dir/build.txt"))"
fi
[ -f "$cap" ] || "$dir/gencap" -out "$cap" -duration "$dur" -rate 10000 -drift-ppm 50
size=$(stat -c %s "$cap")
cat "$cap" >/dev/null # warm the page cache
min_of() { printf '%s\n' "$@" | sort -g | head -1; }
times() { local out=(); for _ in $(seq "$runs"); do
  local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>"$dir/time.txt"; t1=$(date +%s.%N)
  out+=("$(echo "$t1 - $t0" | bc -l)"); done; min_of "${out[@]}"; }
cat_s=$(times cat "$cap")
scan_s=$(times "$dir/gencap" -scan "$cap")
rep_s=$(times /usr/bin/time -v "${report[@]}")
rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$dir/time.txt")
printf 'machine: %s cores, %s; load average %s\n' "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf 'capture %s: %.1f MB; best of %d runs; report by %s\n' "$cap" "$(echo "$size / 1000000" | bc -l)" "$runs" "$how"
printf '  cat    %7.3f s  %7.0f MB/s\n' "$cat_s" "$(echo "$size / 1000000 / $cat_s" | bc -l)"
printf '  scan   %7.3f s  %7.0f MB/s\n' "$scan_s" "$(echo "$size / 1000000 / $scan_s" | bc -l)"
printf '  report %7.3f s  %7.0f MB/s  max RSS %d MB\n' "$rep_s" "$(echo "$size / 1000000 / $rep_s" | bc -l)" "$((rss_kb / 1024))"
printf 'speed ratio report/cat %.3f (goal >= 0.5), report/scan %.3f\n' \
  "$(echo "$cat_s / $rep_s" | bc -l)" "$(echo "$scan_s / $rep_s" | bc -l)"
