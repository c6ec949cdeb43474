package nvmehost

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/internal/testutil"
	"github.com/idlewatt/idlewatt/states/nvme"
)

// go test ./states/nvme -update rewrites fixtures/sysfs/nvme-*/expected.{json,txt}
// (testutil.Update).

const placeholder = "SYSFS_ROOT"

func render(t *testing.T, name string, opt Options) (*nvme.System, []byte, []byte) {
	t.Helper()
	root := fixtureRoot(t, name)
	sys := Open(root, opt)
	sys.Root = placeholder
	js, err := json.MarshalIndent(sys, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var txt bytes.Buffer
	if err := sys.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	return sys, append(js, '\n'), txt.Bytes()
}

func TestScenariosGolden(t *testing.T) {
	for _, name := range NVMeScenarios {
		t.Run(name, func(t *testing.T) {
			_, js, txt := render(t, name, Options{})
			testutil.Golden(t, filepath.Join(fixtureDir, name, "expected.json"), js)
			testutil.Golden(t, filepath.Join(fixtureDir, name, "expected.txt"), txt)
		})
	}
}

// Dumps given by flag decode to what the tree's nvme-cli JSON holds.
func TestFileInputsMatchTree(t *testing.T) {
	for _, name := range NVMeScenarios {
		dir := filepath.Join(fixtureDir, name)
		tree, _, _ := render(t, name, Options{})
		files, _, _ := render(t, name, Options{Files: map[string]Files{"nvme0": {
			IDCtrl: filepath.Join(dir, "nvme0.id-ctrl.bin"), APST: filepath.Join(dir, "nvme0.apst.bin")}}})
		a, b := tree.Ctrls[0], files.Ctrls[0]
		if !equalIdentify(a.Identify, b.Identify) || !strings.HasPrefix(b.IdentifySource, "file ") || b.APST.Enabled != nil {
			t.Errorf("%s: identify differs or wrong source %q", name, b.IdentifySource)
		}
		for i := range a.APST.Entries {
			if a.APST.Entries[i] != b.APST.Entries[i] {
				t.Errorf("%s: APST entry %d", name, i)
			}
		}
		if len(files.Problems) != 0 {
			t.Errorf("%s: %v", name, files.Problems)
		}
	}
}

func writeFile(t *testing.T, root, rel, s string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestMalformedFilesAreProblems(t *testing.T) {
	root := fixtureRoot(t, "nvme-apst-ok")
	c := "class/nvme/nvme0/"
	writeFile(t, root, c+nvme.FileTolerance, "lots\n")
	writeFile(t, root, c+nvme.FileIDCtrl, strings.Replace(string(evoPlus.IdentifyJSON()), `"exit_lat"`, `"exit_latency"`, 1))
	writeFile(t, root, c+nvme.FileFeature0C, "{")
	writeFile(t, root, "module/pcie_aspm/parameters/policy", "default performance\n")
	writeFile(t, root, "module/nvme_core/parameters/force_apst", "maybe\n")
	writeFile(t, root, "bus/pci/devices/0000:02:00.0/link/l1_2_aspm", "2\n")
	sys := Open(root, Options{Files: map[string]Files{"nvme0": {PowerMgmt: filepath.Join(root, "missing")}}})
	all := strings.Join(sys.Problems, "\n")
	for _, want := range []string{
		c + nvme.FileTolerance + `: "lots", want auto, any or microseconds`,
		c + nvme.FileIDCtrl + `: id-ctrl JSON.psds[0]: missing key "exit_lat"`,
		c + nvme.FileFeature0C + ": get-feature 0x0c JSON: JSON at byte",
		`module/pcie_aspm/parameters/policy: "default performance": no [current] policy`,
		`force_apst: "maybe", want Y or N`,
		`link/l1_2_aspm: "2", want 0 or 1`,
		filepath.Join(root, "missing") + ": open",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no problem %q in:\n%s", want, all)
		}
	}
	e := sys.Ctrls[0].Eligibility
	if e.Verdict == "eligible" {
		t.Errorf("eligible with unreadable inputs: %+v", e)
	}
}

func TestNoNVMe(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "module/pcie_aspm/parameters/policy", "[default] performance powersave powersupersave \n")
	sys := Open(root, Options{})
	if len(sys.Ctrls) != 0 || len(sys.Problems) != 0 || sys.ASPMPolicy.Current != "default" {
		t.Errorf("%+v", sys)
	}
	var b strings.Builder
	sys.WriteText(&b)
	if !strings.Contains(b.String(), "NVMe: no controllers") {
		t.Error(b.String())
	}
}

// Behind a PCIe switch: two links, the second one with L1.2 off fails.
func TestSwitchLinks(t *testing.T) {
	root := t.TempDir()
	l := fixtureLaptops["nvme-apst-ok"]
	c := l.Ctrls[0]
	c.RootPort = "0000:00:1c.0/0000:01:00.0/0000:02:01.0"
	c.PCI = "0000:03:00.0"
	l.Ctrls = []nvme.TreeController{c}
	if err := BuildTree(root, l); err != nil {
		t.Fatal(err)
	}
	sw := "devices/pci0000:00/0000:00:1c.0/0000:01:00.0/0000:02:01.0/link/"
	writeFile(t, root, sw+"l1_aspm", "1\n")
	writeFile(t, root, sw+"l1_2_aspm", "0\n")
	sys := Open(root, Options{})
	links := sys.Ctrls[0].PCI.Links
	if len(links) != 3 || links[0].Upstream != "0000:02:01.0" || links[1].Downstream != "0000:02:01.0" || links[2].Present {
		t.Fatalf("%+v", links)
	}
	e := sys.Ctrls[0].Eligibility
	if strings.Join(e.Failed, ",") != "ASPM L1.2" {
		t.Errorf("failed %v: %+v", e.Failed, e.Checks)
	}
}

// equalIdentify compares two decodings of a drive, the typed idle and
// active powers left out (pointers), as states/nvme's decode tests do.
func equalIdentify(a, b *nvme.Identify) bool {
	if a.VID != b.VID || a.Model != b.Model || a.Serial != b.Serial || a.Firmware != b.Firmware || a.NPSS != b.NPSS || a.APSTA != b.APSTA || len(a.PowerStates) != len(b.PowerStates) {
		return false
	}
	for i := range a.PowerStates {
		x, y := a.PowerStates[i], b.PowerStates[i]
		x.IdlePower, x.ActivePower, y.IdlePower, y.ActivePower = nil, nil, nil, nil
		if x != y {
			return false
		}
	}
	return true
}
