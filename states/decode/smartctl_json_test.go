package decode

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/states/nvme"
)

// smartctlJSON writes id as smartctl -j writes an NVMe drive's identity
// and power states (nvmeprint.cpp's keys; the test's own writer, checked
// against the real output in nvme/teamgroup-mp33-256g.smartctl-j-a.json).
func smartctlJSON(id *nvme.Identify) []byte {
	var ps []map[string]any
	for _, p := range id.PowerStates {
		sc, upw := 2, 100
		if p.MaxPowerScale == 1 {
			sc, upw = 1, 10000
		}
		ps = append(ps, map[string]any{
			"non_operational_state": p.NonOperational, "relative_read_latency": p.RRL,
			"relative_read_throughput": p.RRT, "relative_write_latency": p.RWL,
			"relative_write_throughput": p.RWT, "entry_latency_us": p.EntryLatencyUs,
			"exit_latency_us": p.ExitLatencyUs,
			"max_power":       map[string]any{"value": p.MaxPowerRaw, "scale": sc, "units_per_watt": upw},
		})
	}
	b, _ := json.MarshalIndent(map[string]any{
		"json_format_version": []int{1, 0}, "smartctl": map[string]any{"version": []int{7, 5}},
		"model_name": id.Model, "serial_number": id.Serial, "firmware_version": id.Firmware,
		"nvme_pci_vendor":   map[string]any{"id": int(id.VID), "subsystem_id": int(id.SSVID)},
		"nvme_power_states": ps,
	}, "", "  ")
	return b
}

// The smartctl -j form of a drive decodes to what its smartctl -x text
// (a real output) decodes to.
func TestSmartctlJSONAgreesWithText(t *testing.T) {
	for _, f := range []string{"t-force-tm8fpl500g.smartctl-x.txt", "optane-m10-16gb.smartctl-x.txt"} {
		txt := read(t, real+"/nvme/"+f)
		r, err := Bytes(smartctlJSON(txt.NVMe))
		if err != nil {
			t.Fatalf("%s as JSON: %v", f, err)
		}
		if r.Format != nvme.FormatSmartctlJSON || r.Kind != KindNVMeIdentify {
			t.Fatalf("%s as JSON read as %s / %s", f, r.Kind, r.Format)
		}
		// smartctl's JSON carries no idle or active power: compare the rest.
		want := *txt.NVMe
		want.PowerStates = append([]nvme.PowerState(nil), want.PowerStates...)
		for i := range want.PowerStates {
			p := &want.PowerStates[i]
			p.IdlePower, p.ActivePower, p.IdlePowerRaw, p.IdleScale, p.ActivePowerRaw, p.ActiveScale = nil, nil, 0, 0, 0, 0
		}
		sameIdentify(t, f+" as smartctl JSON", &want, r.NVMe)
	}
}

// The real smartctl 7.5 output: the values it printed.
func TestSmartctlJSONReal(t *testing.T) {
	r := read(t, real+"/nvme/teamgroup-mp33-256g.smartctl-j-a.json")
	if r.Format != nvme.FormatSmartctlJSON {
		t.Fatalf("format %q", r.Format)
	}
	want := []struct {
		mw    float64
		nonop bool
		en    uint32
		ex    uint32
	}{{8000, false, 230000, 50000}, {4000, false, 4000, 50000}, {3000, false, 4000, 250000}, {30, true, 5000, 10000}, {5, true, 54000, 45000}}
	id := r.NVMe
	if id.NPSS != 4 || id.Model != "TEAM TM8FP6256G" || id.Firmware != "VC3S500J" || id.VID != 0x10ec || id.Known("apsta") {
		t.Fatalf("identity %+v", id)
	}
	for i, w := range want {
		p := id.PowerStates[i]
		if got := float64(p.MaxPower) * 1000; got < w.mw-1e-6 || got > w.mw+1e-6 || p.NonOperational != w.nonop || p.EntryLatencyUs != w.en || p.ExitLatencyUs != w.ex || p.RRT != i {
			t.Errorf("ps %d: %+v, want %+v", i, p, w)
		}
	}
}

// A broken or cut smartctl JSON names the key; nvme-cli JSON is not taken
// for smartctl's.
func TestSmartctlJSONErrors(t *testing.T) {
	good := string(smartctlJSON(read(t, real+"/nvme/t-force-tm8fpl500g.smartctl-x.txt").NVMe))
	for _, c := range []struct{ name, in, want string }{
		{"cut", good[:len(good)/2], "JSON at byte"},
		{"no max_power", strings.Replace(good, `"max_power"`, `"mp"`, 1), `nvme_power_states[0]: missing key "max_power"`},
		{"bad scale", strings.Replace(good, `"units_per_watt": 100`, `"units_per_watt": 1000`, 1), "nvme_power_states[0].max_power: scale 2 with units_per_watt 1000"},
		{"latency string", strings.Replace(good, `"entry_latency_us": `, `"entry_latency_us": -`, 1), "nvme_power_states[0].entry_latency_us"},
		{"not array", `{"smartctl": {}, "nvme_power_states": {}}`, `"nvme_power_states" is not an array`},
		{"empty", `{"smartctl": {}, "nvme_power_states": []}`, `"nvme_power_states" is empty`},
		{"non-op not bool", strings.Replace(good, `"non_operational_state": false`, `"non_operational_state": 0`, 1), "nvme_power_states[0].non_operational_state"},
	} {
		_, err := Bytes([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := Bytes([]byte(`{"nvme_power_states": []}`)); err == nil || errors.Is(err, ErrUnknown) {
		// without "smartctl" it is not smartctl's: nvme-cli's reader refuses it by key
		if err == nil {
			t.Error("JSON without smartctl's keys decoded")
		}
	}
}

// nvme-cli 1.x JSON as the OpenStack ironic-python-agent tests publish it
// (WDC PC SN730, keys "flags" and "active_work_scale"): every power state
// equals the one computed here straight from the JSON with encoding/json —
// flags bit 0 is MXPS (0.0001 W units), bit 1 NOPS.
func TestNVMeCLI1xJSONReal(t *testing.T) {
	const path = real + "/nvme/wdc-sn730-256g.ironic-python-agent.id-ctrl.json"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		VID   int    `json:"vid"`
		MN    string `json:"mn"`
		NPSS  int    `json:"npss"`
		APSTA int    `json:"apsta"`
		PSDs  []struct {
			MaxPower float64 `json:"max_power"`
			Flags    int     `json:"flags"`
			EntryLat uint32  `json:"entry_lat"`
			ExitLat  uint32  `json:"exit_lat"`
		} `json:"psds"`
	}
	if err := json.Unmarshal(raw, &j); err != nil {
		t.Fatal(err)
	}
	r := read(t, path)
	if r.Format != nvme.FormatJSON {
		t.Fatalf("format %q", r.Format)
	}
	id := r.NVMe
	if int(id.VID) != j.VID || id.Model != strings.TrimSpace(j.MN) || id.NPSS != j.NPSS || id.APSTA != (j.APSTA == 1) || len(id.PowerStates) != len(j.PSDs) {
		t.Fatalf("identity %+v", id)
	}
	for i, p := range j.PSDs {
		unit := 0.01
		if p.Flags&1 != 0 {
			unit = 0.0001
		}
		g := id.PowerStates[i]
		if w := p.MaxPower * unit; math.Abs(float64(g.MaxPower)-w) > 1e-9 || g.NonOperational != (p.Flags&2 != 0) || g.EntryLatencyUs != p.EntryLat || g.ExitLatencyUs != p.ExitLat {
			t.Errorf("ps %d: %+v, want %.4f W flags %d %d/%d µs", i, g, w, p.Flags, p.EntryLat, p.ExitLat)
		}
	}
	if g := id.PowerStates[4].MaxPower; math.Abs(float64(g)-0.0035) > 1e-9 {
		t.Errorf("PS4 %v W, want 0.0035 W (35 in 0.0001 W units)", g)
	}
}
