#!/usr/bin/env bash
# record-cpu.sh SECONDS ROUNDS BIN... — record's CPU, side by side in one run:
# one emulated hub (4 ports × 2 rails), and each round records SECONDS at
# 10 kS/s with every BIN in turn (alternating, so load changes hit all
# alike), under /usr/bin/time. Prints one row per recording: binary, round,
# user and system CPU, wall, % of a core, samples per channel.
set -euo pipefail
secs=${1:-20}; rounds=${2:-3}; shift 2
dir=${DIR:-$(mktemp -d /tmp/reccpu.XXXX)}; mkdir -p "$dir"
emu_bin=$1
"$emu_bin" hub emulate --ports 4 > "$dir/emu.out" 2> "$dir/emu.err" &
emu=$!
trap 'kill $emu 2>/dev/null || true; wait $emu 2>/dev/null || true' EXIT
for _ in $(seq 50); do [ -s "$dir/emu.out" ] && break; sleep 0.1; done
pty=$(head -n1 "$dir/emu.out")
printf '| binary | round | user s | system s | wall s | %% of a core | samples/channel |\n|---|---|---|---|---|---|---|\n'
for r in $(seq "$rounds"); do
	for b in "$@"; do
		out="$dir/r$r-$(basename "$b").iwcap"
		/usr/bin/time -f '%U %S %e' -o "$dir/t" "$b" record --port "$pty" --rate 10000 --duration "${secs}s" --json --out "$out" > "$dir/rec.json" 2> /dev/null
		read -r u s e < "$dir/t"
		python3 - "$b" "$r" "$u" "$s" "$e" "$dir/rec.json" <<'PY'
import json, sys
b, r, u, s, e, js = sys.argv[1:]
j = json.load(open(js))
print(f"| {b.split('/')[-1]} | {r} | {float(u):.2f} | {float(s):.2f} | {float(e):.1f} | {100*(float(u)+float(s))/float(e):.2f} | {j['samples'] // j['channels']} |")
PY
		[ -n "${KEEP:-}" ] || rm -f "$out"
	done
done
