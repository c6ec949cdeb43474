package nvme

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Writers of the nvme-cli JSON forms DecodeIdentifyJSON and friends read,
// for fixtures and for the simulated host: the same keys and padding
// nvme-cli 2.x prints (src/nvme-print-json.c), only the subset idlewatt
// models.

// orderedJSON writes an object with keys in the given order, as nvme-cli
// does (encoding/json would sort map keys).
type kv struct {
	k string
	v any
}

func writeObject(b *bytes.Buffer, fields []kv, indent string) {
	b.WriteString("{\n")
	for i, f := range fields {
		k, _ := json.Marshal(f.k)
		fmt.Fprintf(b, "%s  %s:", indent, k)
		switch v := f.v.(type) {
		case []kv:
			writeObject(b, v, indent+"  ")
		case [][]kv:
			b.WriteString("[\n")
			for j, o := range v {
				b.WriteString(indent + "    ")
				writeObject(b, o, indent+"    ")
				if j < len(v)-1 {
					b.WriteString(",")
				}
				b.WriteString("\n")
			}
			b.WriteString(indent + "  ]")
		default:
			x, _ := json.Marshal(v)
			b.Write(x)
		}
		if i < len(fields)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString(indent + "}")
}

func pad(s string, n int) string {
	if len(s) >= n {
		return s[:n]
	}
	return s + strings.Repeat(" ", n-len(s))
}

// IdentifyJSON writes id as `nvme id-ctrl -o json` would.
func (id *Identify) IdentifyJSON() []byte {
	var psds [][]kv
	for _, p := range id.PowerStates {
		nops := 0
		if p.NonOperational {
			nops = 1
		}
		psds = append(psds, []kv{
			{"max_power", p.MaxPowerRaw}, {"max_power_scale", p.MaxPowerScale}, {"non-operational_state", nops},
			{"entry_lat", p.EntryLatencyUs}, {"exit_lat", p.ExitLatencyUs},
			{"read_tput", p.RRT}, {"read_lat", p.RRL}, {"write_tput", p.RWT}, {"write_lat", p.RWL},
			{"idle_power", p.IdlePowerRaw}, {"idle_scale", p.IdleScale},
			{"active_power", p.ActivePowerRaw}, {"active_power_work", p.ActiveWorkload}, {"active_scale", p.ActiveScale},
		})
	}
	apsta := 0
	if id.APSTA {
		apsta = 1
	}
	var b bytes.Buffer
	writeObject(&b, []kv{
		{"vid", uint16(id.VID)}, {"ssvid", uint16(id.SSVID)},
		{"sn", pad(id.Serial, 20)}, {"mn", pad(id.Model, 40)}, {"fr", pad(id.Firmware, 8)},
		{"rab", 2}, {"cmic", 0}, {"mdts", 9}, {"cntlid", 4}, {"ver", 0x10300},
		{"oacs", 23}, {"acl", 7}, {"aerl", 3}, {"frmw", 22}, {"lpa", 14}, {"elpe", 63},
		{"npss", id.NPSS}, {"avscc", 1}, {"apsta", apsta}, {"wctemp", 358}, {"cctemp", 358},
		{"psds", psds},
	}, "")
	b.WriteString("\n")
	return b.Bytes()
}

// APSTJSON writes feature 0Ch as `nvme get-feature -f 0x0c -H -o json`
// does: a header object, then the decoded fields.
func (a *APST) APSTJSON() []byte {
	// nvme-cli prints "%#0*x", width 10 for a non-zero value, 8 for zero
	// (C's # flag drops the 0x of a zero).
	en, dw0 := "Disabled", 0
	if a.Enabled != nil && *a.Enabled {
		en, dw0 = "Enabled", 1
	}
	var entries [][]kv
	for i := 0; i < apstEntries; i++ {
		var e APSTEntry
		if i < len(a.Entries) {
			e = a.Entries[i]
		}
		entries = append(entries, []kv{{"entry", fmt.Sprintf("%2d", i)},
			{keyITPT, fmt.Sprintf("%d ms", e.ITPTms)}, {keyITPS, e.ITPS}})
	}
	var b bytes.Buffer
	writeObject(&b, []kv{{"name", "Autonomous Power State Transition"}, {"current", current(uint32(dw0))}}, "")
	b.WriteString("\n")
	writeObject(&b, []kv{{keyAPSTE, en}, {keyEntries, entries}}, "")
	b.WriteString("\n")
	return b.Bytes()
}

// PowerManagementJSON writes feature 02h as `nvme get-feature -f 0x02 -H
// -o json` does.
func (pm PowerManagement) PowerManagementJSON() []byte {
	var b bytes.Buffer
	writeObject(&b, []kv{{"name", "Power Management"}, {"current", current(uint32(pm.PS) | uint32(pm.WH)<<5)}}, "")
	b.WriteString("\n")
	writeObject(&b, []kv{{keyWH, pm.WH}, {"WH description", "No Workload"}, {keyPS, pm.PS}}, "")
	b.WriteString("\n")
	return b.Bytes()
}

func current(v uint32) string {
	if v == 0 {
		return "00000000"
	}
	return fmt.Sprintf("%#010x", v)
}
