#!/usr/bin/env python3
"""Writes the structures gen.sh hands to the tools."""
import struct, sys
out = sys.argv[1]

def idctrl(vid, sn, mn, fr, apsta, psds):
    b = bytearray(4096)
    struct.pack_into('<HH', b, 0, vid, vid)
    b[4:24] = sn.encode().ljust(20); b[24:64] = mn.encode().ljust(40); b[64:72] = fr.encode().ljust(8)
    b[263] = len(psds) - 1; b[265] = apsta
    for i, (mp, flags, en, ex, ranks, idlp, ips, actp, apws) in enumerate(psds):
        o = 2048 + 32 * i
        struct.pack_into('<HBBII4BHBBHB', b, o, mp, 0, flags, en, ex, *ranks, idlp, ips, 0, actp, apws)
    return bytes(b)

# The T-FORCE TM8FPL500G's table as its nvme id-ctrl -H printed it
# (fixtures/real/states/nvme/t-force-tm8fpl500g.id-ctrl-H.txt): idle 0.6300 W
# (scale 1), active in 0.01 W units with workload 2 (smartctl shows Active).
tforce = idctrl(0x1987, 'TPBF2210060060400308', 'T-FORCE TM8FPL500G', 'EJFM90.1', 1, [
    (500, 0, 0, 0, (0, 0, 0, 0), 6300, 0x40, 500, 0x82),
    (240, 0, 0, 1000, (1, 1, 1, 1), 6300, 0x40, 250, 0x82),
    (190, 0, 0, 0, (2, 2, 2, 2), 6300, 0x40, 180, 0x82),
    (500, 3, 5000, 10000, (3, 3, 3, 3), 0, 0, 0, 0),
    (50, 3, 10000, 45000, (4, 4, 4, 4), 0, 0, 0, 0)])
# Every field at an unusual value: MXPS on an operational state, the
# reserved scale 3, workload 1, 5-bit ranks, 32-bit latencies.
varied = idctrl(0x144d, '  S4EWNX0N912345A', 'idlewatt varied', 'V1', 0, [
    (65535, 1, 0, 0, (31, 30, 29, 28), 123, 0x80, 65535, 0x41),
    (1, 0, 4294967295, 1, (0, 1, 0, 1), 9999, 0xc0, 7, 0x01),
    (9, 2, 100, 200, (2, 2, 2, 2), 1, 0x40, 2, 0x42),
    (7, 3, 1, 2, (3, 4, 5, 6), 0, 0, 0, 0x03)])
open(f'{out}/tforce.id-ctrl.bin', 'wb').write(tforce)
open(f'{out}/varied.id-ctrl.bin', 'wb').write(varied)
# The kernel's table for the T-FORCE under the defaults: PS0–2 → PS3 after
# 100 ms, PS3 → PS4 after 2000 ms.
apst = bytearray(256)
for i in range(3):
    struct.pack_into('<Q', apst, 8 * i, (3 << 3) | (100 << 8))
struct.pack_into('<Q', apst, 24, (4 << 3) | (2000 << 8))
open(f'{out}/apst.bin', 'wb').write(apst)
# A real IDENTIFY DEVICE: the Samsung SSD 870 QVO 4TB's 256 words as
# CrystalDiskInfo printed them (fixtures/real/states/sata/samsung-870-qvo-4tb.crystaldiskinfo.txt).
words = []
for line in open(f'{out}/../sata/samsung-870-qvo-4tb.crystaldiskinfo.txt'):
    p = line.split(':')
    if len(p) == 2 and p[0].isdigit():
        words += [int(x, 16) for x in p[1].split()]
assert len(words) == 256, len(words)
open(f'{out}/sata-870qvo.identify.bin', 'wb').write(struct.pack('<256H', *words))
# The same drive with every power-management bit smartctl --identify and
# hdparm decode turned on where the 870 QVO has it off (HIPM, DIPM and
# DevSlp enabled) and one described word at 0xffff, which smartctl prints
# as bits without a word line; the checksum made good again.
v = list(words)
v[76] |= 1 << 9
v[79] |= (1 << 8) | (1 << 3)
v[93] = 0xffff
v[255] = 0x00a5
v[255] |= ((-sum(struct.pack('<256H', *v))) & 0xff) << 8
open(f'{out}/sata-varied.identify.bin', 'wb').write(struct.pack('<256H', *v))
