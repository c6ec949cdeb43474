#!/usr/bin/env bash
# Generates a synthetic capture (default 1 hour × 2 drives × 2 rails at 10 kS/s), then times, with
# the page cache warm, each best of RUNS (default 3):
#   cat FILE >/dev/null                the goal's reference: merely reading the file
#   gencap -scan FILE                  decoding every record with capture.Reader, nothing else
#   gencap -report FILE -out DIR       package analysis alone: Analyze + WriteFiles (report.json/md/csv, charts)
#   idlewatt report FILE --out DIR     the command, which also runs state detection (states.json)
# with peak RSS from /usr/bin/time -v, and prints speeds relative to cat and scan (time ratios;
# ≥ 0.5 against cat is issue 6's goal).
# If cmd/idlewatt does not build (a shared tree mid-edit), `gencap -report` runs the same
# analysis.Analyze + WriteFiles instead, and the output says so.
# Usage: scripts/report-scale.sh [DURATION] [DIR]     (env RUNS=n)
set -euo pipefail
cd "$(dirname "$0")/.."
dur=${1:-1h}
dir=${2:-$(mktemp -d)}
runs=${RUNS:-3}
cap="$dir/scale-$dur.iwcap"
go build -o "$dir/gencap" ./cmd/gencap
cli=""
if go build -o "$dir/idlewatt" ./cmd/idlewatt 2>"$dir/build.txt"; then
  cli=yes
else
  echo "cmd/idlewatt does not build ($(head -1 "$dir/build.txt")): timing package analysis only"
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
ana_s=$(times /usr/bin/time -v "$dir/gencap" -report "$cap" -out "$dir/report" -overwrite)
ana_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$dir/time.txt")
printf 'machine: %s cores, %s; load average %s\n' "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf 'capture %s: %.1f MB; best of %d runs\n' "$cap" "$(echo "$size / 1000000" | bc -l)" "$runs"
line() { # name seconds [rss_kb]
  printf '  %-16s %7.3f s %6.0f MB/s' "$1" "$2" "$(echo "$size / 1000000 / $2" | bc -l)"
  [ -n "${3:-}" ] && printf '  max RSS %d MB  vs cat %.3f  vs scan %.3f' "$(($3 / 1024))" "$(echo "$cat_s / $2" | bc -l)" "$(echo "$scan_s / $2" | bc -l)"
  echo
}
line cat "$cat_s"
line scan "$scan_s"
line "analysis" "$ana_s" "$ana_kb"
if [ -n "$cli" ]; then
  rep_s=$(times /usr/bin/time -v "$dir/idlewatt" report "$cap" --out "$dir/report" --overwrite)
  rep_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$dir/time.txt")
  line "idlewatt report" "$rep_s" "$rep_kb"
fi
