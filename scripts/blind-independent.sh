#!/usr/bin/env bash
# Blind check against an independent generator (docs/analysis.md, "An independent generator"):
# builds idlewatt, writes N drives with scripts/blind-independent.py (PPK2 CSV exports and their
# truths), runs `idlewatt report` on each as a user of a Power Profiler would, and prints the
# comparison. Each drive is also written as a capture with the DevSlp cycles' phases a measuring
# rig records (the export cannot hold them), reported too: its table is the DevSlp estimators'.
# Usage: scripts/blind-independent.sh N SEED [OUTDIR=blind-SEED-N]
# KEEP=1 keeps the CSV and capture files (they are removed once reported: 10–100 MB each);
# ENTRY_JITTER=F sets each cycle's entry to the drive's × (1 ± F) (default 0.1; 0: one latency).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:?usage: blind-independent.sh N SEED [OUTDIR]}
seed=${2:?usage: blind-independent.sh N SEED [OUTDIR]}
out=${3:-blind-$seed-$n}
gen=scripts/blind-independent.py
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
nice -n 19 go build -o "$bin/idlewatt" ./cmd/idlewatt
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet 2>/dev/null || commit="$commit+dirty"
cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//')
mkdir -p "$out"
{
	echo "commit $commit; $(date -u +%Y-%m-%dT%H:%MZ); $(nproc) CPUs (${cpu:-unknown}); load average $(cut -d' ' -f1-3 /proc/loadavg); $(go version); $(python3 --version)"
} | tee "$out/machine.txt"
start=$(date +%s)
for ((i = 0; i < n; i++)); do
	b="$out/drive-$i"
	if [[ -f $b.report/report.json && -f $b.cap.report/report.json ]]; then
		continue # done in an earlier run of the same OUTDIR
	fi
	nice -n 19 python3 "$gen" gen --seed "$seed" --index "$i" --out "$out" --capture --entry-jitter "${ENTRY_JITTER:-0.1}" >/dev/null
	rc=0
	nice -n 19 "$bin/idlewatt" report "$b.csv" --voltage 5 --devslp-line D0 --marker-line D1 \
		--out "$b.report" --overwrite --no-html >"$b.report.log" 2>&1 || rc=$?
	[[ $rc == 0 ]] || echo "drive $i: report of the CSV exit $rc (see $b.report.log)" >&2
	rc=0
	nice -n 19 "$bin/idlewatt" report "$b.iwcap" --out "$b.cap.report" --overwrite --no-html >"$b.cap.report.log" 2>&1 || rc=$?
	[[ $rc == 0 ]] || echo "drive $i: report of the capture exit $rc (see $b.cap.report.log)" >&2
	[[ ${KEEP:-0} == 1 ]] || rm -f "$b.csv" "$b.iwcap"
	echo "drive $((i + 1))/$n done, $(($(date +%s) - start)) s" >&2
done
echo "wall time $(($(date +%s) - start)) s"
echo
echo "## PPK2 CSV export (idlewatt report FILE.csv --voltage 5 --devslp-line D0 --marker-line D1)"
echo
nice -n 19 python3 "$gen" score "$out" --report report --md "$out/blind-csv.md"
echo
echo "## The same samples as a capture with the DevSlp cycles' phases"
echo
nice -n 19 python3 "$gen" score "$out" --report cap.report --md "$out/blind-capture.md"
