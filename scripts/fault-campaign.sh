#!/usr/bin/env bash
# fault-campaign.sh — the hub link's fault campaign (issue 8 item 2); its
# tables go in docs/reliability.md.
#
#   scripts/fault-campaign.sh [SECONDS_PER_LIVE_RUN]     (default 20; ~9 min in all)
#
# Part 0 (issue 17's goals, live, against the drive's truth): `go test -run
#   TestGoalsLive ./meter/hub` streams 4 ports × 2 rails at 10 kS/s from the
#   live emulator on a pty through the driver (protocol v2 and v1) for
#   SECONDS/2 per row with a drive whose every sample is known, checks each
#   accepted sample, and prints samples in the capture, RESENDs, samples
#   recovered, expired and given up, and the bytes per sample set with the
#   share spent on retransmission. Goals asserted: at 1e-3 corrupted bytes
#   ≥ 99.9 % of the samples and 0 corrupted accepted; at 1e-4 corrupted +
#   1e-5 dropped 100 %; a 1 s unplug recovered whole with a ring that
#   holds it, the ring's depth recovered and the rest one exact gap with
#   one that does not.
# Part 0b: `go test -run TestUARTBandwidthLive ./meter/hub` streams 1, 2
#   and 4 ports at 1–10 kS/s from the emulator paced at 921,600 baud in v1
#   16-bit, v2 20-bit and v2 packed 20-bit samples: link bytes per sample
#   set, and which rates each format is admitted at.
# Part 1 (byte level, ground truth): `go test -run TestFaultCampaign
#   ./meter/hub` streams 60 s of 4 ports × 2 rails at 1 kS/s per fault through
#   the decoder, for protocol v1 and v2 (unpaced: no RESEND, framing alone), with a drive whose current changes every sample, and compares
#   every accepted sample with the clean stream's sample at the same index:
#   corrupted bytes 1e-5…1e-2, dropped bytes, truncated frames, stalls that
#   overflow nothing, silent disconnects. Goals asserted: 0 corrupted samples
#   accepted; ≥ 99 % of the samples in intact frames recovered.
# Part 2 (CLI, unpaced): `idlewatt hub emulate --fast` at 1e-3 corrupted bytes
#   → `idlewatt record --port FILE`.
# Part 3 (live, on a pty): `idlewatt hub emulate --ports 4` with each fault →
#   `idlewatt record --rate 10000` for SECONDS → `idlewatt report`: samples
#   lost, CRC errors, reconnects, whether the run completed, and the clock
#   drift the report fitted from marks against the drift injected.
#
# Needs: go, python3. Writes to a temporary directory, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-20}
tmp=$(mktemp -d /tmp/fault-campaign.XXXXXX)
emu_pid=
cleanup() {
	[[ -n $emu_pid ]] && kill "$emu_pid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
go build -o "$tmp/idlewatt" ./cmd/idlewatt
iw=$tmp/idlewatt

echo "# machine: $(uname -srm), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(go version | cut -d' ' -f3)"
echo
echo "## Part 0: issue 17's goals, live on a pty, against the drive's truth"
echo
IDLEWATT_CAMPAIGN=1 IDLEWATT_GOAL_SECONDS=$((secs / 2)) go test -count=1 -timeout 30m -run '^TestGoalsLive$' -v ./meter/hub | grep '^|'

echo
echo "## Part 0b: what each sample format costs on a 921,600-baud UART (paced pty, 0.5 mA noise)"
echo
IDLEWATT_CAMPAIGN=1 IDLEWATT_UART_SECONDS=3 go test -count=1 -timeout 30m -run '^TestUARTBandwidthLive$' -v ./meter/hub | grep '^|'

echo
echo "## Part 1: byte level against ground truth"
echo
IDLEWATT_CAMPAIGN=1 go test -count=1 -run '^TestFaultCampaign$' -v ./meter/hub | grep '^|'

echo
echo "## Part 2: CLI, unpaced (hub emulate --fast → record --port FILE)"
echo
"$iw" hub emulate --fast --ports 4 --rate 10000 --duration 10s --corrupt-rate 1e-3 --seed 3 --out "$tmp/fast.bin"
"$iw" record --port "$tmp/fast.bin" --out "$tmp/fast.cap" --json 2>/dev/null |
	python3 -c 'import json,sys; r=json.load(sys.stdin); print("corrupt 1e-3, 4 ports x 2 rails at 10 kS/s, 10 s: %d channel samples received, %d sample indices lost (all 8 channels each), %d CRC errors, stopped: %s" % (r["samples"], r["samples_lost"], r["crc_errors"], r["stopped"]))'

echo
echo "## Part 3: live on a pty, 4 ports × 2 rails at 10 kS/s, ${secs} s each"
echo
echo "| fault | channel samples | indices lost (by reason) | recovered by RESEND | CRC errors | reconnects | completed | drift injected ppm | drift fitted ppm | alignment residual rms ms | load avg |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
live() { # name drift load emulate-flags...
	local name=$1 drift=$2 load=$3
	shift 3
	"$iw" hub emulate --ports 4 --drift-ppm "$drift" "$@" >"$tmp/emu.out" 2>&1 &
	emu_pid=$!
	for _ in $(seq 300); do [[ -s $tmp/emu.out ]] && break; sleep 0.1; done
	local port
	port=$(head -1 "$tmp/emu.out")
	local burners=()
	if [[ $load == load ]]; then
		for _ in 1 2; do (timeout "$((secs + 2))" sh -c 'while :; do :; done') & burners+=($!); done
	fi
	local rc=0
	"$iw" record --port "$port" --rate 10000 --duration "${secs}s" --give-up 10s --out "$tmp/live.cap" --overwrite --json \
		>"$tmp/rec.json" 2>"$tmp/rec.err" || rc=$?
	[[ $rc == 0 ]] || tail -2 "$tmp/rec.err" >&2
	for b in "${burners[@]}"; do kill "$b" 2>/dev/null || true; done
	kill "$emu_pid" 2>/dev/null || true
	wait "$emu_pid" 2>/dev/null || true
	emu_pid=
	rm -rf "$tmp/live.rep"
	"$iw" report "$tmp/live.cap" --out "$tmp/live.rep" >/dev/null 2>&1 || true
	python3 - "$name" "$drift" "$rc" "$tmp/rec.json" "$tmp/live.rep/report.json" "$(cut -d' ' -f1 /proc/loadavg)" <<'PY'
import json, sys
name, drift, rc, rec, rep, load = sys.argv[1:]
try:
    r = json.load(open(rec))
except Exception:
    r = {}
try:
    a = json.load(open(rep)).get("alignment", {})
except Exception:
    a = {}
lost = r.get("samples_lost", "–")
by = r.get("lost_by_reason") or {}
if by:
    lost = "%s (%s)" % (lost, ", ".join("%s %d" % kv for kv in sorted(by.items())))
print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (name, r.get("samples", "–"), lost,
      r.get("samples_recovered", "–"), r.get("crc_errors", "–"), r.get("disconnects", "–"), "yes" if rc == "0" and r.get("stopped") == "duration" else "no (exit %s)" % rc,
      drift, "%.1f" % a["drift_ppm"] if "drift_ppm" in a else "–",
      "%.3f" % a["residual_rms_ms"] if "residual_rms_ms" in a else "–", load))
PY
}
live "none" 0 idle
live "none, 2 CPU burners" 0 load
live "drift +500 ppm" 500 idle
live "drift −500 ppm" -500 idle
live "corrupt 1e-3" 0 idle --corrupt-rate 1e-3
live "corrupt 1e-3, protocol v1 hub" 0 idle --corrupt-rate 1e-3 --protocol 1
live "drop 1e-4" 0 idle --drop-rate 1e-4
live "corrupt 1e-4 + drop 1e-5" 0 idle --corrupt-rate 1e-4 --drop-rate 1e-5
live "stall 1 s every 5 s, 256 KiB hub buffer" 0 idle --stall-every 5s --stall-for 1s --buffer 262144
live "unplug 1 s every 6 s (re-enumerate)" 0 idle --disconnect-every 6s --disconnect-for 1s --reenumerate
