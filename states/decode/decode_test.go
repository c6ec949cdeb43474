package decode

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/internal/testutil"
	"github.com/idlewatt/idlewatt/states/alpm"
	"github.com/idlewatt/idlewatt/states/nvme"
)

var update = testutil.Update // -update: rewrite fixtures/real/states/expected

const real = "../../fixtures/real/states"

func read(t *testing.T, path string) *Result {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := Read(path, f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

// sameStates compares what the drive reported, field by field, skipping
// what the source lists as unknown.
func sameIdentify(t *testing.T, name string, want, got *nvme.Identify) {
	t.Helper()
	if got.Known("vid") && (got.VID != want.VID || got.SSVID != want.SSVID) {
		t.Errorf("%s: VID/SSVID %v/%v, want %v/%v", name, got.VID, got.SSVID, want.VID, want.SSVID)
	}
	for _, f := range []struct{ k, g, w string }{{"model", got.Model, want.Model}, {"serial", got.Serial, want.Serial}, {"firmware", got.Firmware, want.Firmware}} {
		if got.Known(f.k) && f.g != f.w {
			t.Errorf("%s: %s %q, want %q", name, f.k, f.g, f.w)
		}
	}
	if got.NPSS != want.NPSS || (got.Known("apsta") && got.APSTA != want.APSTA) {
		t.Errorf("%s: NPSS %d APSTA %v, want %d %v", name, got.NPSS, got.APSTA, want.NPSS, want.APSTA)
	}
	if len(got.PowerStates) != len(want.PowerStates) {
		t.Fatalf("%s: %d power states, want %d", name, len(got.PowerStates), len(want.PowerStates))
	}
	for i := range want.PowerStates {
		g, w := got.PowerStates[i], want.PowerStates[i]
		if !got.Known("power_states[" + itoa(i) + "].active_power_workload") {
			g.ActiveWorkload = w.ActiveWorkload
		}
		// A power not reported ("-") or of the reserved scale ("reserved")
		// is printed without its raw field: text cannot carry it.
		if w.IdleScale == 0 || w.IdleScale == 3 {
			g.IdlePowerRaw, w.IdlePowerRaw = 0, 0
		}
		if w.ActiveScale == 0 || w.ActiveScale == 3 {
			g.ActivePowerRaw, w.ActivePowerRaw = 0, 0
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: ps %d:\n got %+v\nwant %+v", name, i, g, w)
		}
	}
}

func itoa(i int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + string(rune('0'+i%10))) }

// The real nvme-cli 2.3 printing (text, -H, JSON) of images assembled by
// scripts/states-fixtures, and their xxd / hexdump -C / od dumps, decode to
// what the binary decodes to.
func TestToolOutputsAgreeWithBinary(t *testing.T) {
	made := real + "/made"
	for _, d := range []string{"tforce", "varied"} {
		ref := read(t, filepath.Join(made, d+".id-ctrl.bin"))
		if ref.Kind != KindNVMeIdentify || len(ref.NVMe.Unknown) != 0 {
			t.Fatalf("%s: binary read as %s, unknown %v", d, ref.Kind, ref.NVMe.Unknown)
		}
		suffixes := []string{".id-ctrl.txt", ".id-ctrl-H.txt", ".id-ctrl.json", ".id-ctrl.xxd", ".id-ctrl.hexdump-C", ".id-ctrl.od-Ax-tx1"}
		if d == "varied" {
			suffixes = append(suffixes, ".id-ctrl.xxd-g1", ".id-ctrl.od-tx1")
		}
		for _, s := range suffixes {
			r := read(t, filepath.Join(made, d+s))
			if r.Kind != KindNVMeIdentify {
				t.Fatalf("%s%s: kind %s", d, s, r.Kind)
			}
			sameIdentify(t, d+s, ref.NVMe, r.NVMe)
		}
	}
	ref := read(t, made+"/apst.bin")
	for _, s := range []string{"apst.get-feature.txt", "apst.get-feature-H.txt", "apst-disabled.get-feature.txt", "apst.xxd", "apst.hexdump-C", "apst.od-Ax-tx1"} {
		r := read(t, filepath.Join(made, s))
		if !reflect.DeepEqual(r.APST.Entries, ref.APST.Entries) {
			t.Errorf("%s: entries %v, want %v", s, r.APST.Entries, ref.APST.Entries)
		}
		want := map[string]*bool{"apst.get-feature.txt": new(true), "apst.get-feature-H.txt": new(true), "apst-disabled.get-feature.txt": new(false)}[s]
		if !reflect.DeepEqual(r.APST.Enabled, want) {
			t.Errorf("%s: APSTE %v, want %v", s, r.APST.Enabled, want)
		}
	}
}

func sataOf(t *testing.T, r *Result) *alpm.Identify {
	t.Helper()
	if r.Kind != KindSATA || len(r.SATA) != 1 || r.SATA[0].Identify == nil {
		t.Fatalf("%s: kind %s, %d drives", r.File, r.Kind, len(r.SATA))
	}
	return r.SATA[0].Identify
}

// One real IDENTIFY (the 870 QVO's words as CrystalDiskInfo printed them):
// its binary image, the dumps of it, and hdparm 9.65's own -I printing of
// it (hdparm --Istdin) and smartctl 7.3's --identify tables of it agree on
// every field states shows.
func TestSATAFormatsAgree(t *testing.T) {
	made := real + "/made"
	ref := sataOf(t, read(t, made+"/sata-870qvo.identify.bin"))
	if !ref.DevSlpSupported || !ref.DIPMSupported || ref.HIPM || ref.Checksum != "ok" || ref.Model != "Samsung SSD 870 QVO 4TB" {
		t.Fatalf("870 QVO words: %+v", ref)
	}
	for _, f := range []string{real + "/sata/samsung-870-qvo-4tb.crystaldiskinfo.txt", made + "/sata-870qvo.hdparm-Istdin.txt",
		made + "/sata-870qvo.smartctl-identify.txt", made + "/sata-870qvo.smartctl-identify-wn.txt", made + "/sata-870qvo.smartctl-identify-wb.txt",
		made + "/sata-870qvo.identify.xxd", made + "/sata-870qvo.identify.hexdump-C", made + "/sata-870qvo.identify.od-Ax-tx1", made + "/sata-870qvo.identify.od-Ax-tx1z-v"} {
		got := sataOf(t, read(t, f))
		type view struct {
			Model, Serial, Firmware, Checksum                                           string
			HIPM, PhyEvents, DIPMSupported, DIPMEnabled, DevSlpSupported, DevSlpEnabled bool
			W76, W78                                                                    alpm.Hex16
		}
		v := func(i *alpm.Identify) view {
			return view{i.Model, i.Serial, i.Firmware, i.Checksum, i.HIPM, i.PhyEvents, i.DIPMSupported, i.DIPMEnabled, i.DevSlpSupported, i.DevSlpEnabled, i.Word76, i.Word78}
		}
		if v(got) != v(ref) {
			t.Errorf("%s:\n got %+v\nwant %+v", f, v(got), v(ref))
		}
	}
}

// The same drive read by two tools: nvme-cli's id-ctrl -H and smartctl -x
// of the T-FORCE TM8FPL500G and the Optane M10 (one post, one machine)
// agree on everything smartctl prints right; smartctl's Idle column is
// "-" where nvme-cli shows the drive's idle power (its scale bug, noted).
func TestNVMeCLIAndSmartctlAgree(t *testing.T) {
	for _, d := range []string{"t-force-tm8fpl500g", "optane-m10-16gb"} {
		cli := read(t, real+"/nvme/"+d+".id-ctrl-H.txt").NVMe
		sm := read(t, real+"/nvme/"+d+".smartctl-x.txt").NVMe
		if sm.Known("apsta") || len(sm.Notes) == 0 {
			t.Errorf("%s: smartctl gave APSTA or no note: %v %v", d, sm.Unknown, sm.Notes)
		}
		for i := range cli.PowerStates {
			c, s := cli.PowerStates[i], sm.PowerStates[i]
			if c.MaxPower != s.MaxPower || c.NonOperational != s.NonOperational || c.EntryLatencyUs != s.EntryLatencyUs ||
				c.ExitLatencyUs != s.ExitLatencyUs || c.RRT != s.RRT || c.RRL != s.RRL || c.RWT != s.RWT || c.RWL != s.RWL {
				t.Errorf("%s ps %d: nvme-cli %+v, smartctl %+v", d, i, c, s)
			}
			if (c.ActivePower == nil) != (s.ActivePower == nil) || c.ActivePower != nil && *c.ActivePower != *s.ActivePower {
				t.Errorf("%s ps %d: active power nvme-cli %v smartctl %v", d, i, c.ActivePower, s.ActivePower)
			}
			if s.IdlePower != nil {
				t.Errorf("%s ps %d: smartctl idle %v: expected \"-\" (its scale bug)", d, i, *s.IdlePower)
			}
		}
		if cli.Model != sm.Model || cli.Serial != sm.Serial || cli.Firmware != sm.Firmware || cli.VID != sm.VID {
			t.Errorf("%s: identity differs: %q %q", d, cli.Model, sm.Model)
		}
	}
	// The T-FORCE's table rebuilt from the real post and printed by
	// nvme-cli 2.3 reads back as the post's own nvme-cli output.
	post := read(t, real+"/nvme/t-force-tm8fpl500g.id-ctrl-H.txt").NVMe
	reprint := read(t, real+"/made/tforce.id-ctrl-H.txt").NVMe
	for i := range post.PowerStates {
		p, r := post.PowerStates[i], reprint.PowerStates[i]
		r.ActiveWorkload = p.ActiveWorkload // the 2023 nvme-cli did not print it
		if !reflect.DeepEqual(p, r) {
			t.Errorf("ps %d: post %+v, reprint %+v", i, p, r)
		}
	}
}

// Every real file decodes, and prints what expected/ holds (go test
// -update rewrites it after a deliberate change).
func TestRealOutputsGolden(t *testing.T) {
	files, _ := filepath.Glob(real + "/nvme/*.txt")
	more, _ := filepath.Glob(real + "/sata/*.txt")
	js, _ := filepath.Glob(real + "/nvme/*.json")
	more = append(more, js...)
	files = append(files, more...)
	if len(files) < 10 {
		t.Fatalf("%d real files", len(files))
	}
	for _, f := range files {
		var b bytes.Buffer
		r := read(t, f)
		r.File = filepath.Base(f)
		if err := r.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		testutil.Golden(t, filepath.Join(real, "expected", filepath.Base(f)+".out"), b.Bytes())
	}
}

func TestRefusals(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"unknown", "hello world\nthis is not a drive\n", "unknown format: it reads NVMe Identify Controller: smartctl JSON (NVMe)"},
		{"empty", "  \n", "empty"},
		{"npss-mismatch", "npss      : 4\nps    0 : mp:6.50W operational enlat:5 exlat:5 rrt:0 rrl:0\n          rwt:0 rwl:0 idle_power:- active_power:-\n", "npss 4 (line 1) means 5 power states, but the output has 1"},
		{"ps-cut", "ps    0 : mp:6.50W operational enlat:5 exlat:5 rrt:0 rrl:0\n", "ps 0: missing rwt"},
		{"ps-gap", "ps    0 : mp:6.50W operational enlat:5 exlat:5 rrt:0 rrl:0 rwt:0 rwl:0 idle_power:- active_power:-\nps    2 : mp:6.50W operational enlat:5 exlat:5 rrt:0 rrl:0 rwt:0 rwl:0 idle_power:- active_power:-\n", "ps 2 after 1 power states"},
		{"mp-overflow", "ps    0 : mp:700.00W operational enlat:5 exlat:5 rrt:0 rrl:0 rwt:0 rwl:0 idle_power:- active_power:-\n", "more than a 16-bit power field holds"},
		{"apste-conflict", "get-feature:0x0c (Autonomous Power State Transition), Current value:0x00000001\n\tAutonomous Power State Transition Enable (APSTE): Disabled\n", "says APSTE true, line 2 says false"},
		{"apst-few-entries", "\tAutonomous Power State Transition Enable (APSTE): Enabled\n\tEntry[ 0]\n\tIdle Time Prior to Transition (ITPT): 100 ms\n\tIdle Transition Power State   (ITPS): 3\n", "1 Auto PST entries, want 32"},
		{"dump-short", "00000000: 4d14 4d14\n", "4 bytes: not 4096"},
		{"dump-gap", "0000000 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f 10\n0000040 01 02\n", "offset 0x20, but 0x10 bytes read so far"},
		{"od-words", "0000000 144d 144d 5334\n0000006\n", "host byte order"},
		{"cdi-short", "-- IDENTIFY_DEVICE ---\n        0    1    2    3    4    5    6    7    8    9\n000: 0040 3FFF C837 0010 0000 0000 003F 0000 0000 0000\n", "10 words, want 256"},
		{"words-short", "0040 3fff c837 0010 0000 0000 003f 0000\n", "8 words, want 256"},
		{"smartctl-ata-c", "smartctl 7.3\n=== START OF READ SMART DATA SECTION ===\nGeneral SMART Values:\n", "no \"Device Model:\" line"},
		{"json-neither", `{"foo": 1}`, "neither \"psds\""},
		{"binary-size", "\x00\x01\x02", "binary of 3 bytes"},
	} {
		_, err := Bytes([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if c.name == "unknown" && !errors.Is(err, ErrUnknown) && !errors.Is(err, nvme.ErrUnknownFormat) {
			t.Errorf("unknown: not ErrUnknown: %v", err)
		}
	}
}
