#!/bin/sh
# Regenerates fixtures/real/states/made: outputs of the real tools (Debian's
# nvme-cli, smartctl, hdparm, xxd, hexdump, od) over structures assembled here, so the
# decoders are tested against the tools' own printing of known data.
# nvme-cli cannot read a drive on a machine without one: nvmeshim.c (an
# LD_PRELOAD of ours) answers its two admin ioctls from files, and nvme-cli
# is pointed at /dev/null (a character device, as it checks).
# Needs: apt-get install nvme-cli smartmontools hdparm xxd bsdextrautils coreutils gcc python3
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../fixtures/real/states/made}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
gcc -shared -fPIC -O2 -o "$tmp/shim.so" "$here/nvmeshim.c" -ldl
python3 "$here/images.py" "$out"
nv() { LD_PRELOAD="$tmp/shim.so" "$@" 2>&1; }
for d in tforce varied; do
	b=$out/$d.id-ctrl.bin
	IW_IDCTRL=$b nv nvme id-ctrl /dev/null > "$out/$d.id-ctrl.txt"
	IW_IDCTRL=$b nv nvme id-ctrl /dev/null -H > "$out/$d.id-ctrl-H.txt"
	IW_IDCTRL=$b nv nvme id-ctrl /dev/null -o json > "$out/$d.id-ctrl.json"
done
for b in "$out"/*.bin; do
	s=${b%.bin}
	xxd "$b" > "$s.xxd"
	hexdump -C "$b" > "$s.hexdump-C"
	od -A x -t x1 "$b" > "$s.od-Ax-tx1"
done
xxd -g1 "$out/varied.id-ctrl.bin" > "$out/varied.id-ctrl.xxd-g1"
od -t x1 "$out/varied.id-ctrl.bin" > "$out/varied.id-ctrl.od-tx1"
od -A x -t x1z -v "$out/sata-870qvo.identify.bin" > "$out/sata-870qvo.identify.od-Ax-tx1z-v"
# smartctl -d ata reads IDENTIFY DEVICE through HDIO_DRIVE_CMD (the shim
# answers it; every other ATA command fails, as SMART READ on a drive
# without SMART): its word tables in each bit level, -x and JSON.
for d in sata-870qvo sata-varied; do
	b=$out/$d.identify.bin
	IW_IDENTIFY=$b nv smartctl -d ata --identify /dev/null > "$out/$d.smartctl-identify.txt" || true
	IW_IDENTIFY=$b nv smartctl -d ata --identify=wn /dev/null > "$out/$d.smartctl-identify-wn.txt" || true
	IW_IDENTIFY=$b nv smartctl -d ata --identify=wb /dev/null > "$out/$d.smartctl-identify-wb.txt" || true
	IW_IDENTIFY=$b nv smartctl -d ata -x /dev/null > "$out/$d.smartctl-x.txt" || true
	IW_IDENTIFY=$b nv smartctl -d ata -j -x /dev/null > "$out/$d.smartctl-j-x.json" || true
done
IW_APST=$out/apst.bin IW_APST_DW0=1 nv nvme get-feature /dev/null -f 0x0c > "$out/apst.get-feature.txt"
IW_APST=$out/apst.bin IW_APST_DW0=1 nv nvme get-feature /dev/null -f 0x0c -H > "$out/apst.get-feature-H.txt"
IW_APST=$out/apst.bin IW_APST_DW0=0 nv nvme get-feature /dev/null -f 0x0c > "$out/apst-disabled.get-feature.txt"
python3 -c 'import sys,struct; w=struct.unpack("<256H",open(sys.argv[1],"rb").read()); print("\n".join(" ".join("%04x"%v for v in w[i:i+8]) for i in range(0,256,8)))' "$out/sata-870qvo.identify.bin" > "$tmp/words"
hdparm --Istdin < "$tmp/words" > "$out/sata-870qvo.hdparm-Istdin.txt"
{ nvme version; smartctl -V | head -1; hdparm -V; xxd -v 2>&1 | head -1; hexdump -V 2>&1 | head -1; od --version | head -1; } > "$out/VERSIONS"
