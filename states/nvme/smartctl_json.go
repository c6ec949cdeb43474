package nvme

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/idlewatt/idlewatt/states/alpm"
)

// FormatSmartctlJSON is `smartctl -j -a` (or -x, -c) of an NVMe drive.
const FormatSmartctlJSON = "smartctl JSON (NVMe)"

// sniffSmartctlJSON: a JSON object with smartctl's own keys. nvme-cli's
// id-ctrl JSON has "psds", never "nvme_power_states" nor "smartctl", so
// neither reader takes the other's output.
func sniffSmartctlJSON(b []byte) bool {
	if !isJSON(b) {
		return false
	}
	return bytes.Contains(b, []byte(`"nvme_power_states"`)) && bytes.Contains(b, []byte(`"smartctl"`))
}

// DecodeSmartctlJSON decodes smartctl's JSON (json_format_version 1) for
// an NVMe drive. smartctl writes per descriptor (nvmeprint.cpp):
// non_operational_state, relative_read_latency, relative_read_throughput,
// relative_write_latency, relative_write_throughput, entry_latency_us,
// exit_latency_us and max_power {value, scale, units_per_watt}, where
// scale 2 / units_per_watt 100 is MXPS 0 (0.01 W) and scale 1 /
// units_per_watt 10000 is MXPS 1 (0.0001 W). It writes no idle or active
// power, no workload and no APSTA: those are listed in Identify.Unknown.
// The PCI vendor IDs are nvme_pci_vendor {id, subsystem_id}.
func DecodeSmartctlJSON(b []byte) (*Identify, error) {
	const w = "smartctl JSON"
	dec := json.NewDecoder(bytes.NewReader(b))
	var top jobj
	if err := dec.Decode(&top); err != nil || top == nil {
		if err == nil {
			err = fmt.Errorf("not an object")
		}
		return nil, fmt.Errorf("%s at byte %d: %v", w, dec.InputOffset(), err)
	}
	id := &Identify{}
	var states []json.RawMessage
	raw, ok := top["nvme_power_states"]
	if !ok {
		return nil, fmt.Errorf("%s: missing key \"nvme_power_states\"", w)
	}
	if err := json.Unmarshal(raw, &states); err != nil {
		return nil, fmt.Errorf("%s: \"nvme_power_states\" is not an array", w)
	}
	if len(states) == 0 {
		return nil, fmt.Errorf("%s: \"nvme_power_states\" is empty", w)
	}
	if len(states) > maxStates {
		return nil, fmt.Errorf("%s: %d entries in \"nvme_power_states\": more than the %d Identify Controller holds", w, len(states), maxStates)
	}
	for i, s := range states {
		where := fmt.Sprintf("nvme_power_states[%d]", i)
		o, err := decodeObject(s, where)
		if err != nil {
			return nil, err
		}
		p, err := psdFromSmartctlJSON(o, where)
		if err != nil {
			return nil, err
		}
		p.PS = i
		id.PowerStates = append(id.PowerStates, p)
		id.Unknown = append(id.Unknown, "power_states["+strconv.Itoa(i)+"].active_power_workload")
	}
	id.NPSS = len(id.PowerStates) - 1
	if v, ok := top["nvme_pci_vendor"]; ok {
		o, err := decodeObject(v, "nvme_pci_vendor")
		if err != nil {
			return nil, err
		}
		vid, err := o.uint("nvme_pci_vendor", "id", 0xffff)
		if err != nil {
			return nil, err
		}
		ss, err := o.uint("nvme_pci_vendor", "subsystem_id", 0xffff)
		if err != nil {
			return nil, err
		}
		id.VID, id.SSVID = alpm.Hex16(vid), alpm.Hex16(ss)
	} else {
		id.Unknown = append(id.Unknown, "vid", "ssvid")
	}
	for _, f := range []struct {
		key, field string
		dst        *string
	}{{"model_name", "model", &id.Model}, {"serial_number", "serial", &id.Serial}, {"firmware_version", "firmware", &id.Firmware}} {
		if _, ok := top[f.key]; !ok {
			id.Unknown = append(id.Unknown, f.field)
			continue
		}
		s, err := top.str(w, f.key)
		if err != nil {
			return nil, err
		}
		*f.dst = idString([]byte(s))
	}
	id.Unknown = append(id.Unknown, "apsta")
	id.Notes = append(id.Notes, "smartctl's JSON carries no idle or active power, workload nor APSTA: they are unknown, not zero")
	return id, nil
}

func psdFromSmartctlJSON(o jobj, where string) (PowerState, error) {
	var p PowerState
	raw, ok := o["non_operational_state"]
	if !ok {
		return p, fmt.Errorf("%s: missing key %q", where, "non_operational_state")
	}
	switch strings.TrimSpace(string(raw)) {
	case "true":
		p.NonOperational = true
	case "false":
	default:
		return p, fmt.Errorf("%s.non_operational_state: %s is not true or false", where, clip(string(raw), 16))
	}
	for _, f := range []struct {
		key string
		dst *int
	}{{"relative_read_latency", &p.RRL}, {"relative_read_throughput", &p.RRT}, {"relative_write_latency", &p.RWL}, {"relative_write_throughput", &p.RWT}} {
		v, err := o.uint(where, f.key, 31)
		if err != nil {
			return p, err
		}
		*f.dst = int(v)
	}
	for _, f := range []struct {
		key string
		dst *uint32
	}{{"entry_latency_us", &p.EntryLatencyUs}, {"exit_latency_us", &p.ExitLatencyUs}} {
		v, err := o.uint(where, f.key, 0xffffffff)
		if err != nil {
			return p, err
		}
		*f.dst = uint32(v)
	}
	mraw, ok := o["max_power"]
	if !ok {
		return p, fmt.Errorf("%s: missing key %q", where, "max_power")
	}
	mw := where + ".max_power"
	m, err := decodeObject(mraw, mw)
	if err != nil {
		return p, err
	}
	v, err := m.uint(mw, "value", 0xffff)
	if err != nil {
		return p, err
	}
	sc, err := m.uint(mw, "scale", 2)
	if err != nil {
		return p, err
	}
	upw, err := m.uint(mw, "units_per_watt", 10000)
	if err != nil {
		return p, err
	}
	switch {
	case sc == 2 && upw == 100:
		p.MaxPowerScale = 0
	case sc == 1 && upw == 10000:
		p.MaxPowerScale = 1
	default:
		return p, fmt.Errorf("%s: scale %d with units_per_watt %d: smartctl writes 2 with 100 (MXPS 0) or 1 with 10000 (MXPS 1)", mw, sc, upw)
	}
	p.MaxPowerRaw = uint16(v)
	p.fill()
	return p, nil
}
