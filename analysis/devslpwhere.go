package analysis

import (
	"sort"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/states/detect"
)

// devslpGrace is how long after a release of the DEVSLP pin a drive may
// still be in DevSlp: its exit (the campaign's drives rise within 0.1 ms,
// but MDAT may hold the floor past an early release; the ATA spec's DETO
// allows the exit up to 255 ms, a drive in it is rising).
const devslpGrace = 100 * time.Millisecond

// driveClaimsNoDevSlp says whether the rig's devslp-support note says the
// drive itself does not support DevSlp ("no: IDENTIFY word 78 bit 8 clear",
// "no: profile X says devslp_supported false", an NVMe drive): such a drive
// is never in DevSlp — the HBA does not enable it, and the rig runs no pin
// cycles on it. A "no" for the HBA (CAP2.SDS clear) is not the drive's: the
// hub's pin may still put it there.
func driveClaimsNoDevSlp(support string) bool {
	return strings.HasPrefix(support, "no") && !strings.Contains(support, "HBA")
}

// devslpPossible says when the drive on port may be in DevSlp, from what
// the capture recorded (detect.DevSlpPossible): while the pin was asserted
// (and devslpGrace after its release), or while an ALPM policy that lets
// the HBA assert DEVSLP itself (min_power, min_power_with_partial) was in
// force — or no policy was recorded yet: before the first policy event,
// and in a capture without them, any time. A drive under max_performance,
// medium_power or a DIPM policy cannot enter DevSlp between assertions.
// A drive the capture records as not supporting DevSlp
// (driveClaimsNoDevSlp) is never in it.
func devslpPossible(p *pass1, pins []detect.Pin, port int) detect.DevSlpPossible {
	if driveClaimsNoDevSlp(p.devslp.support[port]) {
		return func(a, b hostclock.Time) bool { return false }
	}
	type iv struct{ a, b hostclock.Time }
	pol := newPolicyCursor(p.policies, port).pol
	if len(pol) == 0 {
		return nil
	}
	// The signal's spans: the pin's (to its release + grace) and the
	// policy's (min_power*), and the time before the first policy.
	var on []iv
	var at hostclock.Time
	asserted := false
	for _, pn := range pins {
		switch {
		case pn.Asserted && !asserted:
			at, asserted = pn.At, true
		case !pn.Asserted && asserted:
			on, asserted = append(on, iv{at, pn.At.Add(devslpGrace)}), false
		}
	}
	if asserted {
		on = append(on, iv{at, hostclock.Time(1<<63 - 1)})
	}
	on = append(on, iv{hostclock.Time(-1 << 63), hostclock.Time(pol[0].t)})
	for i, e := range pol {
		if policyCtx(e.policy) != ctxMinPower {
			continue
		}
		end := hostclock.Time(1<<63 - 1)
		if i+1 < len(pol) {
			end = hostclock.Time(pol[i+1].t)
		}
		on = append(on, iv{hostclock.Time(e.t), end})
	}
	// Merged and sorted, each span's question is one search (a run has
	// tens of thousands of spans and up to a thousand assertions).
	sort.Slice(on, func(i, j int) bool { return on[i].a < on[j].a })
	merged := on[:1]
	for _, x := range on[1:] {
		if last := &merged[len(merged)-1]; x.a <= last.b {
			last.b = max(last.b, x.b)
		} else {
			merged = append(merged, x)
		}
	}
	return func(a, b hostclock.Time) bool {
		k := sort.Search(len(merged), func(k int) bool { return merged[k].b > a })
		return k < len(merged) && merged[k].a < b
	}
}

// hbaReleases are the times the capture's policy events took the port out
// of an ALPM policy under which the HBA asserts DEVSLP itself (min_power,
// min_power_with_partial): there the HBA releases the signal, and a drive
// in its DevSlp wakes — to Slumber, without an I/O the capture would show
// (campaign seed 32 drive 106: 1.47 s of DevSlp, then 0.48 s of Slumber
// once the rig set the DevSlp cycles' policy, read as one span of
// Slumber). The offline classifier's spans end there (SplitAt), and
// MonotoneLevels lets the link rise there as at a pin's release.
func hbaReleases(p *pass1, port int) []hostclock.Time {
	pol := newPolicyCursor(p.policies, port).pol
	var out []hostclock.Time
	for i := 1; i < len(pol); i++ {
		if policyCtx(pol[i-1].policy) == ctxMinPower && policyCtx(pol[i].policy) != ctxMinPower {
			out = append(out, hostclock.Time(pol[i].t))
		}
	}
	return out
}
