package drivesim

import (
	"fmt"
	"sort"

	"github.com/idlewatt/idlewatt/internal/suggest"
)

// Built-in profiles. Where a value comes from a public measurement the
// comment says so (the SATA 3.2 specification's interface power states and
// DevSlp, AHCI 1.3.1's PxDEVSLP register, the drive makers' manuals and the
// published reviews named beside each value); everything else is a plausible choice, documented
// as such in docs/drive-profiles.md.

// jmf667h returns the parameters the JMicron JMF667H drives share; the
// callers set what differs by capacity and NAND.
func jmf667h(name, desc string) Profile {
	return Profile{
		Name: name, Description: desc, FormFactor: "2.5", Rails: Rails5V,
		MaxReadMBps: 520, // SATA 6 Gb/s practical limit 520–530 MB/s (reference reviews)
		// Reads cost far less than writes: no program current.
		ReadWPerMBps: 0.0017,
		// Link exits: Partial < 10 µs, Slumber < 10 ms (SATA spec).
		PartialExitUs: 8, SlumberExitMs: 6,
		// DETO: 20 ms nominal, real drives 20–240 ms; chosen mid-low.
		DevSlpSupported: true, DESO: true, DevSlpExitMs: 40, DetoMs: 50, MdatMs: 10,
		// "≈ 5 mW or less" is the industry target (reference); the JMF667H's
		// own figure is not published, so it sits just under the target.
		DevSlpW:            0.0045,
		ReadyMs:            300,
		HipmPartialAfterMs: 1, DipmPartialAfterMs: 5, DipmSlumberAfterMs: 50,
		DitoMs:     1000, // libahci devslp_idle_timeout default
		WakeSpikeW: 1.2, WakeSpikeMs: 2,
		NoiseMA:  0.5,
		GCEveryS: 20, GCMs: 150, GCW: 1.0,
	}
}

var builtins = func() []Profile {
	// 128 GB, Toshiba A19: active idle ≈ 0.4 W (Tom's Hardware); fewer dies
	// in parallel, so writes top out lower and each MB/s costs more.
	a128 := jmf667h("jmf667h-128-a19", "JMicron JMF667H, 128 GB, Toshiba A19 19 nm toggle NAND")
	a128.ActiveIdleW, a128.PartialW, a128.SlumberW = 0.40, 0.30, 0.070
	a128.MaxWriteMBps, a128.WriteWPerMBps, a128.PeakWriteW = 290, 0.0075, 2.8

	// 256 GB, Toshiba A19: active idle ≈ 0.2 W (Tom's Hardware).
	a256 := jmf667h("jmf667h-256-a19", "JMicron JMF667H, 256 GB, Toshiba A19 19 nm toggle NAND")
	a256.ActiveIdleW, a256.PartialW, a256.SlumberW, a256.DevSlpW = 0.20, 0.15, 0.050, 0.004
	a256.MaxWriteMBps, a256.WriteWPerMBps, a256.PeakWriteW = 440, 0.0060, 3.0
	a256.GCW = 1.1

	// Intel L85 (IMFT 20 nm MLC): no public per-drive measurement. Chosen
	// slightly worse than A19: a longer program time (lower write rate, more
	// energy per MB) and a little more idle draw from the ONFI interface.
	l128 := a128
	l128.Name, l128.Description = "jmf667h-128-l85", "JMicron JMF667H, 128 GB, Intel L85 20 nm NAND (values assumed, see docs)"
	l128.ActiveIdleW, l128.PartialW, l128.SlumberW = 0.43, 0.32, 0.075
	l128.MaxWriteMBps, l128.WriteWPerMBps, l128.PeakWriteW = 260, 0.0085, 3.0
	l256 := a256
	l256.Name, l256.Description = "jmf667h-256-l85", "JMicron JMF667H, 256 GB, Intel L85 20 nm NAND (values assumed, see docs)"
	l256.ActiveIdleW, l256.PartialW, l256.SlumberW = 0.23, 0.17, 0.055
	l256.MaxWriteMBps, l256.WriteWPerMBps, l256.PeakWriteW = 400, 0.0068, 3.2

	// Transcend SSD340: DevSlp 2.5 mW (Transcend datasheet, via reference).
	ssd340 := jmf667h("ssd340", "Transcend SSD340 256 GB (DevSlp 2.5 mW per datasheet)")
	ssd340.ActiveIdleW, ssd340.PartialW, ssd340.SlumberW, ssd340.DevSlpW = 0.32, 0.22, 0.045, 0.0025
	ssd340.MaxWriteMBps, ssd340.WriteWPerMBps, ssd340.PeakWriteW = 420, 0.0062, 3.0
	ssd340.DevSlpExitMs, ssd340.DetoMs = 60, 80

	// A generic 3.5" 7200 rpm desktop drive, datasheet-typical figures: idle
	// ≈ 5.4 W with ≈ 3.6 W on 12 V for the spindle, standby < 1 W, spin-up
	// ≈ 9 s drawing ≈ 1.8 A at 12 V.
	hdd := Profile{
		Name: "hdd-7200", Description: "3.5-inch 7200 rpm desktop HDD (datasheet-typical values)",
		FormFactor: "3.5", Rails: Rails5V12V,
		ActiveIdleW: 5.4, PartialW: 5.3, SlumberW: 5.2,
		ReadWPerMBps: 0.0084, WriteWPerMBps: 0.0095, PeakWriteW: 8.0,
		MaxReadMBps: 190, MaxWriteMBps: 180,
		PartialExitUs: 10, SlumberExitMs: 8,
		HipmPartialAfterMs: 1, DipmPartialAfterMs: 5, DipmSlumberAfterMs: 100, DitoMs: 1000,
		NoiseMA:  2,
		SpinupMs: 9000, SpinupW: 22, SpindleW: 3.6, Active12VShare: 0.6,
		StandbyAfterS: 600, StandbyW: 0.8,
	}

	// A drive that advertises DevSlp but never enters it: the DevSlp
	// verification must fail on it. Its floor is its Slumber level.
	broken := jmf667h("broken-devslp", "Advertises DevSlp, ignores the DEVSLP pin (floor = Slumber)")
	broken.ActiveIdleW, broken.PartialW, broken.SlumberW = 0.35, 0.25, 0.090
	broken.MaxWriteMBps, broken.WriteWPerMBps, broken.PeakWriteW = 350, 0.0070, 2.8
	broken.DevSlpBroken = true

	return []Profile{a128, a256, l128, l256, ssd340, hdd, broken}
}()

// Builtins returns a copy of the built-in profiles, in a stable order.
func Builtins() []Profile { return append([]Profile(nil), builtins...) }

func builtin(name string) (Profile, bool) {
	for _, p := range builtins {
		if p.Name == name {
			return p, true
		}
	}
	return Profile{}, false
}

// ErrUnknownProfile is wrapped by Lookup when no profile has the name.
var ErrUnknownProfile = fmt.Errorf("unknown drive profile")

// Lookup returns the profile called name: a user profile (from the config,
// see ParseProfiles) wins over a built-in of the same name. An unknown name
// is an error wrapping ErrUnknownProfile that suggests the nearest name.
func Lookup(name string, user map[string]Profile) (Profile, error) {
	if p, ok := user[name]; ok {
		return p, nil
	}
	if p, ok := builtin(name); ok {
		return p, nil
	}
	var names []string
	for _, p := range builtins {
		names = append(names, p.Name)
	}
	for n := range user {
		names = append(names, n)
	}
	sort.Strings(names)
	if s := nearest(name, names); s != "" {
		return Profile{}, fmt.Errorf("%w %q (did you mean %q?)", ErrUnknownProfile, name, s)
	}
	return Profile{}, fmt.Errorf("%w %q (known: %v)", ErrUnknownProfile, name, names)
}

// nearest returns the candidate closest to s by edit distance, or "" if
// none is close enough to be a plausible typo.
func nearest(s string, candidates []string) string {
	return suggest.Nearest(s, candidates, func(string) int { return len(s)/2 + 2 })
}
