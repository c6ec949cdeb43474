package nvme

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/idlewatt/idlewatt/states/alpm"
)

// smartctl's NVMe information (print_drive_info and
// print_drive_capabilities in smartmontools nvmeprint.cpp), printed by -a,
// -x and -c:
//
//	Model Number:                       Samsung SSD 970 EVO Plus 1TB
//	PCI Vendor/Subsystem ID:            0x144d
//	Supported Power States
//	St Op     Max   Active     Idle   RL RT WL WT  Ent_Lat  Ex_Lat
//	 0 +     7.50W       -        -    0  0  0  0        0       0
//
// Op is '+' for operational, '-' for non-operational; the columns RL RT
// WL WT are read latency, read throughput, write latency, write
// throughput (in that order). smartctl prints no APSTA: it is listed in
// Identify.Unknown. smartctl (through 7.5 and its 2026 sources) takes
// the Active and Idle scale from bits 1:0 of the descriptor byte, where
// the NVMe specification has it in bits 7:6 (format_power(…,
// ps.idle_scale) with "scale & 0x3"): a drive that reports an idle power
// shows "-" under Idle, and an Active value follows the workload bits.
// The columns are read as printed and a note says so; nvme-cli shows
// both right.

var (
	reSmartKV  = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9/ .]*?):\s+(.*)$`)
	reSmartRow = regexp.MustCompile(`^\s*(\d+)\s+([+-])\s+(\S+)\s+(\S+)\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$`)
)

const smartctlScaleNote = "smartctl reads the Active and Idle power scale from bits 1:0 of the descriptor byte, not bits 7:6 where the NVMe specification puts it: Idle shows \"-\" for a drive that reports one and Active can be off by 100×; nvme id-ctrl prints both right"

func sniffSmartctl(b []byte) bool {
	h := string(b[:min(len(b), 1<<16)])
	return strings.Contains(h, "Supported Power States") && strings.Contains(h, "Ent_Lat")
}

// ReadSmartctl reads the NVMe power-state table and identity smartctl prints.
func ReadSmartctl(r io.Reader) (*Identify, error) {
	const w = "smartctl NVMe"
	sc := bufio.NewScanner(io.LimitReader(r, maxInput))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	id := &Identify{}
	kv := map[string]string{}
	kvLine := map[string]int{}
	n, inTable, header := 0, false, 0
	for sc.Scan() {
		n++
		t := strings.TrimRight(sc.Text(), "\r")
		switch {
		case strings.TrimSpace(t) == "Supported Power States":
			if inTable || header > 0 {
				return nil, fmt.Errorf("%s line %d: a second power-state table (one drive per file)", w, n)
			}
			inTable, header = true, n
			continue
		case inTable && strings.HasPrefix(strings.TrimSpace(t), "St Op"):
			continue
		case inTable:
			if strings.TrimSpace(t) == "" {
				inTable = false
				continue
			}
			m := reSmartRow.FindStringSubmatch(t)
			if m == nil {
				return nil, fmt.Errorf("%s line %d: %q is not a power-state row (St Op Max Active Idle RL RT WL WT Ent_Lat Ex_Lat)", w, n, clip(strings.TrimSpace(t), 40))
			}
			p, err := smartctlRow(m, len(id.PowerStates))
			if err != nil {
				return nil, fmt.Errorf("%s line %d: %w", w, n, err)
			}
			id.PowerStates = append(id.PowerStates, p)
			continue
		}
		if m := reSmartKV.FindStringSubmatch(t); m != nil {
			if _, dup := kv[m[1]]; !dup {
				kv[m[1]], kvLine[m[1]] = strings.TrimSpace(m[2]), n
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s line %d: %w", w, n+1, err)
	}
	if len(id.PowerStates) == 0 {
		return nil, fmt.Errorf("%s: \"Supported Power States\" (line %d) without rows: cut short?", w, header)
	}
	if len(id.PowerStates) > maxStates {
		return nil, fmt.Errorf("%s: %d power states: more than the %d Identify Controller holds", w, len(id.PowerStates), maxStates)
	}
	id.NPSS = len(id.PowerStates) - 1
	hex16 := func(key string) (alpm.Hex16, bool, error) {
		v, ok := kv[key]
		if !ok {
			return 0, false, nil
		}
		x, err := strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 16)
		if err != nil {
			return 0, false, fmt.Errorf("%s line %d: %s %q is not a 16-bit hex ID", w, kvLine[key], key, clip(v, 16))
		}
		return alpm.Hex16(x), true, nil
	}
	vid, ok, err := hex16("PCI Vendor/Subsystem ID")
	if err != nil {
		return nil, err
	}
	if ok {
		id.VID, id.SSVID = vid, vid // printed once when they are equal
	} else {
		if id.VID, ok, err = hex16("PCI Vendor ID"); err != nil {
			return nil, err
		} else if !ok {
			id.Unknown = append(id.Unknown, "vid")
		}
		if id.SSVID, ok, err = hex16("PCI Vendor Subsystem ID"); err != nil {
			return nil, err
		} else if !ok {
			id.Unknown = append(id.Unknown, "ssvid")
		}
	}
	for _, f := range []struct {
		key, field string
		dst        *string
	}{{"Model Number", "model", &id.Model}, {"Serial Number", "serial", &id.Serial}, {"Firmware Version", "firmware", &id.Firmware}} {
		v, ok := kv[f.key]
		if !ok {
			id.Unknown = append(id.Unknown, f.field)
			continue
		}
		*f.dst = idString([]byte(v))
	}
	id.Unknown = append(id.Unknown, "apsta")
	id.Notes = append(id.Notes, smartctlScaleNote)
	return id, nil
}

func smartctlRow(m []string, want int) (PowerState, error) {
	i, _ := strconv.Atoi(m[1])
	p := PowerState{PS: i}
	if i != want {
		return p, fmt.Errorf("state %d where %d belongs", i, want)
	}
	p.NonOperational = m[2] == "-"
	raw, scale, err := parseWatts(m[3])
	if err != nil || scale == 0 || scale == 3 {
		return p, fmt.Errorf("Max %q is not a power like 6.50W or 0.0050W", clip(m[3], 16))
	}
	p.MaxPowerRaw, p.MaxPowerScale = raw, map[int]int{2: 0, 1: 1}[scale]
	if p.ActivePowerRaw, p.ActiveScale, err = parseWatts(m[4]); err != nil {
		return p, fmt.Errorf("Active: %w", err)
	}
	if p.IdlePowerRaw, p.IdleScale, err = parseWatts(m[5]); err != nil {
		return p, fmt.Errorf("Idle: %w", err)
	}
	ranks := []*int{&p.RRL, &p.RRT, &p.RWL, &p.RWT} // RL RT WL WT
	for k, dst := range ranks {
		v, _ := strconv.Atoi(m[6+k])
		if v > 31 {
			return p, fmt.Errorf("%s %d is more than the 5-bit field holds", []string{"RL", "RT", "WL", "WT"}[k], v)
		}
		*dst = v
	}
	en, err1 := strconv.ParseUint(m[10], 10, 32)
	ex, err2 := strconv.ParseUint(m[11], 10, 32)
	if err1 != nil || err2 != nil {
		return p, fmt.Errorf("Ent_Lat %q / Ex_Lat %q: more than 32 bits", clip(m[10], 12), clip(m[11], 12))
	}
	p.EntryLatencyUs, p.ExitLatencyUs = uint32(en), uint32(ex)
	p.fill()
	return p, nil
}
