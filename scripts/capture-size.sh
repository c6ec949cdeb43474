#!/usr/bin/env bash
# capture-size.sh [SECONDS] [DIR] — capture format 1 vs 2, side by side in one
# run: bytes per channel-sample (V and I) and record's CPU, on the emulated
# hub with 4 ports × 2 rails at 10 kS/s, for the emulator's default drives
# and for a noisy drive (noise_ma 3). Prints one table row per recording.
# env BIN: an idlewatt binary to use instead of building one (scripts/bench-all.sh).
set -euo pipefail
secs=${1:-30}
dir=${2:-$(mktemp -d /tmp/capsize.XXXX)}
mkdir -p "$dir"
bin=${BIN:-$dir/idlewatt}
[ -n "${BIN:-}" ] || go build -o "$bin" ./cmd/idlewatt
cat > "$dir/noisy.yaml" <<'YAML'
profiles:
  noisy3ma:
    base: jmf667h-128-a19
    noise_ma: 3
YAML
printf '| drive | format | seconds | samples/channel | bytes | B per channel-sample | record CPU (user+sys) | %% of a core |\n|---|---|---|---|---|---|---|---|\n'
run_case() { # name, emulate args...
	local name=$1; shift
	"$bin" hub emulate --ports 4 "$@" > "$dir/emu-$name.out" 2> "$dir/emu-$name.err" &
	local emu=$!
	for _ in $(seq 50); do [ -s "$dir/emu-$name.out" ] && break; sleep 0.1; done
	local pty; pty=$(head -n1 "$dir/emu-$name.out")
	for f in 1 2; do
		local out="$dir/$name-v$f.iwcap"
		/usr/bin/time -f '%U %S %e' -o "$dir/time-$name-$f" \
			"$bin" record --port "$pty" --rate 10000 --duration "${secs}s" --capture-format "$f" --json --out "$out" > "$dir/rec-$name-$f.json" 2> /dev/null
		read -r u s e < "$dir/time-$name-$f"
		local bytes; bytes=$(stat -c %s "$out")
		python3 - "$name" "$f" "$bytes" "$u" "$s" "$e" "$dir/rec-$name-$f.json" <<'PY'
import json, sys
name, f, nbytes, u, s, e, js = sys.argv[1:]
r = json.load(open(js))
ch = r["channels"]; n = r["samples"]  # samples: every channel's, in all
cpu = float(u) + float(s)
print(f"| {name} | {f} | {float(e):.1f} | {n // ch} | {int(nbytes)} | {int(nbytes) / n:.3f} | {cpu:.2f} s | {100 * cpu / float(e):.2f} |")
PY
	done
	kill "$emu"; wait "$emu" 2> /dev/null || true
}
run_case default
run_case noisy3ma --config "$dir/noisy.yaml" --profile noisy3ma
echo "files in $dir"
