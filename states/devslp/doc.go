// Package devslp drives the Device Sleep cycle a conformance test would
// (SATA-IO IPM practice); analysis judges each cycle from the capture (the
// power trace, the pin events and the host's read), in analysis/judge.
//
// # A cycle
//
//  1. idle: no I/O for Settle, so the drive reaches Slumber (or whatever the
//     link policy lets it reach);
//  2. assert DEVSLP (the hub's pin);
//  3. the power must fall to a floor within EntryBound;
//  4. the floor must be at or below Limit (default 5 mW);
//  5. DEVSLP is held for Hold (≥ the drive's MDAT) and the floor must hold
//     for at least MDAT;
//  6. deassert; the drive must answer a read within DETO;
//  7. the drive must come back to the state it was in before the cycle
//     (its pre-assert power level) within Return.
//
// Run performs the cycles through the small Rig interface (pin, probe read,
// phase notes). The checks above are analysis/judge' (JudgeCycle), each an
// interval against its limit: docs/analysis.md, "DevSlp quantities".
//
// # Where it sits
//
// The states floor (rank 1), over leaves only; analysis and app/rig import
// it.
package devslp
