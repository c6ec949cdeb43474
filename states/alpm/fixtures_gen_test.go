package alpm

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/idlewatt/idlewatt/internal/testutil"
)

// TestGenerateFixtures builds the sysfs trees fixtures/sysfs/*/sys.tree
// from the specs below and checks that the committed archives still hold
// them; go test ./states/alpm -run TestGenerateFixtures -update rewrites
// them (then a second -update run refreshes the expected outputs read from
// them).

const fixtureDir = "../../fixtures/sysfs"

func ptr[T any](v T) *T { return &v }

// Realistic register values: a mobile Intel PCH AHCI (CAP 0xe734ff80 +
// NP, CAP2 0x3c: APST SDS SADM DESO), a desktop chipset with six ports,
// staggered spin-up and eSATA (CAP.SXS, SSS; CAP2 APST only), and an older
// add-in controller without CAP2 features.
var fixtureTrees = map[string]Tree{
	"laptop-devslp": {Controllers: []Controller{{
		PCI: "0000:00:17.0", Caps: 0xe734ff80, Cap2: 0x3c,
		Ports: []TreePort{{
			Policy: MinPower, Cmd: 0x0c00c017, DevSlp: ptr(uint32(1000<<15 | 10<<10 | 20<<2 | 3)),
			Drive: &DriveSpec{Model: "Samsung SSD 860 EVO 500GB", Serial: "S3Z1NB0K123456A", Firmware: "RVT04B6Q",
				Sectors: 976773168, HIPM: true, DIPM: true, DIPMEnabled: true, DevSlp: true, DevSlpEnabled: true,
				Log: true, LogValid: true, MDATms: 10, DETOms: 30},
		}},
	}}},
	"desktop-6port-617": {Controllers: []Controller{{
		PCI: "0000:00:17.0", Caps: 0xef34ffa5, Cap2: 0x04,
		Ports: []TreePort{
			{Policy: MedPowerWithDIPM, Cmd: 0x0400c017, Drive: &DriveSpec{Model: "CT1000MX500SSD1", Serial: "2117E59A1B2C", Firmware: "M3CR033",
				Sectors: 1953525168, HIPM: true, DIPM: true, DIPMEnabled: true, DevSlp: true}},
			{Policy: MedPowerWithDIPM, Cmd: 0x0400c017, Drive: &DriveSpec{Model: "WDC WD40EFRX-68N32N0", Serial: "WD-WCC7K1234567", Firmware: "82.00A82",
				Sectors: 7814037168, Rotational: true, HIPM: true}},
			{Policy: MedPowerWithDIPM, Cmd: 0x04000016},
			{Policy: MedPowerWithDIPM, Cmd: 0x0400c017, Drive: &DriveSpec{Model: "KINGSTON SA400S37240G", Serial: "50026B7682A1B2C3", Firmware: "SBFKB1D2",
				Sectors: 468862128, HIPM: true, DIPM: true, DIPMEnabled: true}},
			{Policy: MaxPerformance, Cmd: 0x0024c017, Drive: &DriveSpec{Model: "ST2000DM008-2FR102", Serial: "ZFL1ABCD", Firmware: "0001",
				Sectors: 3907029168, Rotational: true, SataSpd: "3.0 Gbps"}},
			{Policy: MaxPerformance, Cmd: 0x00240016},
		},
	}}},
	"old-kernel": {OldKernel: true, Controllers: []Controller{{
		PCI: "0000:01:00.1", Caps: 0xf731ff01, Cap2: 0x00,
		Ports: []TreePort{
			{Policy: MaxPerformance, Cmd: 0x0000c017, Drive: &DriveSpec{Model: "WDC WDS500G2B0A-00SM50", Serial: "19123A456789", Firmware: "401000WD",
				Sectors: 976773168, HIPM: true, DIPM: true, DIPMEnabled: true, DevSlp: true}},
			{Policy: MaxPerformance, Cmd: 0x00000016},
		},
	}}},
	"no-dipm": {Controllers: []Controller{{
		PCI: "0000:00:1f.2", Caps: 0xe734ff80, Cap2: 0x3c,
		Ports: []TreePort{{
			Policy: MinPowerWithPartial, Cmd: 0x0400c017, DevSlp: ptr(uint32(625<<15 | 1<<25 | 10<<10 | 2)),
			Drive: &DriveSpec{Model: "SanDisk SDSSDP064G", Serial: "131402401234", Firmware: "2.0.0",
				Sectors: 125045424, HIPM: true, DevSlp: true, Log: true, LogValid: false},
		}},
	}}},
	"malformed": {Controllers: []Controller{{
		PCI: "0000:00:17.0", Caps: 0xe734ff83, Cap2: 0x3c,
		Ports: []TreePort{
			{Cmd: 0x0400c017, Drive: &DriveSpec{Model: "Short Id Drive", Serial: "SHORT1", Firmware: "1", Sectors: 1 << 20, HIPM: true}},
			{Cmd: 0x0400c017, Drive: &DriveSpec{Model: "Bad Caps Drive", Serial: "CAPS1", Firmware: "1", Sectors: 1 << 20, HIPM: true, DIPM: true, DevSlp: true, Log: true, LogValid: true, DETOms: 50}},
			{Cmd: 0x0400c017, Drive: &DriveSpec{Model: "Bad Checksum", Serial: "SUM1", Firmware: "1", Sectors: 1 << 20}},
			{Cmd: 0x0400c017},
		},
	}}},
}

// malform applies the hand-made damage of the malformed scenario.
func malform(t *testing.T, root string) {
	w := func(rel, s string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// host0: id cut short after 200 words, a typo in the policy.
	id := DriveSpec{Model: "Short Id Drive", Serial: "SHORT1", Firmware: "1", Sectors: 1 << 20, HIPM: true}.Words().Format()
	w("class/ata_device/dev1.0/id", string(id[:200*5]))
	w("class/scsi_host/host0/link_power_management_policy", "min_powr\n")
	// host1: caps not hex, cap2 empty, supported neither 0 nor 1, and a
	// log dump with a missing line.
	w("class/scsi_host/host1/ahci_host_caps", "zz12\n")
	w("class/scsi_host/host1/ahci_host_cap2", "\n")
	w("class/scsi_host/host1/link_power_management_supported", "2\n")
	lp := DriveSpec{LogValid: true, DETOms: 50}.LogPage()
	dump := FormatHexDump(lp)
	w("class/ata_device/dev2.0/"+LogPageFile, string(dump[:3*len(dump)/32*1])+string(dump[len(dump)/2:]))
	// host2: a word with a non-hex digit would fail parsing; instead break
	// the checksum and put control bytes in the model string.
	ws := DriveSpec{Model: "Bad Checksum", Serial: "SUM1", Firmware: "1", Sectors: 1 << 20}.Words()
	ws[27] = 0x4207 // 'B', BEL
	w("class/ata_device/dev3.0/id", string(ws.Format()))
	// host9: a plain directory (no symlink, no ata port in its path),
	// as a hand-made or half-torn-down tree may have.
	w("class/scsi_host/host9/link_power_management_policy", "max_performance\n")
	w("class/scsi_host/host9/ahci_port_cmd", "0x00240000\n")
}

func TestGenerateFixtures(t *testing.T) {
	for name, tree := range fixtureTrees {
		root := t.TempDir()
		if _, err := BuildTree(root, tree); err != nil {
			t.Fatal(err)
		}
		if name == "malformed" {
			malform(t, root)
		}
		var b bytes.Buffer
		fmt.Fprintf(&b, "sysfs tree archive for scenario %s; format: docs/states.md.\n"+
			"Generated by go test ./states/alpm -run TestGenerateFixtures -update.\n", name)
		if err := WriteTreeArchive(&b, root); err != nil {
			t.Fatal(err)
		}
		testutil.Golden(t, filepath.Join(fixtureDir, name, "sys.tree"), b.Bytes())
	}
}

// fixtureRoot extracts a scenario's tree into a fresh directory.
func fixtureRoot(t testing.TB, name string) string {
	t.Helper()
	return testutil.Extract(t, filepath.Join(fixtureDir, name, "sys.tree"), ExtractTreeArchive)
}
