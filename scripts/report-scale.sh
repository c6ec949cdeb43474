#!/usr/bin/env bash
# Generates a synthetic capture (default 1 hour × 2 drives × 2 rails at 10 kS/s), then measures
# `idlewatt report` on it: peak RSS (/usr/bin/time -v) and wall time against `cat FILE >/dev/null`.
# Usage: scripts/report-scale.sh [DURATION] [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
dur=${1:-1h}
dir=${2:-$(mktemp -d)}
cap="$dir/scale-$dur.iwc"
go build -o "$dir/idlewatt" ./cmd/idlewatt
go build -o "$dir/gencap" ./analysis/synthcap/gencap
[ -f "$cap" ] || "$dir/gencap" -out "$cap" -duration "$dur" -rate 10000 -drift-ppm 50
ls -l "$cap"
cat "$cap" >/dev/null # warm the page cache
t0=$(date +%s.%N); cat "$cap" >/dev/null; t1=$(date +%s.%N)
/usr/bin/time -v "$dir/idlewatt" report "$cap" --out "$dir/report" 2>"$dir/time.txt" >/dev/null
t2=$(date +%s.%N)
read_s=$(echo "$t1 - $t0" | bc -l)
rep_s=$(echo "$t2 - $t1" | bc -l)
rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$dir/time.txt")
printf 'capture %s: cat %.3f s, report %.3f s, speed ratio %.4f, max RSS %d MB\n' \
  "$cap" "$read_s" "$rep_s" "$(echo "$read_s / $rep_s" | bc -l)" "$((rss_kb / 1024))"
