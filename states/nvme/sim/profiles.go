package sim

import (
	"time"

	"github.com/idlewatt/idlewatt/states/nvme"
	"github.com/idlewatt/idlewatt/units"
)

// psd builds a descriptor from a review's table: max power in W,
// latencies in ms as published ("-" is 0).
func psd(i int, w float64, nonOp bool, enterMs, exitMs float64) nvme.PowerState {
	p := nvme.PowerState{PS: i, NonOperational: nonOp,
		EntryLatencyUs: uint32(enterMs*1000 + 0.5), ExitLatencyUs: uint32(exitMs*1000 + 0.5)}
	// The raw field as a drive encodes it (0.0001 W units below 1 W), and
	// the watts decoded from it, as nvme.DecodeIdentify would give.
	if w < 1 {
		p.MaxPowerScale, p.MaxPowerRaw = 1, uint16(w*10000+0.5)
		p.MaxPower = units.Watts(float64(p.MaxPowerRaw) * 0.0001)
	} else {
		p.MaxPowerRaw = uint16(w*100 + 0.5)
		p.MaxPower = units.Watts(float64(p.MaxPowerRaw) * 0.01)
	}
	return p
}

var commonAssumed = []string{
	"operational idle power per state (not in the power-state table)",
	"active power while serving I/O",
	"link power in L0 (0.10 W) and L1 (0.03 W); L1.2 adds none",
	"L1 entry after 10 µs idle; exit 8 µs from L1, 100 µs from L1.2",
	"a non-operational state draws its declared maximum power (reviews measure less)",
	"an APST entry runs at the source state's power; an exit at PS0's idle power",
}

// Profiles returns the built-in NVMe drives.
func Profiles() []Profile {
	return []Profile{
		{
			Name: "980pro-1tb",
			Source: "Samsung 980 PRO 1TB (firmware 1B2QGXA7) power-state table as the drive reports it, " +
				"AnandTech review 16087 p. 8 (2020): PS0 8.49 W, PS1 4.48 W (exit 0.2 ms), PS2 3.18 W (exit 1.0 ms), " +
				"PS3 40 mW (entry 2.0 ms, exit 1.2 ms), PS4 5 mW (entry 0.5 ms, exit 9.5 ms)",
			Identify: &nvme.Identify{VID: 0x144d, SSVID: 0x144d, Model: "Samsung SSD 980 PRO 1TB", Serial: "SIM980PRO0001", Firmware: "1B2QGXA7",
				APSTA: true, NPSS: 4, PowerStates: []nvme.PowerState{
					psd(0, 8.49, false, 0, 0), psd(1, 4.48, false, 0, 0.2), psd(2, 3.18, false, 0, 1.0),
					psd(3, 0.040, true, 2.0, 1.2), psd(4, 0.005, true, 0.5, 9.5)}},
			OperationalIdle: []units.Watts{0.35, 0.30, 0.25},
			Active:          5.0,
			LinkL0:          0.10, LinkL1: 0.03,
			L1Idle: 10 * time.Microsecond, L1Exit: 8 * time.Microsecond, L12Exit: 100 * time.Microsecond,
			Assumed: commonAssumed,
		},
		{
			Name: "660p-1tb",
			Source: "Intel SSD 660p 1TB (Silicon Motion SM2263, DRAM-less, firmware NHF034C) power-state table, " +
				"AnandTech review 13078 p. 8 (2018): PS0 4.0 W, PS1 3.0 W, PS2 2.2 W, PS3 30 mW (entry 5 ms, exit 5 ms), " +
				"PS4 4 mW (entry 5 ms, exit 9 ms)",
			Identify: &nvme.Identify{VID: 0x8086, SSVID: 0x8086, Model: "INTEL SSDPEKNW010T8", Serial: "SIM660P0001", Firmware: "NHF034C",
				APSTA: true, NPSS: 4, PowerStates: []nvme.PowerState{
					psd(0, 4.0, false, 0, 0), psd(1, 3.0, false, 0, 0), psd(2, 2.2, false, 0, 0),
					psd(3, 0.030, true, 5, 5), psd(4, 0.004, true, 5, 9)}},
			OperationalIdle: []units.Watts{0.10, 0.09, 0.08},
			Active:          2.5,
			LinkL0:          0.10, LinkL1: 0.03,
			L1Idle: 10 * time.Microsecond, L1Exit: 8 * time.Microsecond, L12Exit: 100 * time.Microsecond,
			Assumed: commonAssumed,
		},
	}
}

// ProfileByName returns a built-in profile.
func ProfileByName(name string) (Profile, bool) {
	for _, p := range Profiles() {
		if p.Name == name {
			return p, true
		}
	}
	return Profile{}, false
}
