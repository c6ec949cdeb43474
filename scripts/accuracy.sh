#!/usr/bin/env bash
# The long truth-recovery campaign (docs/analysis.md, "Truth-recovery campaign"): builds idlewatt,
# prints the commit and machine, runs `idlewatt accuracy` and keeps its exit status (0 all goals
# met, 1 a goal missed, 2 bad input or no pty).
# Usage: scripts/accuracy.sh [DRIVES=200] [SEED=1] [OUT=accuracy-SEED-DRIVES] [PARALLEL=2]
set -euo pipefail
cd "$(dirname "$0")/.."
drives=${1:-200}
seed=${2:-1}
out=${3:-accuracy-$seed-$drives}
par=${4:-2}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/idlewatt" ./cmd/idlewatt
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet 2>/dev/null || commit="$commit+dirty"
cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//')
echo "commit $commit; $(nproc) CPUs (${cpu:-unknown}); load average $(cut -d' ' -f1-3 /proc/loadavg); $(go version)"
start=$(date +%s)
rc=0
"$bin/idlewatt" accuracy --drives "$drives" --seed "$seed" --parallel "$par" --out "$out" || rc=$?
echo "wall time $(( $(date +%s) - start )) s; exit $rc; table in $out/accuracy.md"
exit $rc
