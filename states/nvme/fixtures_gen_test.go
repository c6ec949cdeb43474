package nvme

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/idlewatt/idlewatt/internal/testutil"
	"github.com/idlewatt/idlewatt/states/alpm"
)

// go test ./states/nvme -run TestGenerateFixtures -gen rebuilds
// fixtures/sysfs/nvme-*/{sys.tree,nvme0.id-ctrl.bin,nvme0.apst.bin} from
// the specs below (then run -update to refresh the expected outputs).
var gen = flag.Bool("gen", false, "rebuild fixtures/sysfs/nvme-* trees and dumps")

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

var linkAllOn = map[string]bool{"clkpm": true, "l0s_aspm": false, "l1_aspm": true, "l1_1_aspm": true, "l1_2_aspm": true, "l1_1_pcipm": true, "l1_2_pcipm": true}
var linkAllOff = map[string]bool{"clkpm": false, "l0s_aspm": false, "l1_aspm": false, "l1_1_aspm": false, "l1_2_aspm": false, "l1_1_pcipm": false, "l1_2_pcipm": false}

func ctrl(id *Identify, vendor, device uint16, tol string, link map[string]bool) TreeController {
	return TreeController{Name: "nvme0", PCI: "0000:02:00.0", RootPort: "0000:00:1d.0", Vendor: vendor, Device: device,
		Identify: id, Tolerance: tol, Link: link, PowerMgmt: &PowerManagement{PS: 0}}
}

var fixtureLaptops = map[string]Laptop{
	"nvme-apst-ok": {DMI: DMI{SysVendor: "LENOVO", ProductName: "21CBCTO1WW", BoardVendor: "LENOVO", BoardName: "21CBCTO1WW"},
		ASPMPolicy: "powersupersave", Ctrls: []TreeController{ctrl(evoPlus, 0x144d, 0xa808, "100000", linkAllOn)}},
	"nvme-quirk-no-apst": {DMI: DMI{SysVendor: "Dell Inc.", ProductName: "XPS 13 9350", BoardVendor: "Dell Inc.", BoardName: "0JHRJ3"},
		ASPMPolicy: "powersupersave", Ctrls: []TreeController{ctrl(xg3, 0x1179, 0x010f, "", linkAllOn)}},
	"nvme-tolerance-low": {DMI: DMI{SysVendor: "HP", ProductName: "HP EliteBook 840 G8 Notebook PC", BoardVendor: "HP", BoardName: "880D"},
		ASPMPolicy: "powersupersave", Module: ModuleParams{DefaultPSMaxLatencyUs: new(uint64(5500))},
		Ctrls: []TreeController{ctrl(evoPlus, 0x144d, 0xa808, "5500", linkAllOn)}},
	"nvme-aspm-off": {DMI: DMI{SysVendor: "ASUSTeK COMPUTER INC.", ProductName: "ZenBook UX425EA_UX425EA", BoardVendor: "ASUSTeK COMPUTER INC.", BoardName: "UX425EA"},
		ASPMPolicy: "default", Ctrls: []TreeController{ctrl(evoPlus, 0x144d, 0xa808, "100000", linkAllOff)}},
	"nvme-no-deepest": {DMI: DMI{SysVendor: "Framework", ProductName: "Laptop (12th Gen Intel Core)", BoardVendor: "Framework", BoardName: "FRANMACP04"},
		ASPMPolicy: "powersupersave", Ctrls: []TreeController{ctrl(a2000, 0x2646, 0x2263, "100000", linkAllOn)}},
}

// NVMeScenarios are the fixture directories this package owns.
var NVMeScenarios = []string{"nvme-apst-ok", "nvme-quirk-no-apst", "nvme-tolerance-low", "nvme-aspm-off", "nvme-no-deepest"}

func TestGenerateFixtures(t *testing.T) {
	if !*gen {
		t.Skip("run with -gen to rebuild the fixture trees")
	}
	for name, l := range fixtureLaptops {
		for i := range l.Ctrls {
			l.Ctrls[i].APST = KernelFeature(l, l.Ctrls[i])
		}
		root := t.TempDir()
		if err := BuildTree(root, l); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(fixtureDir, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(filepath.Join(dir, "sys.tree"))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "sysfs tree archive for scenario %s; format: docs/states.md.\n"+
			"Generated by go test ./states/nvme -run TestGenerateFixtures -gen.\n", name)
		if err := alpm.WriteTreeArchive(f, root); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		c := l.Ctrls[0]
		if err := os.WriteFile(filepath.Join(dir, "nvme0.id-ctrl.bin"), c.Identify.Encode(), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "nvme0.apst.bin"), EncodeAPSTTable(c.APST.Entries), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fixtureRoot extracts a scenario's tree into a fresh directory.
func fixtureRoot(t testing.TB, name string) string {
	t.Helper()
	return testutil.Extract(t, filepath.Join(fixtureDir, name, "sys.tree"), alpm.ExtractTreeArchive)
}
