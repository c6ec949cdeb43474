#!/usr/bin/env bash
# scale-24h.sh [HOURS] [DIR] — the long-capture goals of issue 15: a
# HOURS-long (default 24), 2-drive, 10 kS/s capture in format 2
# (scripts/gen-capture.go), then the overview chart (plot) and the report,
# each with wall time and max RSS, and the Parquet export of the first hour.
# env (for scripts/bench-all.sh): BIN, an idlewatt binary to use instead of
# building one; OVERVIEW_ONLY=1, only the capture and the overview chart. A
# DIR/day.iwcap already there is reused, not generated again.
set -euo pipefail
hours=${1:-24}
dir=${2:-$(mktemp -d /tmp/scale24.XXXX)}
mkdir -p "$dir"
bin=${BIN:-$dir/idlewatt}
[ -n "${BIN:-}" ] || go build -o "$bin" ./cmd/idlewatt
cap="$dir/day.iwcap"
t() { /usr/bin/time -f "$1: %e s wall, %U s user, %S s system, %M kB max RSS" "${@:2}"; }
if [ -f "$cap" ]; then echo "reusing $cap"; else
	t "generate ${hours} h" go run scripts/gen-capture.go -hours "$hours" -drives 2 -rate 10000 -out "$cap"
fi
bytes=$(stat -c %s "$cap")
python3 -c "import sys; b=$bytes; n=$hours*3600*10000*4; print(f'capture: {b} bytes, {b/n:.3f} B per channel-sample')"
t "overview chart (plot)" "$bin" plot "$cap" --out "$dir/day.png" --overwrite
[ -z "${OVERVIEW_ONLY:-}" ] || { echo "files in $dir"; exit 0; }
t "report" "$bin" report "$cap" --out "$dir/report" > /dev/null
go run scripts/gen-capture.go -hours 1 -drives 2 -rate 10000 -out "$dir/hour.iwcap"
t "Parquet export of 1 h" "$bin" export "$dir/hour.iwcap" --parquet "$dir/hour.parquet" > /dev/null
du -sb "$dir/hour.parquet"
echo "files in $dir"
