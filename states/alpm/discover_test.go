package alpm

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/internal/testutil"
)

// go test ./states/alpm -update rewrites fixtures/sysfs/*/expected.{json,txt}
// (testutil.Update).

// Scenarios are the fixture trees under fixtures/sysfs.
var Scenarios = []string{"laptop-devslp", "desktop-6port-617", "old-kernel", "no-dipm", "malformed"}

// placeholder replaces the temporary root in golden outputs.
const placeholder = "SYSFS_ROOT"

// render discovers a scenario and returns its JSON and text forms.
func render(t *testing.T, name string) (*System, []byte, []byte) {
	t.Helper()
	root := fixtureRoot(t, name)
	sys, err := Open(root).Discover()
	if err != nil {
		t.Fatal(err)
	}
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
	for _, name := range Scenarios {
		t.Run(name, func(t *testing.T) {
			_, js, txt := render(t, name)
			testutil.Golden(t, filepath.Join(fixtureDir, name, "expected.json"), js)
			testutil.Golden(t, filepath.Join(fixtureDir, name, "expected.txt"), txt)
		})
	}
}

func host(t *testing.T, sys *System, name string) *Host {
	t.Helper()
	for i := range sys.Hosts {
		if sys.Hosts[i].Name == name {
			return &sys.Hosts[i]
		}
	}
	t.Fatalf("no host %s in %v", name, sys.Hosts)
	return nil
}

func TestLaptopDevSlpEligible(t *testing.T) {
	sys, _, _ := render(t, "laptop-devslp")
	h := host(t, sys, "host0")
	if h.Port != "ata1" || h.Policy != MinPower || h.LPMSupported == nil || !*h.LPMSupported {
		t.Fatalf("host0: port %q policy %q supported %v", h.Port, h.Policy, h.LPMSupported)
	}
	if len(h.Devices) != 1 || h.Devices[0].Block != "sda" || h.Devices[0].Name != "dev1.0" {
		t.Fatalf("devices %+v, want dev1.0 on sda (dev1.1 is an empty slot)", h.Devices)
	}
	d := h.Devices[0]
	if d.Identify.Model != "Samsung SSD 860 EVO 500GB" || d.Identify.Serial != "S3Z1NB0K123456A" || d.Identify.Checksum != "ok" {
		t.Errorf("identify %+v", d.Identify)
	}
	if !d.Identify.HIPM || !d.Identify.DIPMEnabled || !d.Identify.DevSlpSupported || !d.Identify.DevSlpEnabled {
		t.Errorf("identify flags %+v", d.Identify)
	}
	if !d.LogPage.Available || d.LogPage.DETOms != 30 || d.LogPage.DETOFrom != "drive" || d.LogPage.MDATms != 10 {
		t.Errorf("log page %+v", d.LogPage)
	}
	if !d.DevSlp.Eligible() || len(d.DevSlp.Failed)+len(d.DevSlp.Unknown) != 0 {
		t.Errorf("DevSlp %+v, want eligible", d.DevSlp)
	}
	if len(sys.Problems) != 0 {
		t.Errorf("problems %v", sys.Problems)
	}
}

func TestDesktopExternalPorts(t *testing.T) {
	sys, _, _ := render(t, "desktop-6port-617")
	if len(sys.Hosts) != 6 {
		t.Fatalf("%d hosts, want 6", len(sys.Hosts))
	}
	for i, h := range sys.Hosts {
		ext := i >= 4
		if h.External != ext || h.LPMSupported == nil || *h.LPMSupported == ext {
			t.Errorf("%s: external %v supported %v, want external %v", h.Name, h.External, *h.LPMSupported, ext)
		}
	}
	h4 := host(t, sys, "host4")
	if got := h4.Devices[0].DevSlp.Failed; !contains(got, CheckPolicy) {
		t.Errorf("host4 failed %v, want policy (LPM unsupported)", got)
	}
	h0 := host(t, sys, "host0")
	f := h0.Devices[0].DevSlp.Failed
	if !contains(f, CheckPolicy) || !contains(f, CheckSDS) || !contains(f, CheckSADM) || contains(f, CheckDriveSupport) {
		t.Errorf("host0 failed %v, want policy, SDS, SADM (drive supports DevSlp)", f)
	}
	if b := host(t, sys, "host1").Devices[0].Block; b != "sdb" {
		t.Errorf("host1 block %q, want sdb", b)
	}
	if n := len(host(t, sys, "host2").Devices); n != 0 {
		t.Errorf("empty port host2 has %d devices", n)
	}
	if host(t, sys, "host1").Devices[0].Identify.DIPMSupported {
		t.Error("the WD Red has no DIPM in this fixture")
	}
}

func TestOldKernelSupportUnknown(t *testing.T) {
	sys, _, txt := render(t, "old-kernel")
	h := host(t, sys, "host0")
	if h.LPMSupported != nil {
		t.Errorf("LPMSupported %v, want nil (no file)", *h.LPMSupported)
	}
	if !strings.Contains(string(txt), "kernel before 6.17") {
		t.Error("text does not say support is unknown on an old kernel")
	}
	if !strings.Contains(string(txt), "unknown, defaults assumed") {
		t.Error("text does not say the log page is unknown")
	}
}

func TestNoDIPMSlumberFirst(t *testing.T) {
	sys, _, _ := render(t, "no-dipm")
	d := host(t, sys, "host0").Devices[0]
	if d.Identify.DIPMSupported {
		t.Fatal("drive should lack DIPM")
	}
	if got := d.DevSlp.Failed; len(got) != 1 || got[0] != CheckSlumberFirst {
		t.Errorf("failed %v, want only %q", got, CheckSlumberFirst)
	}
	if d.LogPage.Valid || d.LogPage.MDATms != DefaultMDATms || !strings.Contains(d.LogPage.MDATFrom, "valid bit clear") {
		t.Errorf("log page %+v, want defaults for a clear valid bit", d.LogPage)
	}
	// The same drive under min_power needs no DIPM to reach Slumber.
	h := *host(t, sys, "host0")
	h.Policy = MinPower
	if e := DevSlpEligible(&h, &d); len(e.Failed) != 0 {
		t.Errorf("under min_power: failed %v", e.Failed)
	}
	if p := host(t, sys, "host0").PortDevSlp; p == nil || p.IdleMs != 1250 || !p.DSP {
		t.Errorf("PxDEVSLP %+v, want DSP and DITO 625 × (DM 1 + 1) = 1250 ms", p)
	}
}

func TestMalformedNeverStops(t *testing.T) {
	sys, _, _ := render(t, "malformed")
	want := []string{
		"dev1.0/id: 200 words, want 256",
		"host0/link_power_management_policy: unknown policy min_powr; did you mean min_power?",
		`host1/ahci_host_caps: "zz12" is not a 32-bit hex number`,
		"host1/ahci_host_cap2: empty",
		"host1/link_power_management_supported: \"2\", want 0 or 1",
		"dev2.0/" + LogPageFile + ": line",
		"dev3.0/id: IDENTIFY checksum",
	}
	all := strings.Join(sys.Problems, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("problems lack %q:\n%s", w, all)
		}
	}
	h0 := host(t, sys, "host0")
	if e := h0.Devices[0].DevSlp; h0.Devices[0].Identify != nil || e.Verdict != verdictUnknown ||
		!contains(e.Unknown, CheckDriveSupport) || !contains(e.Unknown, CheckPolicy) {
		t.Errorf("host0 dev: identify %v, DevSlp %+v; want unknown policy and drive support", h0.Devices[0].Identify, e)
	}
	if h1 := host(t, sys, "host1"); h1.Caps != nil || h1.Cap2 != nil || h1.PortCmd == nil {
		t.Errorf("host1 caps %v cap2 %v cmd %v", h1.Caps, h1.Cap2, h1.PortCmd)
	}
	if m := host(t, sys, "host2").Devices[0].Identify.Model; m != "B?d Checksum" {
		t.Errorf("model %q, want the BEL byte shown as '?'", m)
	}
	h9 := host(t, sys, "host9")
	if h9.Port != "" || !h9.External || h9.Policy != MaxPerformance {
		t.Errorf("host9 %+v", h9)
	}
}

func TestDiscoverNotSysfs(t *testing.T) {
	_, err := Open(t.TempDir()).Discover()
	if err == nil || !strings.Contains(err.Error(), "no class/scsi_host") {
		t.Fatalf("err %v", err)
	}
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}
