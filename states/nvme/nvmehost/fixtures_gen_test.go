package nvmehost

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/idlewatt/idlewatt/internal/testutil"
	"github.com/idlewatt/idlewatt/states/alpm"
	"github.com/idlewatt/idlewatt/states/nvme"
)

// TestGenerateFixtures builds
// fixtures/sysfs/nvme-*/{sys.tree,nvme0.id-ctrl.bin,nvme0.apst.bin} from
// the specs below and checks the committed files against them; go test
// ./states/nvme/nvmehost -run TestGenerateFixtures -update rewrites them (then a
// second -update run refreshes the expected outputs read from them).

const fixtureDir = "../../../fixtures/sysfs"

// ps builds a descriptor: max power in W (scale chosen as a drive would:
// 0.0001 W units below 1 W), operational or not, latencies in µs.
func ps(mpW float64, nonOp bool, enlat, exlat uint32, rank int) nvme.PowerState {
	p := nvme.PowerState{NonOperational: nonOp, EntryLatencyUs: enlat, ExitLatencyUs: exlat, RRT: rank, RRL: rank, RWT: rank, RWL: rank}
	if mpW < 1 {
		p.MaxPowerScale, p.MaxPowerRaw = 1, uint16(mpW*10000+0.5)
	} else {
		p.MaxPowerRaw = uint16(mpW*100 + 0.5)
	}
	return p
}

func withPS(id nvme.Identify, states ...nvme.PowerState) *nvme.Identify {
	for i := range states {
		states[i].PS = i
	}
	id.PowerStates, id.NPSS = states, len(states)-1
	// Encode and decode: the decoder derives the typed powers from the
	// raw fields, as it does for a drive's data.
	dec, err := nvme.DecodeIdentify(id.Encode())
	if err != nil {
		panic(err) // the specs below are fixed; a failure is a bug in them
	}
	return dec
}

// The drives. Model strings, PCI IDs and the shape of the tables follow
// published `nvme id-ctrl` outputs of these models; the power and latency
// figures are illustrative (docs/states.md says which are assumed), chosen
// to exercise the kernel's rules, not to document the drives.
var (
	evoPlus = withPS(nvme.Identify{VID: 0x144d, SSVID: 0x144d, Serial: "S4EWNX0N912345A", Model: "Samsung SSD 970 EVO Plus 1TB", Firmware: "2B2QEXM7", APSTA: true},
		ps(7.50, false, 0, 0, 0), ps(5.90, false, 0, 0, 1), ps(3.60, false, 0, 0, 2),
		ps(0.0700, true, 210, 1200, 3), ps(0.0050, true, 2000, 8000, 4))
	a2000 = withPS(nvme.Identify{VID: 0x2646, SSVID: 0x2646, Serial: "50026B76839F1234", Model: "KINGSTON SA2000M81000G", Firmware: "S5Z42105", APSTA: true},
		ps(9.00, false, 0, 0, 0), ps(4.60, false, 0, 0, 1), ps(3.80, false, 0, 0, 2),
		ps(0.0450, true, 2000, 2000, 3), ps(0.0040, true, 15000, 15000, 4))
	xg3 = withPS(nvme.Identify{VID: 0x1179, SSVID: 0x1179, Serial: "76PS10ABCDEF", Model: "THNSF5256GPUK TOSHIBA", Firmware: "51055KLA", APSTA: true},
		ps(6.00, false, 0, 0, 0), ps(2.40, false, 0, 0, 1), ps(1.90, false, 0, 0, 2),
		ps(0.0120, true, 5000, 10000, 3), ps(0.0060, true, 10000, 40000, 4))
)

var linkAllOn = map[string]bool{"clkpm": true, "l0s_aspm": false, "l1_aspm": true, "l1_1_aspm": true, "l1_2_aspm": true, "l1_1_pcipm": true, "l1_2_pcipm": true}
var linkAllOff = map[string]bool{"clkpm": false, "l0s_aspm": false, "l1_aspm": false, "l1_1_aspm": false, "l1_2_aspm": false, "l1_1_pcipm": false, "l1_2_pcipm": false}

func ctrl(id *nvme.Identify, vendor, device uint16, tol string, link map[string]bool) nvme.TreeController {
	return nvme.TreeController{Name: "nvme0", PCI: "0000:02:00.0", RootPort: "0000:00:1d.0", Vendor: vendor, Device: device,
		Identify: id, Tolerance: tol, Link: link, PowerMgmt: &nvme.PowerManagement{PS: 0}}
}

var fixtureLaptops = map[string]nvme.Laptop{
	"nvme-apst-ok": {DMI: nvme.DMI{SysVendor: "LENOVO", ProductName: "21CBCTO1WW", BoardVendor: "LENOVO", BoardName: "21CBCTO1WW"},
		ASPMPolicy: "powersupersave", Ctrls: []nvme.TreeController{ctrl(evoPlus, 0x144d, 0xa808, "100000", linkAllOn)}},
	"nvme-quirk-no-apst": {DMI: nvme.DMI{SysVendor: "Dell Inc.", ProductName: "XPS 13 9350", BoardVendor: "Dell Inc.", BoardName: "0JHRJ3"},
		ASPMPolicy: "powersupersave", Ctrls: []nvme.TreeController{ctrl(xg3, 0x1179, 0x010f, "", linkAllOn)}},
	"nvme-tolerance-low": {DMI: nvme.DMI{SysVendor: "HP", ProductName: "HP EliteBook 840 G8 Notebook PC", BoardVendor: "HP", BoardName: "880D"},
		ASPMPolicy: "powersupersave", Module: nvme.ModuleParams{DefaultPSMaxLatencyUs: new(uint64(5500))},
		Ctrls: []nvme.TreeController{ctrl(evoPlus, 0x144d, 0xa808, "5500", linkAllOn)}},
	"nvme-aspm-off": {DMI: nvme.DMI{SysVendor: "ASUSTeK COMPUTER INC.", ProductName: "ZenBook UX425EA_UX425EA", BoardVendor: "ASUSTeK COMPUTER INC.", BoardName: "UX425EA"},
		ASPMPolicy: "default", Ctrls: []nvme.TreeController{ctrl(evoPlus, 0x144d, 0xa808, "100000", linkAllOff)}},
	"nvme-no-deepest": {DMI: nvme.DMI{SysVendor: "Framework", ProductName: "Laptop (12th Gen Intel Core)", BoardVendor: "Framework", BoardName: "FRANMACP04"},
		ASPMPolicy: "powersupersave", Ctrls: []nvme.TreeController{ctrl(a2000, 0x2646, 0x2263, "100000", linkAllOn)}},
}

// NVMeScenarios are the fixture directories this package owns.
var NVMeScenarios = []string{"nvme-apst-ok", "nvme-quirk-no-apst", "nvme-tolerance-low", "nvme-aspm-off", "nvme-no-deepest"}

func TestGenerateFixtures(t *testing.T) {
	for name, l := range fixtureLaptops {
		for i := range l.Ctrls {
			l.Ctrls[i].APST = nvme.KernelFeature(l, l.Ctrls[i])
		}
		root := t.TempDir()
		if err := BuildTree(root, l); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(fixtureDir, name)
		var b bytes.Buffer
		fmt.Fprintf(&b, "sysfs tree archive for scenario %s; format: docs/states.md.\n"+
			"Generated by go test ./states/nvme/nvmehost -run TestGenerateFixtures -update.\n", name)
		if err := alpm.WriteTreeArchive(&b, root); err != nil {
			t.Fatal(err)
		}
		testutil.Golden(t, filepath.Join(dir, "sys.tree"), b.Bytes())
		c := l.Ctrls[0]
		testutil.Golden(t, filepath.Join(dir, "nvme0.id-ctrl.bin"), c.Identify.Encode())
		testutil.Golden(t, filepath.Join(dir, "nvme0.apst.bin"), nvme.EncodeAPSTTable(c.APST.Entries))
	}
}

// fixtureRoot extracts a scenario's tree into a fresh directory.
func fixtureRoot(t testing.TB, name string) string {
	t.Helper()
	return testutil.Extract(t, filepath.Join(fixtureDir, name, "sys.tree"), alpm.ExtractTreeArchive)
}
