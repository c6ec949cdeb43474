#!/usr/bin/env python3
"""Blind check of idlewatt against captures it did not generate (issue 25, "Blind").

idlewatt's own campaign (`idlewatt accuracy`) draws its drives from its own simulator. This script
is an independent generator: pure Python 3 (standard library only), written from the report's
definitions (docs/analysis.md "States", "DevSlp quantities", docs/report-format.md), not from the
analysis code or the simulator. It writes a Nordic Power Profiler (PPK2) CSV export
(`Timestamp(ms),Current(uA),D0-D7`, docs/meters.md "Nordic Power Profiler (PPK2) CSV export") that
`idlewatt report FILE --voltage 5 --devslp-line D0 --marker-line D1` reads, and a truth JSON beside
it; `score` compares the reports with the truths.

    blind-independent.py gen --seed S --index I --out DIR     # DIR/drive-I.csv, DIR/drive-I.truth.json
    blind-independent.py score DIR [--report report] [--md FILE]   # DIR/drive-I.truth.json + DIR/drive-I.report/

The drive (drawn per seed and index from random.Random("S:I"); ranges log-uniform unless said):
  - a SATA SSD on a 5 V rail: idle (active idle) 20 mW – 2 W; Partial 40–90 % of idle (uniform);
    Slumber 5–40 % of Partial; DevSlp floor 0.2–10 mW, redrawn until it is at most 70 % of
    Slumber (a floor at Slumber's level is no DevSlp); I/O power idle × 1.5–4 + 0.2–2 W
    (uniform), at most 4.5 W (0.9 A, under the PPK2's 1 A), drawn per I/O.
  - DIPM-like link: after each I/O the drive sits at idle for t_p (0.5–10 ms), then Partial until
    t_s (10–200 ms after the I/O's end), then Slumber until the next I/O. Steps are instantaneous
    at continuous times (not on the sample grid).
  - I/O bursts of 1–50 ms, each 1–4 I/Os (the marker line high), the gaps inside a burst
    0.1–0.7 ms (merged by the report's 1 ms merge gap) or, one gap in three, 1.4–4 ms (not
    merged: the link's timers run in them); bursts at random intervals of 50 ms – 2 s (end to
    start). One gap in ten is a quiet stretch at idle of 1–2 s, and so is the file's first 1–3 s (the
    host's policy holding the link active, e.g. max_performance, which the file cannot record),
    so active idle can be measured past the report's 500 ms settle tail.
  - 3–6 DevSlp cycles (pin on D0): the host holds the marker low, the drive reaches Slumber
    (t_s after the last I/O) and rests there 0.5–1.2 s (uniform), the pin is asserted for
    0.5–2 s (uniform); the drive stays in Slumber for its entry delay (0.5–50 ms; each cycle's
    within ±10 % of the drive's, uniform — `--entry-jitter 0`: the drive's own in every cycle, the
    draws otherwise the same), then holds its floor. After the release the host issues a read
    0.1–1 ms later (marker high); the drive's power leaves the floor 0.05–1 ms after the release
    (capped by the exit) and it is ready at the exit (1–20 ms after the release); the read
    completes 0.1–1 ms after that (the report's exit_ms: release → the read's completion). Then
    idle → Partial → Slumber again.
  - File: 10 kS/s (3 drives in 4) or 100 kS/s, 20–40 s (uniform; the last burst and the tail may
    run a few hundred ms past it), no missing rows.
  - Meter: each sample is the mean of the true power over its period [n/fs, (n+1)/fs) (an
    integrating meter, as the PPK2 averaging its 100 kS/s ADC), ÷ 5 V, plus the family's noise
    (current, signed: the sensor's noise around a low level reads negative at times), then
    written in µA to 3 decimals. Digital lines are sampled per period: '1' high throughout, '0'
    low, 'X' changed within it (idlewatt reads X as 1).
  - Noise family (the index's mod 5, so every family is drawn equally):
      white     σ 0.05–3 mA
      ar1       AR(1) σ 0.1–2 mA, correlation time τ 0.1–20 ms
      flicker   1/f-like: 3–5 AR(1) of equal power, τ log-spaced from 0.1–0.5 ms to 5–20 ms,
                σ 0.1–2 mA in all
      hum       mains 50 or 60 Hz (±0.1 Hz) with 1–5 harmonics (the fundamental 0.1–2 mA, the
                k-th 10–70 % of it, random phases) plus white 0.05–0.5 mA
      quantised the current rounded to an LSB of 1–50 µA (a floor under one LSB allowed), over a
                white noise of 0.05–1 LSB
    and each but white and quantised over a small white floor of 0.02–0.2 mA.

Truth (the report's definitions, docs/analysis.md "States"): the I/O as the file records it — a
marker span covers every sample its line is 1 or X in — merged across gaps under 1 ms is
`active`; outside it, the drive's own state (idle, Partial, Slumber, DevSlp; `background` and `off`
are 0: the drive does no work the host does not see). Residency is the fraction of the file's
duration (N/fs). active_idle_w = idle; devslp_floor_w = floor; pre_cycle_w = Slumber (the drive
rests there the 300 ms before each pin); entry_ms = mean over cycles of the pin's assertion → the
floor's start; exit_ms = mean of the pin's release → the read's completion, both in continuous
time (the meter's stamp of an edge — the window it fell in — is half a period early on average,
and so is a step read from the windows' means: the two cancel; the marker's end, the first
window reading 0, is half a period late, as is the release's stamp); average_w = the mean true
power over the file (noise excluded). The expected DevSlp verdict with the report's default criteria (entry
bound 100 ms, limit 5 mW, MDAT 10 ms, DETO 20 ms; docs/analysis.md "Verdicts"): FAIL when the
floor is above 5 mW or an exit (release → read completed) above 21 ms; PASS when the floor is
≤ 4.9 mW, every entry ≤ 100 ms and every exit ≤ 19 ms; otherwise either PASS or INCONCLUSIVE is
right ("grey": within the 1 ms the host's share may take, or the floor within 0.1 mW of the limit).
"""

import argparse
import struct
from array import array
import json
import math
import os
import random
import statistics
import sys

VOLT = 5.0
FAMILIES = ["white", "ar1", "flicker", "hum", "quantised"]
MERGE_GAP = 1e-3  # the report's merge_gap_ms
STATES = ["active", "background", "idle", "partial", "slumber", "devslp", "off"]


def logu(r, lo, hi):
    return math.exp(r.uniform(math.log(lo), math.log(hi)))


# ---------------------------------------------------------------- the drive


def draw_drive(r):
    d = {}
    d["idle_w"] = logu(r, 0.020, 2.0)
    d["partial_w"] = d["idle_w"] * r.uniform(0.40, 0.90)
    d["slumber_w"] = d["partial_w"] * logu(r, 0.05, 0.40)
    while True:
        f = logu(r, 0.2e-3, 10e-3)
        if f <= 0.7 * d["slumber_w"]:
            break
        if 0.7 * d["slumber_w"] < 0.2e-3:  # no floor fits: draw Slumber again
            d["slumber_w"] = d["partial_w"] * logu(r, 0.05, 0.40)
    d["floor_w"] = f
    d["t_p"] = logu(r, 0.5e-3, 10e-3)
    d["t_s"] = max(logu(r, 10e-3, 200e-3), d["t_p"] + 2e-3)
    d["entry"] = logu(r, 0.5e-3, 50e-3)
    d["exit"] = logu(r, 1e-3, 20e-3)
    d["rate"] = 100000 if r.random() < 0.25 else 10000
    d["duration_target"] = r.uniform(20.0, 40.0)
    d["cycles"] = r.randint(3, 6)
    return d


def draw_noise(r, family):
    n = {"family": family}
    if family == "white":
        n["white_a"] = logu(r, 0.05e-3, 3e-3)
        return n
    if family == "quantised":
        n["lsb_a"] = logu(r, 1e-6, 50e-6)
        n["white_a"] = n["lsb_a"] * logu(r, 0.05, 1.0)
        return n
    n["white_a"] = logu(r, 0.02e-3, 0.2e-3)
    if family == "ar1":
        n["ar"] = [[logu(r, 0.1e-3, 2e-3), logu(r, 0.1e-3, 20e-3)]]
    elif family == "flicker":
        k = r.randint(3, 5)
        lo, hi = logu(r, 0.1e-3, 0.5e-3), logu(r, 5e-3, 20e-3)
        sig = logu(r, 0.1e-3, 2e-3)
        n["ar"] = [[sig / math.sqrt(k), lo * (hi / lo) ** (j / (k - 1))] for j in range(k)]
    elif family == "hum":
        n["white_a"] = logu(r, 0.05e-3, 0.5e-3)
        f0 = r.choice([50.0, 60.0]) + r.uniform(-0.1, 0.1)
        a1 = logu(r, 0.1e-3, 2e-3)
        harm = [[1, a1, r.uniform(0, 2 * math.pi)]]
        for k in range(2, r.randint(1, 5) + 1):
            harm.append([k, a1 * r.uniform(0.1, 0.7), r.uniform(0, 2 * math.pi)])
        n["hum_hz"] = f0
        n["harmonics"] = harm
    return n


class Timeline:
    """Power segments [t0, t1) with a state, the I/O spans and the pin spans, in seconds."""

    def __init__(self, d, r, jitter=0.1):
        self.d, self.r, self.jitter = d, r, jitter
        self.seg = []  # (t0, t1, state, power)
        self.io = []  # (t0, t1) true I/O spans
        self.pin = []  # (t_assert, t_release)
        self.cycles = []  # per cycle: t_a, t_floor, t_release, t_done
        self.t = 0.0
        self.last_io_end = None  # None: the link is held at idle (no DIPM timers running)
        self.phases = []  # (t, name): the phases a measuring rig would record

    def add(self, t0, t1, state, p):
        if t1 > t0:
            if self.seg and self.seg[-1][2] == state and self.seg[-1][3] == p and self.seg[-1][1] == t0:
                self.seg[-1] = (self.seg[-1][0], t1, state, p)
            else:
                self.seg.append((t0, t1, state, p))

    def quiet_dipm(self, t1):
        """The link's timers from the last I/O's end until t1."""
        d, e = self.d, self.last_io_end
        for a, b, st, p in ((e, e + d["t_p"], "idle", d["idle_w"]),
                            (e + d["t_p"], e + d["t_s"], "partial", d["partial_w"]),
                            (e + d["t_s"], math.inf, "slumber", d["slumber_w"])):
            lo, hi = max(a, self.t), min(b, t1)
            self.add(lo, hi, st, p)
        self.t = t1

    def quiet_idle(self, t1):
        self.add(self.t, t1, "idle", self.d["idle_w"])
        self.t = t1

    def io_power(self):
        d, r = self.d, self.r
        return min(4.5, d["idle_w"] * r.uniform(1.5, 4.0) + r.uniform(0.2, 2.0))

    def burst(self):
        """1–50 ms of 1–4 I/Os; the gaps inside are at the DIPM timers."""
        r = self.r
        total = logu(r, 1e-3, 50e-3)
        k = r.randint(1, 4)
        gaps = [r.uniform(1.4e-3, 4e-3) if r.random() < 1 / 3 else r.uniform(0.1e-3, 0.7e-3) for _ in range(k - 1)]
        work = max(total - sum(gaps), 0.2e-3 * k)
        cuts = sorted(r.random() for _ in range(k - 1))
        parts = [b - a for a, b in zip([0.0] + cuts, cuts + [1.0])]
        for j in range(k):
            length = max(parts[j] * work, 0.1e-3)
            self.add(self.t, self.t + length, "active", self.io_power())
            self.io.append((self.t, self.t + length))
            self.t += length
            self.last_io_end = self.t
            if j < k - 1:
                self.quiet_dipm(self.t + gaps[j])

    def cycle(self):
        d, r = self.d, self.r
        # The cycle's phase starts once the drive is back in Slumber after the last I/O (the
        # previous cycle's read: its return is inside its own phase); the pin after a settle.
        start = self.last_io_end + d["t_s"] + r.uniform(0.1, 0.2)
        t_a = start + r.uniform(0.4, 1.0)
        self.phases.append((start, f"devslp-cycle:{len(self.cycles) + 1}"))
        self.quiet_dipm(t_a)
        entry = d["entry"] * (1 + self.jitter * r.uniform(-1, 1))
        hold = r.uniform(0.5, 2.0)
        t_f, t_r = t_a + entry, t_a + hold
        self.add(t_a, t_f, "slumber", d["slumber_w"])
        issue = t_r + r.uniform(0.1e-3, 1e-3)
        exit_ = d["exit"] * r.uniform(0.9, 1.1)
        ready = t_r + max(exit_, issue - t_r + 0.05e-3)
        rise = t_r + min(r.uniform(0.05e-3, 1e-3), ready - t_r)
        done = ready + r.uniform(0.1e-3, 1e-3)
        # The floor until the read is issued is DevSlp (pin released or not); from the issue the
        # read is outstanding: active (a wake with the read waiting), at the floor until the
        # power rises, at idle while the drive wakes, at I/O power for the transfer.
        self.add(t_f, issue, "devslp", d["floor_w"])
        if rise > issue:
            self.add(issue, rise, "active", d["floor_w"])
        self.add(max(issue, rise), ready, "active", d["idle_w"])
        self.add(ready, done, "active", self.io_power())
        self.pin.append((t_a, t_r))
        self.io.append((issue, done))
        self.cycles.append({"t_assert": t_a, "t_floor": t_f, "t_release": t_r, "t_rise": max(rise, t_r), "t_read_done": done})
        self.t = done
        self.last_io_end = done

    def gap(self):
        r = self.r
        if r.random() < 0.1:
            self.quiet_idle(self.t + r.uniform(1.0, 2.0))
        else:
            self.quiet_dipm(self.t + logu(r, 50e-3, 2.0))


def build(d, r, jitter=0.1):
    tl = Timeline(d, r, jitter)
    tl.quiet_idle(r.uniform(1.0, 3.0))
    tl.burst()
    # Time left for bursts after the cycles (≈ t_s + 0.8 + 1.25 + 0.1 s each) and the tail.
    reserve = d["cycles"] * (d["t_s"] + 0.85 + 1.25 + 0.1) + d["t_s"] + 3.0
    tail = r.uniform(1.0, 3.0)
    while tl.t < d["duration_target"] - reserve - tail:
        tl.gap()
        tl.burst()
    for _ in range(d["cycles"]):
        tl.cycle()
    end = tl.last_io_end + d["t_s"] + r.uniform(0.1, 0.2)
    tl.phases.append((end, "end"))
    tl.quiet_dipm(end)
    while tl.t < d["duration_target"] - tail:
        tl.gap()
        tl.burst()
    tl.quiet_dipm(max(tl.t + tail, d["duration_target"]))
    return tl


# ---------------------------------------------------------------- the meter


def sample_truth(tl, n, fs):
    """Mean true power over each sample period."""
    buf = array("d", bytes(8 * n))
    for t0, t1, _, p in tl.seg:
        a, b = t0 * fs, min(t1 * fs, n)
        if b <= a:
            continue
        i0, i1 = int(math.floor(a)), int(math.ceil(b)) - 1
        if i0 == i1:
            buf[i0] += p * (b - a)
            continue
        buf[i0] += p * (i0 + 1 - a)
        buf[i1] += p * (b - i1)
        if i1 > i0 + 1:
            buf[i0 + 1:i1] = array("d", [p]) * (i1 - i0 - 1)
    return buf


def line_codes(spans, n, fs):
    """Per sample: 0 low, 1 high throughout, 2 changed within (X)."""
    code = bytearray(n)
    for t0, t1 in spans:
        a, b = t0 * fs, t1 * fs
        i0 = int(math.floor(a))
        i1 = min(int(math.ceil(b)) - 1, n - 1)
        for i in range(i0, i1 + 1):
            code[i] = 1
        if a != i0:
            code[i0] = 2
        if b != i1 + 1 and i1 < n:
            code[i1] = 2
    return code


def recorded_spans(code):
    """[start, end) sample spans where the line reads 1 or X."""
    out, start = [], None
    for i, c in enumerate(code):
        if c and start is None:
            start = i
        elif not c and start is not None:
            out.append((start, i))
            start = None
    if start is not None:
        out.append((start, len(code)))
    return out


def noise_series(nz, n, fs, r):
    g = r.gauss
    out = array("d", bytes(8 * n))
    w = nz.get("white_a", 0.0)
    if w:
        out = array("d", (g(0.0, w) for _ in range(n)))
    for sig, tau in nz.get("ar", []):
        a = math.exp(-1.0 / (tau * fs))
        s = sig * math.sqrt(1 - a * a)
        x = g(0.0, sig)
        for i in range(n):
            x = a * x + g(0.0, s)
            out[i] += x
    if "harmonics" in nz:
        f0 = nz["hum_hz"]
        for k, amp, ph in nz["harmonics"]:
            wk = 2 * math.pi * k * f0 / fs
            # a sinusoid by rotation (a few ulps per step, re-anchored every 10 000 samples)
            for i0 in range(0, n, 10000):
                c, s = math.cos(wk * i0 + ph), math.sin(wk * i0 + ph)
                cw, sw = math.cos(wk), math.sin(wk)
                for i in range(i0, min(n, i0 + 10000)):
                    out[i] += amp * c
                    c, s = c * cw - s * sw, s * cw + c * sw
    return out


def js_number(x):
    """A float as JavaScript prints it (shortest round trip; integers without '.0')."""
    if x == int(x):
        return str(int(x))
    return repr(x)


def gen(seed, index, outdir, capture=False, jitter=0.1):
    r = random.Random(f"{seed}:{index}")
    d = draw_drive(r)
    family = FAMILIES[index % len(FAMILIES)]
    nz = draw_noise(r, family)
    tl = build(d, r, jitter)
    fs = d["rate"]
    n = int(math.floor(tl.t * fs))
    dur = n / fs
    truth_p = sample_truth(tl, n, fs)
    noise = noise_series(nz, n, fs, random.Random(f"{seed}:{index}:noise"))
    pin = line_codes(tl.pin, n, fs)
    mark = line_codes(tl.io, n, fs)
    lsb = nz.get("lsb_a")
    chars = "01X"
    os.makedirs(outdir, exist_ok=True)
    base = os.path.join(outdir, f"drive-{index}")
    amps = array("d", bytes(8 * n))  # the current as the file holds it (1 nA steps)
    with open(base + ".csv", "w", newline="") as f:
        f.write("Timestamp(ms),Current(uA),D0-D7\n")
        rows = []
        for i in range(n):
            a = truth_p[i] / VOLT + noise[i]
            if lsb:
                a = round(a / lsb) * lsb
            ua = f"{a * 1e6:.3f}"
            amps[i] = float(ua) * 1e-6
            rows.append(f"{js_number(i * 1000 / fs)},{ua},{chars[pin[i]]}{chars[mark[i]]}000000\n")
            if len(rows) >= 65536:
                f.writelines(rows)
                rows = []
        f.writelines(rows)
    if capture:
        write_capture(base + ".iwcap", f"drive-{index}", fs, amps, recorded_spans(pin), recorded_spans(mark), tl.phases)
    truth = make_truth(tl, d, nz, n, fs, mark, pin, truth_p)
    truth.update({"seed": seed, "index": index, "family": family, "drive": d, "noise": nz,
                  "rate_hz": fs, "samples": n, "duration_s": dur, "csv": os.path.basename(base + ".csv"),
                  "entry_jitter": jitter})
    with open(base + ".truth.json", "w") as f:
        json.dump(truth, f, indent=1)
    return base


# ---------------------------------------------------------------- the same samples as a capture
#
# docs/capture-format.md, format 1.1 (an older major every reader reads): the header, float32
# samples (encoding 0), synthetic marks once a second and at the last sample (as `idlewatt import`
# writes them: host time = sample index at the file's rate), the pin's edges as DEVSLP events, the
# marker's spans as I/O of unknown operation, and what a measuring rig adds and a meter file
# cannot hold: a `devslp-cycle:N` phase from each cycle's settle to the next (analysis judges a
# cycle only inside such a phase), `end` after the last.

def _crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


CRC32C = _crc32c_table()


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    t = CRC32C
    for b in data:
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


class CaptureWriter:
    def __init__(self, path):
        self.f = open(path, "wb")
        self.seq = 0
        self.f.write(b"\x89IWC\r\n\x1a\n" + struct.pack("<HHI", 1, 1, 0))

    def chunk(self, typ, payload, flags=0):
        head = b"IW" + struct.pack("<BBIQ", typ, flags, len(payload), self.seq)
        self.seq += 1
        self.f.write(head)
        self.f.write(payload)
        self.f.write(struct.pack("<I", crc32c(payload, crc32c(head))))

    def close(self):
        self.f.close()


def write_capture(path, name, fs, amps, pins, marks, phases):
    n = len(amps)
    ns = lambda idx: int(round(idx * 1e9 / fs))
    chan = {"port": 1, "rail": 1, "volt_lsb_v": 0.001, "current_lsb_a": 1e-9}
    header = {
        "created": "2026-01-01T00:00:00Z",
        "meter": {"kind": "ppk2", "model": "blind-independent.py (the PPK2 export's samples)", "firmware": "",
                  "serial": "", "protocol_version": 0, "ports": 1, "channels": [chan], "rates_hz": [fs],
                  "max_voltage_v": 5, "max_current_a": 1, "capabilities": ["logic"]},
        "channels": [chan], "rate_hz": fs, "start_host": 0,
        "drives": [{"port": 1, "name": name}], "tool": "blind-independent.py",
    }
    w = CaptureWriter(path)
    w.chunk(0x01, json.dumps(header).encode())
    # Records by time, a second at a time: samples, then the marks, events, I/O and phases in it.
    recs = []  # (sample index, order, type, payload)
    marks_at = list(range(0, n, int(fs))) + ([n - 1] if (n - 1) % int(fs) else [])
    for k, idx in enumerate(marks_at):
        recs.append((idx, 1, 0x21, struct.pack("<IIqqQ", k + 1, 1, ns(idx), ns(idx), idx)))
    recs.append((0, 2, 0x22, struct.pack("<B3xiQqq", 1, 1, 0, 0, 0)))
    for s, e in pins:
        recs.append((s, 2, 0x22, struct.pack("<B3xiQqq", 1, 1, s, 1, 0)))
        if e < n:
            recs.append((e, 2, 0x22, struct.pack("<B3xiQqq", 1, 1, e, 0, 0)))
    for s, e in marks:
        recs.append((e, 3, 0x30, struct.pack("<I4x", 1) + struct.pack("<iBB2xqi4xqq", 1, 0, 0, 0, 0, ns(s), ns(e))))
    for t, pname in phases:
        v = pname.encode()
        recs.append((t * fs, 4, 0x31, struct.pack("<qiBxH", int(round(t * 1e9)), 1, 3, len(v)) + v))
    recs.sort(key=lambda x: (x[0], x[1]))
    j = 0
    step = int(fs)
    volts = array("f", [VOLT]) * step
    for start in range(0, n, step):
        cnt = min(step, n - start)
        cur = array("f", amps[start:start + cnt])
        w.chunk(0x10, struct.pack("<HBBIQ", 0, 0, 0, cnt, start) + volts[:cnt].tobytes() + cur.tobytes(), flags=1)
        while j < len(recs) and recs[j][0] < start + cnt:
            w.chunk(recs[j][2], recs[j][3])
            j += 1
    while j < len(recs):
        w.chunk(recs[j][2], recs[j][3])
        j += 1
    w.chunk(0xFF, struct.pack("<qQ", ns(n), n))
    w.close()


def subtract(segs, cuts):
    """Length of the union of segs less the union of cuts (both sorted, disjoint lists)."""
    total, j = 0.0, 0
    for a, b in segs:
        length = b - a
        while j < len(cuts) and cuts[j][1] <= a:
            j += 1
        k = j
        while k < len(cuts) and cuts[k][0] < b:
            length -= max(0.0, min(b, cuts[k][1]) - max(a, cuts[k][0]))
            k += 1
        total += length
    return total


def make_truth(tl, d, nz, n, fs, mark, pin, truth_p):
    dur = n / fs
    # active: the marker as recorded (1 or X samples), merged across gaps under 1 ms.
    busy = []
    for s, e in recorded_spans(mark):
        a, b = s / fs, e / fs
        if busy and a - busy[-1][1] < MERGE_GAP - 1e-12:
            busy[-1] = (busy[-1][0], b)
        else:
            busy.append((a, b))
    res = {s: 0.0 for s in STATES}
    res["active"] = sum(b - a for a, b in busy) / dur
    for st in ("idle", "partial", "slumber", "devslp"):
        segs = [(max(0.0, a), min(b, dur)) for a, b, s, _ in tl.seg if s == st and a < dur]
        res[st] = subtract(segs, busy) / dur
    # The pin as the meter stamps it.
    pins = recorded_spans(pin)
    entries, exits, held = [], [], []
    for c, (ps, pe) in zip(tl.cycles, pins):
        # The physical delays: with an integrating meter whose sample n is the window
        # [n/fs, (n+1)/fs), the pin's stamp (the window it changed in) is early by half a period
        # on average and so is a step in the power read from the windows' means: the two cancel.
        c["stamp_assert_s"], c["stamp_release_s"] = ps / fs, pe / fs
        c["entry_ms"] = (c["t_floor"] - c["t_assert"]) * 1e3
        c["exit_ms"] = (c["t_read_done"] - c["t_release"]) * 1e3
        c["rise_ms"] = (c["t_rise"] - c["t_release"]) * 1e3
        entries.append(c["entry_ms"])
        exits.append(c["exit_ms"])
        held.append((c["t_rise"] - c["t_floor"]) * 1e3)
    avg = sum(truth_p) / n
    floor = d["floor_w"]
    if floor > 5e-3 or max(exits) > 21.0:
        verdict = "fail"
    elif floor <= 4.9e-3 and max(entries) <= 100 and max(exits) <= 19.0 and min(held) >= 10:
        verdict = "pass"
    else:
        verdict = "grey"
    return {
        "residency": res,
        "active_idle_w": d["idle_w"],
        "devslp_floor_w": floor,
        "pre_cycle_w": d["slumber_w"],
        "partial_w": d["partial_w"],
        "entry_ms": statistics.fmean(entries),
        "exit_ms": statistics.fmean(exits),
        "rise_ms": statistics.fmean(c["rise_ms"] for c in tl.cycles),
        "average_w": avg,
        "expected_verdict": verdict,
        "cycles": tl.cycles,
        "quiet_idle_s": sum(b - a for a, b, s, _ in tl.seg if s == "idle" and b - a > 0.6),
    }


# ---------------------------------------------------------------- scoring


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * q
    lo = int(math.floor(k))
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def get(o, *path):
    for p in path:
        if o is None:
            return None
        o = o.get(p) if isinstance(o, dict) else None
    return o


def load_report(rdir):
    with open(os.path.join(rdir, "report.json")) as f:
        rep = json.load(f)
    states = None
    sp = os.path.join(rdir, "states.json")
    if os.path.exists(sp):
        with open(sp) as f:
            states = json.load(f)
    return rep, states


# quantity: (unit, scale for display, tolerance(truth) in the quantity's unit)
GOALS = {
    "active_idle_w": ("%", lambda t: 0.01 * abs(t)),
    "average_w": ("%", lambda t: 0.005 * abs(t)),
    "devslp_floor_w": ("mW", lambda t: max(0.2e-3, 0.03 * abs(t))),
    "pre_cycle_w": ("mW", lambda t: max(0.2e-3, 0.03 * abs(t))),
    "entry_ms": ("ms", lambda t: max(1.0, 0.03 * abs(t))),
    "exit_ms": ("ms", lambda t: max(1.0, 0.03 * abs(t))),
}
GOAL_TEXT = {
    "active_idle_w": "±1 %", "average_w": "±0.5 %", "devslp_floor_w": "±max(0.2 mW, 3 %)",
    "pre_cycle_w": "±max(0.2 mW, 3 %)", "entry_ms": "±max(1 ms, 3 %)", "exit_ms": "±max(1 ms, 3 %)",
}


def checks_for(truth, rep):
    """[(quantity, truth, measured, u95)] for one drive."""
    drv = rep["drives"][0]
    dv = drv.get("devslp") or {}
    out = [
        ("active_idle_w", truth["active_idle_w"], drv.get("active_idle_w"), drv.get("active_idle_u95_w")),
        ("average_w", truth["average_w"], drv.get("average_w"), drv.get("average_u95_w")),
        ("devslp_floor_w", truth["devslp_floor_w"], dv.get("floor_w"), dv.get("floor_u95_w")),
        ("pre_cycle_w", truth["pre_cycle_w"], dv.get("pre_cycle_w"), dv.get("pre_cycle_u95_w")),
        ("entry_ms", truth["entry_ms"], dv.get("entry_ms"), dv.get("entry_u95_ms")),
        ("exit_ms", truth["exit_ms"], dv.get("exit_ms"), dv.get("exit_u95_ms")),
    ]
    res, ru = drv.get("residency") or {}, drv.get("residency_u95") or {}
    for st in STATES:
        out.append(("residency." + st, truth["residency"][st], res.get(st), ru.get(st)))
    return out


def tol(q, t):
    if q.startswith("residency."):
        return 0.01
    return GOALS[q][1](t)


def fmt_err(q, e, t):
    if q.startswith("residency."):
        return f"{e * 100:.2f} pp"
    unit = GOALS[q][0]
    if unit == "%":
        return f"{e / abs(t) * 100:.3f} %"
    if unit == "mW":
        return f"{e * 1e3:.3f} mW"
    return f"{e:.2f} ms"


def score(d, suffix="report", md_out=None):
    rows = []
    for name in sorted(os.listdir(d)):
        if not name.endswith(".truth.json"):
            continue
        base = name[: -len(".truth.json")]
        with open(os.path.join(d, name)) as f:
            truth = json.load(f)
        rdir = os.path.join(d, base + "." + suffix)
        if not os.path.exists(os.path.join(rdir, "report.json")):
            rows.append({"base": base, "truth": truth, "error": "no report.json"})
            continue
        rep, _ = load_report(rdir)
        rows.append({"base": base, "truth": truth, "rep": rep, "checks": checks_for(truth, rep)})
    rows.sort(key=lambda x: x["truth"]["index"])
    quantities = [q for q, *_ in checks_for(rows[0]["truth"], rows[0]["rep"])] if rows and "rep" in rows[0] else []
    lines = []
    p = lines.append
    n_drives = len(rows)
    fams = sorted({x["truth"]["family"] for x in rows}, key=FAMILIES.index)
    counts = ", ".join(f"{f} {sum(1 for x in rows if x['truth']['family'] == f)}" for f in fams)
    seed = rows[0]["truth"]["seed"] if rows else "?"
    failed = sum(1 for x in rows if "error" in x)
    p(f"{n_drives} drives ({counts}), seed {seed}; failed runs: {failed}")
    p("")
    p("| quantity | goal | N | missing | \\|error\\| median / p95 / max | within goal | 95 % interval holds the truth |")
    p("|---|---|---|---|---|---|---|")
    per_q = {}
    for q in quantities:
        errs, within, held, stated, missing, n, offs = [], 0, 0, 0, 0, 0, []
        for x in rows:
            if "checks" not in x:
                continue
            _, t, m, u = next(c for c in x["checks"] if c[0] == q)
            if q == "devslp_floor_w" or q == "entry_ms" or q == "exit_ms" or q == "pre_cycle_w":
                pass
            if m is None:
                missing += 1
                offs.append((x, None))
                continue
            n += 1
            e = m - t
            errs.append(abs(e) / (abs(t) if GOALS.get(q, ("",))[0] == "%" else 1))
            ok = abs(e) <= tol(q, t)
            within += ok
            if not ok:
                offs.append((x, e))
            if u is not None:
                stated += 1
                held += abs(e) <= u
        per_q[q] = offs
        unit = "pp" if q.startswith("residency.") else GOALS[q][0]
        scale = {"pp": 100, "%": 100, "mW": 1e3, "ms": 1}[unit]
        e_txt = " / ".join(f"{v * scale:.3g}" for v in (pct(errs, 0.5), pct(errs, 0.95), max(errs) if errs else float("nan")))
        p(f"| {q} | {'±1 pp' if unit == 'pp' else GOAL_TEXT[q]} | {n} | {missing} | {e_txt} {unit} | "
          f"{within}/{n + missing} | {held}/{stated}{f' ({held / stated * 100:.1f} %)' if stated else ''} |")
    p("")
    p("Interval coverage per noise family (values whose stated 95 % interval holds the truth, all quantities):")
    p("")
    p("| family | drives | intervals held | of which residency | values off goal or missing |")
    p("|---|---|---|---|---|")
    for fam in fams:
        h = s = hr = sr = bad = 0
        for x in rows:
            if x["truth"]["family"] != fam or "checks" not in x:
                continue
            for q, t, m, u in x["checks"]:
                if m is None:
                    bad += 1
                    continue
                if abs(m - t) > tol(q, t):
                    bad += 1
                if u is not None:
                    s += 1
                    h += abs(m - t) <= u
                    if q.startswith("residency."):
                        sr += 1
                        hr += abs(m - t) <= u
        nd = sum(1 for x in rows if x["truth"]["family"] == fam)
        p(f"| {fam} | {nd} | {h}/{s} ({h / s * 100 if s else float('nan'):.1f} %) | {hr}/{sr} | {bad} |")
    p("")
    p("DevSlp verdicts (expected from the truth with the default criteria; grey = PASS or INCONCLUSIVE both right):")
    p("")
    mat = {}
    for x in rows:
        if "rep" not in x:
            continue
        got = (get(x["rep"]["drives"][0], "devslp", "outcome") or "none").lower()
        exp = x["truth"]["expected_verdict"]
        mat.setdefault(exp, {}).setdefault(got, []).append(x["truth"]["index"])
    outs = ["pass", "fail", "inconclusive", "none"]
    p("| expected \\ reported | " + " | ".join(outs) + " |")
    p("|---|" + "---|" * len(outs))
    for exp in ("pass", "grey", "fail"):
        if exp in mat:
            p(f"| {exp} | " + " | ".join(str(len(mat[exp].get(o, []))) for o in outs) + " |")
    fp = [i for e in ("fail",) for i in mat.get(e, {}).get("pass", [])]
    ff = [i for e in ("pass", "grey") for i in mat.get(e, {}).get("fail", [])]
    inc = [i for e in mat for i in mat[e].get("inconclusive", [])]
    p("")
    p(f"false PASS: {fp or 'none'}; false FAIL: {ff or 'none'}; INCONCLUSIVE: {inc or 'none'}")
    p("")
    p("Off goal (drive: error, truth → measured ± u95):")
    p("")
    for q in quantities:
        offs = per_q.get(q, [])
        if not offs:
            continue
        if len(offs) == n_drives and all(e is None for _, e in offs):
            p(f"- {q}: missing on all {n_drives} drives")
            continue
        items = []
        for x, e in sorted(offs, key=lambda o: -abs(o[1]) if o[1] is not None else -math.inf):
            _, t, m, u = next(c for c in x["checks"] if c[0] == q)
            fam = x["truth"]["family"]
            if e is None:
                items.append(f"{x['truth']['index']} ({fam}): missing")
            else:
                unresolved = " (interval wider than the goal, holds the truth)" if u is not None and u > tol(q, t) and abs(e) <= u else ""
                items.append(f"{x['truth']['index']} ({fam}): {fmt_err(q, e, t)}, {t:.6g} → {m:.6g} ± {u if u is None else f'{u:.3g}'}{unresolved}")
        p(f"- {q} ({len(offs)}): " + "; ".join(items))
    for x in rows:
        if "error" in x:
            p(f"- drive {x['truth']['index']}: {x['error']}")
    # The entry's interval against the cycles' own fits: does a miss follow the drive's entry
    # varying from cycle to cycle (the joint fit assumes one latency)?
    miss = []
    for x in rows:
        if "checks" not in x:
            continue
        _, t, m, u = next(c for c in x["checks"] if c[0] == "entry_ms")
        if m is None or u is None or abs(m - t) <= u:
            continue
        fits = [c.get("entry_ms") for c in (get(x["rep"]["drives"][0], "devslp", "cycle_results") or [])]
        fits = [f for f in fits if f is not None]
        spread = [c["entry_ms"] for c in x["truth"]["cycles"]]
        miss.append(f"{x['truth']['index']} ({x['truth']['family']}): truth {t:.3f}, joint {m:.3f} ± {u:.3f}, "
                    f"mean of the cycles' fits {statistics.fmean(fits) if fits else float('nan'):.3f}, "
                    f"true entries {min(spread):.3f}–{max(spread):.3f} ms")
    if miss:
        p("")
        p("Entry intervals that miss (truth: the mean of the cycles' true entries):")
        p("")
        for m in miss:
            p("- " + m)
    text = "\n".join(lines) + "\n"
    if md_out:
        with open(md_out, "w") as f:
            f.write(text)
    sys.stdout.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen", help="write DIR/drive-I.csv and its truth")
    g.add_argument("--seed", type=int, required=True)
    g.add_argument("--index", type=int, required=True)
    g.add_argument("--out", required=True)
    g.add_argument("--capture", action="store_true",
                   help="also write DIR/drive-I.iwcap: the same samples, pin and I/O, with the DevSlp cycles' phases")
    g.add_argument("--entry-jitter", type=float, default=0.1,
                   help="each cycle's entry delay is the drive's × (1 ± this, uniform); 0: one latency (the same draws otherwise)")
    s = sub.add_parser("score", help="compare DIR's reports with their truths")
    s.add_argument("dir")
    s.add_argument("--report", default="report", help="the reports' directories are DIR/drive-I.REPORT (default report)")
    s.add_argument("--md", help="also write the table here")
    a = ap.parse_args()
    if a.cmd == "gen":
        print(gen(a.seed, a.index, a.out, a.capture, a.entry_jitter))
    else:
        score(a.dir, a.report, a.md)


if __name__ == "__main__":
    main()
