package nvme

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A power-state descriptor written byte by byte from the NVMe base spec
// (figure 276), not through Encode, so the offsets are checked
// independently:
//
//	00: bc 02        MP 700
//	02: 00           reserved
//	03: 03           MXPS=1 (0.0001 W units) NOPS=1
//	04: d2 00 00 00  ENLAT 210 µs
//	08: b0 04 00 00  EXLAT 1200 µs
//	0c: 03 03 03 03  RRT RRL RWT RWL
//	10: 32 00 40     IDLP 50, IPS 01b (bits 7:6) → 0.0050 W
//	14: 2c 01 83     ACTP 300, APW 3, APS 10b → 3.00 W
var psd3 = []byte{0xbc, 0x02, 0x00, 0x03, 0xd2, 0, 0, 0, 0xb0, 0x04, 0, 0, 3, 3, 3, 3, 0x32, 0x00, 0x40, 0x00, 0x2c, 0x01, 0x83}

func rawIdentify() []byte {
	b := make([]byte, IdentifySize)
	b[0], b[1] = 0x4d, 0x14 // VID 0x144d
	copy(b[4:], "S123                ")
	copy(b[24:], "Test SSD                                ")
	copy(b[64:], "FW1     ")
	b[263] = 3 // NPSS: four states
	b[265] = 1 // APSTA
	copy(b[2048+3*32:], psd3)
	return b
}

func TestDecodeIdentifyOffsets(t *testing.T) {
	id, err := DecodeIdentify(rawIdentify())
	if err != nil {
		t.Fatal(err)
	}
	if id.VID != 0x144d || id.Serial != "S123" || id.Model != "Test SSD" || id.Firmware != "FW1" || id.NPSS != 3 || !id.APSTA || len(id.PowerStates) != 4 {
		t.Fatalf("%+v", id)
	}
	p := id.PowerStates[3]
	if !p.NonOperational || p.MaxPowerScale != 1 || p.EntryLatencyUs != 210 || p.ExitLatencyUs != 1200 || p.RRT != 3 || p.RWL != 3 {
		t.Fatalf("PS3 %+v", p)
	}
	if d := float64(p.MaxPower) - 0.07; d > 1e-12 || d < -1e-12 {
		t.Errorf("max power %v, want 0.07 W", p.MaxPower)
	}
	if p.IdlePower == nil || *p.IdlePower != 0.005 || p.ActivePower == nil || *p.ActivePower != 3.0 || p.ActiveWorkload != 3 {
		t.Errorf("idle %v active %v workload %d", p.IdlePower, p.ActivePower, p.ActiveWorkload)
	}
	if p0 := id.PowerStates[0]; p0.NonOperational || p0.IdlePower != nil || p0.MaxPower != 0 {
		t.Errorf("PS0 %+v", p0)
	}
	if id.DeepestNonOperational() != 3 {
		t.Errorf("deepest %d", id.DeepestNonOperational())
	}
	// Encode writes the same bytes back for what it models.
	if enc := id.Encode(); !bytes.Equal(enc[2048+96:2048+96+len(psd3)], psd3) || !bytes.Equal(enc[:72], rawIdentify()[:72]) {
		t.Errorf("encode differs:\n%x\n%x", enc[2048+96:2048+128], psd3)
	}
}

func TestDecodeIdentifyRefusals(t *testing.T) {
	for _, c := range []struct {
		b    []byte
		want string
	}{
		{make([]byte, 4000), "4000 bytes, want 4096"},
		{make([]byte, 4097), "4097 bytes, want 4096"},
		{func() []byte { b := rawIdentify(); b[263] = 40; return b }(), "byte 263 (NPSS) is 40"},
	} {
		if _, err := DecodeIdentify(c.b); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err %v, want %q", err, c.want)
		}
	}
}

func TestIdentifyJSONMatchesBinary(t *testing.T) {
	for _, id := range []*Identify{evoPlus, a2000, xg3} {
		got, err := DecodeIdentifyJSON(id.IdentifyJSON())
		if err != nil {
			t.Fatal(err)
		}
		bin, _ := DecodeIdentify(id.Encode())
		if !equalIdentify(got, bin) {
			t.Errorf("%s: JSON %+v\nbinary %+v", id.Model, got, bin)
		}
	}
}

func equalIdentify(a, b *Identify) bool {
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

// nvme-cli 2.x prints more keys than idlewatt reads (and newer versions
// add emergency power-fail fields); they are ignored.
const nvmeCLIIdentify = `{
  "vid":5197, "ssvid":5197, "sn":"S5GXNF0R123456      ",
  "mn":"Samsung SSD 980 1TB                     ", "fr":"1B4QFXO7",
  "rab":2, "ieee":9528, "npss":1, "avscc":1, "apsta":1, "tnvmcap":1000204886016,
  "psds":[
    {"max_power":550, "max_power_scale":0, "non-operational_state":0, "entry_lat":0, "exit_lat":0,
     "read_tput":0, "read_lat":0, "write_tput":0, "write_lat":0, "idle_power":0, "idle_scale":0,
     "active_power":0, "active_power_work":0, "active_scale":0, "emerg_power_fail_recover_time":0},
    {"max_power":50, "max_power_scale":1, "non-operational_state":1, "entry_lat":1000, "exit_lat":9000,
     "read_tput":1, "read_lat":1, "write_tput":1, "write_lat":1, "idle_power":500, "idle_scale":1,
     "active_power":0, "active_power_work":0, "active_scale":0}
  ]
}`

func TestDecodeIdentifyJSONNVMeCLI(t *testing.T) {
	id, err := DecodeIdentifyJSON([]byte(nvmeCLIIdentify))
	if err != nil {
		t.Fatal(err)
	}
	p := id.PowerStates[1]
	if id.Model != "Samsung SSD 980 1TB" || id.Serial != "S5GXNF0R123456" || id.VID != 0x144d || !p.NonOperational || p.ExitLatencyUs != 9000 ||
		float64(p.MaxPower) != 0.005 || p.IdlePower == nil || float64(*p.IdlePower) != 0.05 {
		t.Errorf("%+v %+v", id, p)
	}
}

func TestDecodeIdentifyJSONRefusals(t *testing.T) {
	for _, c := range []struct{ edit, want string }{
		{`"exit_lat":9000,`, `psds[1]: missing key "exit_lat"`},
		{`"npss":1,`, `missing key "npss"`},
		{`"mn":"Samsung SSD 980 1TB                     ",`, `missing key "mn"`},
		{`"max_power_scale":1,`, `psds[1]: missing key "max_power_scale"`},
	} {
		in := strings.Replace(nvmeCLIIdentify, c.edit, "", 1)
		if in == nvmeCLIIdentify {
			t.Fatalf("edit %q did not apply", c.edit)
		}
		if _, err := DecodeIdentifyJSON([]byte(in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("without %s: %v, want %q", c.edit, err, c.want)
		}
	}
	for _, c := range []struct{ from, to, want string }{
		{`"npss":1`, `"npss":2`, "psds: 2 entries, but npss 2 means 3"},
		{`"exit_lat":9000`, `"exit_lat":-3000000000`, "psds[1].exit_lat: \"-3000000000\" is not a 32-bit latency"}, // -1 is nvme-cli's "%d" of FFFFFFFFh: accepted
		{`"max_power_scale":1`, `"max_power_scale":2`, "max_power_scale: 2 is not an integer from 0 to 1"},
		{`"psds":[`, `"psds":7,"x":[`, "psds: not an array"},
		{`"npss":1,`, `"npss":1`, "id-ctrl JSON: JSON at byte"},
	} {
		in := strings.Replace(nvmeCLIIdentify, c.from, c.to, 1)
		if _, err := DecodeIdentifyJSON([]byte(in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s → %s: %v, want %q", c.from, c.to, err, c.want)
		}
	}
}

func TestAPSTTableBits(t *testing.T) {
	// Entry 0: ITPS 4 (bits 7:3 = 0x20), ITPT 100 ms (bits 31:8 = 0x64).
	b := make([]byte, APSTTableSize)
	copy(b, []byte{0x20, 0x64, 0, 0, 0, 0, 0, 0})
	copy(b[8:], []byte{0x18, 0xd0, 0x07, 0, 0, 0, 0, 0}) // ITPS 3, ITPT 2000
	e, err := DecodeAPSTTable(b)
	if err != nil {
		t.Fatal(err)
	}
	if e[0] != (APSTEntry{ITPS: 4, ITPTms: 100}) || e[1] != (APSTEntry{ITPS: 3, ITPTms: 2000}) || e[2] != (APSTEntry{}) {
		t.Errorf("%v", e[:3])
	}
	if !bytes.Equal(EncodeAPSTTable(e), b) {
		t.Error("encode differs")
	}
	if _, err := DecodeAPSTTable(b[:255]); err == nil || !strings.Contains(err.Error(), "255 bytes, want 256") {
		t.Errorf("short: %v", err)
	}
	if pm := DecodePowerManagement(0x63); pm.PS != 3 || pm.WH != 3 {
		t.Errorf("%+v", pm)
	}
}

func TestAPSTJSONForms(t *testing.T) {
	a := &APST{Enabled: new(true), Entries: []APSTEntry{{4, 100}, {4, 100}, {3, 2000}}}
	got, err := DecodeAPSTJSON(a.APSTJSON())
	if err != nil {
		t.Fatal(err)
	}
	if !*got.Enabled || len(got.Entries) != 32 || got.Entries[2] != (APSTEntry{3, 2000}) || got.Entries[5] != (APSTEntry{}) {
		t.Errorf("%+v", got)
	}
	// The unwrapped form, "Entry" capitalised, no header object.
	var sb strings.Builder
	sb.WriteString(`{"Autonomous Power State Transition Enable (APSTE)":"Disabled","Auto PST Entries":[`)
	for i := range 32 {
		if i > 0 {
			sb.WriteString(",")
		}
		sb.WriteString(`{"Entry":"` + strings.Repeat(" ", 2-len(itoa(i))) + itoa(i) + `","Idle Time Prior to Transition (ITPT)":"0 ms","Idle Transition Power State (ITPS)":0}`)
	}
	sb.WriteString("]}")
	got, err = DecodeAPSTJSON([]byte(sb.String()))
	if err != nil || *got.Enabled {
		t.Errorf("%+v %v", got, err)
	}
	for _, c := range []struct{ from, to, want string }{
		{keyEntries, "X", `missing key "Auto PST Entries"`},
		{keyAPSTE, "Y", `missing key "Autonomous Power State Transition Enable (APSTE)"`},
		{`"100 ms"`, `"100 s"`, `want "N ms"`},
		{`"Enabled"`, `"On"`, `want Enabled or Disabled`},
		{`"entry":" 1"`, `"entry":" 7"`, `entry 7 at position 1`},
	} {
		in := strings.Replace(string(a.APSTJSON()), c.from, c.to, 1)
		if _, err := DecodeAPSTJSON([]byte(in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s → %s: %v, want %q", c.from, c.to, err, c.want)
		}
	}
}

func itoa(i int) string { return string(rune('0'+i/10)) + string(rune('0'+i%10)) }

func TestPowerManagementForms(t *testing.T) {
	for _, c := range []struct {
		in   string
		want PowerManagement
	}{{"0x00000004\n", PowerManagement{PS: 4}}, {"35", PowerManagement{PS: 3, WH: 1}},
		{string(PowerManagement{PS: 2, WH: 1}.PowerManagementJSON()), PowerManagement{PS: 2, WH: 1}}} {
		got, _, err := ParsePowerManagement([]byte(c.in))
		if err != nil || got != c.want {
			t.Errorf("%q: %+v %v", c.in, got, err)
		}
	}
	if _, _, err := ParsePowerManagement([]byte(`{"name":"Power Management"}`)); err == nil || !strings.Contains(err.Error(), `missing key "Power State (PS)"`) {
		t.Errorf("%v", err)
	}
}

func TestParseInputsAllFormats(t *testing.T) {
	bin, err := os.ReadFile(filepath.Join(fixtureDir, "nvme-apst-ok", "nvme0.id-ctrl.bin"))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := DecodeIdentify(bin)
	for _, in := range [][]byte{bin, want.IdentifyJSON(), FormatHexDump(bin)} {
		got, format, err := ParseIdentify(in)
		if err != nil || !equalIdentify(got, want) {
			t.Errorf("%s: %v", format, err)
		}
	}
	hd := FormatHexDump(bin)
	lines := strings.SplitAfter(string(hd), "\n")
	missing := strings.Join(append(lines[:10:10], lines[11:]...), "")
	if _, _, err := ParseIdentify([]byte(missing)); err == nil || !strings.Contains(err.Error(), "line 11: offset 0xb0, but 0xa0 bytes read") {
		t.Errorf("missing line: %v", err)
	}
	if _, _, err := ParseIdentify(bin[:1000]); err == nil || !strings.Contains(err.Error(), "1000 bytes, want 4096") {
		t.Errorf("short binary: %v", err)
	}
	if _, _, err := ParseAPST(FormatHexDump(make([]byte, 200))); err == nil || !strings.Contains(err.Error(), "200 bytes, want 256") {
		t.Errorf("short hex APST: %v", err)
	}
}
