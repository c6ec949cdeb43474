#!/usr/bin/env bash
# Reproduces the workload figures of docs/benchmarks.md, running fio side by
# side with idlewatt on the same file in the same run:
#   1. 4 KiB random reads, O_DIRECT, 1 GiB file: idlewatt bench vs fio
#      io_uring at QD32 and vs fio psync at QD1, IOPS and CPU time per I/O;
#   2. timing fidelity replaying a ~60 s trace with idle gaps, beside fio
#      read_iolog on the same trace (converted to fio iolog v3);
#   3. peak RSS while streaming a 10-million-op trace.
# Usage: scripts/bench-fio.sh [WORKDIR]   (env: RUNTIME=5 ROUNDS=3 QD_REPLAY=32;
#   RANDREAD_ONLY=1 stops after 1., for scripts/bench-all.sh's QUICK mode: the
#   replays of 2. take three minutes whatever RUNTIME is)
# Needs root only to install fio (apt-get) when it is missing. Not used by CI.
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${1:-/var/tmp/idlewatt-bench}
RUNTIME=${RUNTIME:-5}
ROUNDS=${ROUNDS:-3}
QD_REPLAY=${QD_REPLAY:-32}
mkdir -p "$DIR"
FILE=$DIR/bench.img
IW=$DIR/idlewatt
OUT=$DIR/results.md

if ! command -v fio >/dev/null; then
  apt-get update && apt-get install -y fio
fi
go build -o "$IW" ./cmd/idlewatt

py() { python3 -c "$1"; }
fio_json() { fio --output-format=json "$@" 2>/dev/null; }

{
  echo "## Machine"
  echo
  echo "- nproc: $(nproc); CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
  echo "- kernel: $(uname -r); $(fio --version); $(go version | cut -d' ' -f3)"
  echo "- filesystem of $DIR: $(df -T "$DIR" | awk 'NR==2{print $2}'); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
} >"$OUT"

# Lay out the 1 GiB file once (random data, so reads hit allocated blocks).
"$IW" bench --target "$FILE" --size 1GiB --pattern randread4k --qd 1 --duration 100ms >/dev/null 2>&1

echo "## 4 KiB random read, O_DIRECT, 1 GiB file, ${RUNTIME}s per run" >>"$OUT"
echo >>"$OUT"
echo "| round | QD | fio engine | fio IOPS | idlewatt IOPS | ratio | fio CPU µs/IO | idlewatt CPU µs/IO |" >>"$OUT"
echo "|---|---|---|---|---|---|---|---|" >>"$OUT"
for round in $(seq "$ROUNDS"); do
  for spec in "32 io_uring" "1 psync"; do
    set -- $spec
    qd=$1 eng=$2
    fio_json --name=r --filename="$FILE" --rw=randread --bs=4k --direct=1 --ioengine="$eng" \
      --iodepth="$qd" --runtime="$RUNTIME" --time_based --size=1g --norandommap --randrepeat=0 >"$DIR/fio.json"
    "$IW" bench --target "$FILE" --pattern randread4k --qd "$qd" --duration "${RUNTIME}s" --seed "$round" --json >"$DIR/iw.json" 2>/dev/null
    py "
import json
f=json.load(open('$DIR/fio.json'))['jobs'][0]; i=json.load(open('$DIR/iw.json'))
fio_iops=f['read']['iops']; ios=f['read']['total_ios']; rt=f['read']['runtime']/1e3
fio_cpu=(f['usr_cpu']+f['sys_cpu'])/100*rt/ios*1e6
print('| $round | $qd | $eng | %.0f | %.0f | %.3f | %.1f | %.1f |' % (fio_iops, i['iops'], i['iops']/fio_iops, fio_cpu, i['cpu_per_op_us']))
" >>"$OUT"
  done
done
echo >>"$OUT"
if [ -n "${RANDREAD_ONLY:-}" ]; then
  echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT"
  cat "$OUT"
  exit 0
fi

echo "## Timing fidelity: media-center trace (~60 s, idle gaps), QD $QD_REPLAY, recorded timing" >>"$OUT"
echo >>"$OUT"
"$IW" trace gen pcmark7 --app media-center --span 1GiB --seed 1 --overwrite --out "$DIR/t60.trace" 2>/dev/null
"$IW" trace convert "$DIR/t60.trace" --to fio3 --redirect "$FILE" --overwrite --out "$DIR/t60.fio3" 2>/dev/null
"$IW" replay --trace "$DIR/t60.trace" --target "$FILE" --qd "$QD_REPLAY" --json --overwrite --events "$DIR/t60.events.csv" \
  >"$DIR/t60.idlewatt.json" 2>/dev/null
"$IW" replay --trace "$DIR/t60.trace" --target "$FILE" --qd "$QD_REPLAY" --json --rt-priority 10 \
  >"$DIR/t60.idlewatt-rt.json" 2>/dev/null
rm -f "$DIR"/fiolat_*.log
fio --name=replay --read_iolog="$DIR/t60.fio3" --ioengine=io_uring --direct=1 --iodepth="$QD_REPLAY" \
  --write_lat_log="$DIR/fiolat" --log_offset=1 --output-format=json >"$DIR/t60.fio.json" 2>/dev/null
py "
import json, glob
i=json.load(open('$DIR/t60.idlewatt.json'))
irt=json.load(open('$DIR/t60.idlewatt-rt.json'))
trace=[]
for line in open('$DIR/t60.trace'):
    if line.startswith('#'): continue
    trace.append(float(line.split()[0]))
t0=trace[0]; trace=[t-t0 for t in trace]
# fio's latency log: completion time (ms since job start), latency (ns), dir, bs, offset.
iss=[]
for f in glob.glob('$DIR/fiolat_lat.*.log'):
    for line in open(f):
        p=[x.strip() for x in line.split(',')]
        iss.append(int(p[0])/1e3 - int(p[1])/1e9)
iss.sort()
n=min(len(iss),len(trace))
late=sorted(max(0.0,(iss[k]-iss[0])-trace[k]) for k in range(n))
fmean=sum(late)/n*1e3; fp99=late[int(0.99*(n-1))]*1e3; fmax=late[-1]*1e3
fdrift=((iss[n-1]-iss[0])-trace[n-1])*1e3
print('| tool | ops | mean lateness ms | p99 lateness ms | max lateness ms | drift at last op ms | drift % of trace |')
print('|---|---|---|---|---|---|---|')
print('| idlewatt replay | %d | %.3f | %.3f | %.3f | %.3f | %.4f |' % (i['ops'], i['lateness_mean_ms'], i['lateness_p99_ms'], i['lateness_max_ms'], i['drift_ms'], 100*i['drift_fraction']))
print('| idlewatt replay --rt-priority 10 | %d | %.3f | %.3f | %.3f | %.3f | %.4f |' % (irt['ops'], irt['lateness_mean_ms'], irt['lateness_p99_ms'], irt['lateness_max_ms'], irt['drift_ms'], 100*irt['drift_fraction']))
print('| fio read_iolog (v3) | %d | %.3f | %.3f | %.3f | %.3f | %.4f |' % (n, fmean, fp99, fmax, fdrift, 100*fdrift/1e3/trace[n-1]))
print()
print('Trace duration %.3f s. fio lateness is derived from its latency log (completion ms − latency), so it has 1 ms resolution.' % trace[-1])
" >>"$OUT"
echo >>"$OUT"

echo "## Peak RSS streaming a 10,000,000-op trace" >>"$OUT"
echo >>"$OUT"
"$IW" trace gen iometer --pattern randread4k --ops 10000000 --span 1GiB --overwrite --out "$DIR/big.trace" 2>/dev/null
rss() { /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F: '/Maximum resident/{gsub(/ /,"",$2); print $2}'; }
echo "| command | peak RSS (MB) |" >>"$OUT"
echo "|---|---|" >>"$OUT"
echo "| trace info (10M ops, $(du -m "$DIR/big.trace" | cut -f1) MB file) | $(( $(rss "$IW" trace info "$DIR/big.trace") / 1024 )) |" >>"$OUT"
echo "| trace convert --to fio3 | $(( $(rss "$IW" trace convert "$DIR/big.trace" --to fio3 --overwrite --out "$DIR/big.fio3") / 1024 )) |" >>"$OUT"
echo "| replay --timing afap --qd 32 (pre-pass over 10M ops, then 20 s of replay) | $(( $(rss "$IW" replay --trace "$DIR/big.trace" --target "$FILE" --timing afap --qd 32 --duration 20s) / 1024 )) |" >>"$OUT"
rm -f "$DIR/big.trace" "$DIR/big.fio3"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT"
cat "$OUT"
