package nvme

// The drives the tests decode, plan and judge: the same specs as
// states/nvme/nvmehost's fixture generator, which builds the sysfs
// fixtures from them (fixtures/sysfs/nvme-*).

const fixtureDir = "../../fixtures/sysfs"

// ps builds a descriptor: max power in W (scale chosen as a drive would:
// 0.0001 W units below 1 W), operational or not, latencies in µs.
func ps(mpW float64, nonOp bool, enlat, exlat uint32, rank int) PowerState {
	p := PowerState{NonOperational: nonOp, EntryLatencyUs: enlat, ExitLatencyUs: exlat, RRT: rank, RRL: rank, RWT: rank, RWL: rank}
	if mpW < 1 {
		p.MaxPowerScale, p.MaxPowerRaw = 1, uint16(mpW*10000+0.5)
	} else {
		p.MaxPowerRaw = uint16(mpW*100 + 0.5)
	}
	p.fill()
	return p
}

func withPS(id Identify, states ...PowerState) *Identify {
	for i := range states {
		states[i].PS = i
	}
	id.PowerStates, id.NPSS = states, len(states)-1
	return &id
}

// The drives. Model strings, PCI IDs and the shape of the tables follow
// published `nvme id-ctrl` outputs of these models; the power and latency
// figures are illustrative (docs/states.md says which are assumed), chosen
// to exercise the kernel's rules, not to document the drives.
var (
	evoPlus = withPS(Identify{VID: 0x144d, SSVID: 0x144d, Serial: "S4EWNX0N912345A", Model: "Samsung SSD 970 EVO Plus 1TB", Firmware: "2B2QEXM7", APSTA: true},
		ps(7.50, false, 0, 0, 0), ps(5.90, false, 0, 0, 1), ps(3.60, false, 0, 0, 2),
		ps(0.0700, true, 210, 1200, 3), ps(0.0050, true, 2000, 8000, 4))
	a2000 = withPS(Identify{VID: 0x2646, SSVID: 0x2646, Serial: "50026B76839F1234", Model: "KINGSTON SA2000M81000G", Firmware: "S5Z42105", APSTA: true},
		ps(9.00, false, 0, 0, 0), ps(4.60, false, 0, 0, 1), ps(3.80, false, 0, 0, 2),
		ps(0.0450, true, 2000, 2000, 3), ps(0.0040, true, 15000, 15000, 4))
	xg3 = withPS(Identify{VID: 0x1179, SSVID: 0x1179, Serial: "76PS10ABCDEF", Model: "THNSF5256GPUK TOSHIBA", Firmware: "51055KLA", APSTA: true},
		ps(6.00, false, 0, 0, 0), ps(2.40, false, 0, 0, 1), ps(1.90, false, 0, 0, 2),
		ps(0.0120, true, 5000, 10000, 3), ps(0.0060, true, 10000, 40000, 4))
)
