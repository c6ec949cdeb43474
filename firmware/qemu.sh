#!/usr/bin/env bash
# Runs the hub firmware's Cortex-M4 image under QEMU (netduinoplus2: an
# STM32F405), its UART on a pseudo-terminal whose path is the first line
# printed. Stops QEMU on SIGINT/SIGTERM or when QEMU exits.
#   firmware/qemu.sh [IMAGE]      (default: build/arm/hub-qemu.elf; `make -C firmware arm` builds it)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
image=${1:-$here/build/arm/hub-qemu.elf}
[ -f "$image" ] || { echo "qemu.sh: no image $image (run: make -C firmware arm)" >&2; exit 2; }
command -v qemu-system-arm >/dev/null || { echo "qemu.sh: qemu-system-arm not found (apt-get install qemu-system-arm)" >&2; exit 2; }
log=$(mktemp)
qemu-system-arm -M netduinoplus2 -nographic -monitor none -chardev pty,id=hub -serial chardev:hub \
	-kernel "$image" >"$log" 2>&1 </dev/null &
qemu=$!
trap 'kill $qemu 2>/dev/null; wait $qemu 2>/dev/null; rm -f "$log"' EXIT
trap 'exit 0' INT TERM
for _ in $(seq 200); do
	pty=$(sed -n 's/.*char device redirected to \(\/dev\/[^ ]*\).*/\1/p' "$log" | head -n 1)
	[ -n "$pty" ] && break
	kill -0 $qemu 2>/dev/null || { cat "$log" >&2; exit 3; }
	sleep 0.05
done
[ -n "${pty:-}" ] || { echo "qemu.sh: QEMU gave no pty" >&2; cat "$log" >&2; exit 3; }
echo "$pty"
wait $qemu
