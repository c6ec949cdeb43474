package nvme

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/idlewatt/idlewatt/states/alpm"
	"github.com/idlewatt/idlewatt/units"
)

// Identify Controller data structure (CNS 01h), NVMe Base Specification
// 2.0 §5.17.2.1, figure 275; the same offsets as struct nvme_id_ctrl in
// libnvme and include/linux/nvme.h.
const (
	IdentifySize = 4096

	offVID    = 0  // PCI vendor ID, u16
	offSSVID  = 2  // PCI subsystem vendor ID, u16
	offSN     = 4  // serial number, 20 ASCII bytes, space padded
	offMN     = 24 // model number, 40 bytes
	offFR     = 64 // firmware revision, 8 bytes
	offNPSS   = 263
	offAPSTA  = 265 // bit 0: APST supported
	offPSD    = 2048
	psdSize   = 32
	maxStates = 32 // PSD0…PSD31 fill bytes 2048–3071
)

// Power State Descriptor fields (figure 276), byte offsets inside one
// 32-byte descriptor.
const (
	psdMP    = 0  // maximum power, u16, unit from MXPS
	psdFlags = 3  // bit 0 MXPS (1: 0.0001 W, 0: 0.01 W), bit 1 NOPS
	psdENLAT = 4  // entry latency, u32 µs
	psdEXLAT = 8  // exit latency, u32 µs
	psdRRT   = 12 // relative read throughput, bits 4:0
	psdRRL   = 13
	psdRWT   = 14
	psdRWL   = 15
	psdIDLP  = 16 // idle power, u16
	psdIPS   = 18 // idle power scale, bits 7:6
	psdACTP  = 20 // active power, u16
	psdAPWS  = 22 // active power workload bits 2:0, scale bits 7:6
)

// Identify is the part of Identify Controller that power management uses.
type Identify struct {
	VID      alpm.Hex16 `json:"vid"`
	SSVID    alpm.Hex16 `json:"ssvid"`
	Serial   string     `json:"serial"`
	Model    string     `json:"model"`
	Firmware string     `json:"firmware"`
	// NPSS is the index of the last (lowest-power) state: npss+1 states.
	NPSS int `json:"npss"`
	// APSTA: the controller supports Autonomous Power State Transitions.
	APSTA       bool         `json:"apsta"`
	PowerStates []PowerState `json:"power_states"`
	// Unknown names the fields the source did not carry (smartctl prints
	// no APSTA, a pasted ps table no header): they read as zero above and
	// must not be taken for the drive's values. Empty for binary data.
	Unknown []string `json:"unknown,omitempty"`
	// Notes are what the source's tool is known to print differently from
	// the drive's data (docs/states.md, "Formats").
	Notes []string `json:"notes,omitempty"`
}

// Known reports whether field (a JSON key of Identify) came from the source.
func (id *Identify) Known(field string) bool {
	for _, u := range id.Unknown {
		if u == field {
			return false
		}
	}
	return true
}

// PowerState is one power-state descriptor.
type PowerState struct {
	PS             int         `json:"ps"`
	MaxPower       units.Watts `json:"max_power_w"`
	NonOperational bool        `json:"non_operational"`
	EntryLatencyUs uint32      `json:"entry_latency_us"`
	ExitLatencyUs  uint32      `json:"exit_latency_us"`
	RRT            int         `json:"relative_read_throughput"`
	RRL            int         `json:"relative_read_latency"`
	RWT            int         `json:"relative_write_throughput"`
	RWL            int         `json:"relative_write_latency"`
	// IdlePower and ActivePower are nil when the drive does not report
	// them (scale 0) or uses the reserved scale 3.
	IdlePower      *units.Watts `json:"idle_power_w"`
	ActivePower    *units.Watts `json:"active_power_w"`
	ActiveWorkload int          `json:"active_power_workload"`
	MaxPowerRaw    uint16       `json:"max_power_raw"`
	MaxPowerScale  int          `json:"max_power_scale"` // MXPS: 0 = 0.01 W units, 1 = 0.0001 W
	IdlePowerRaw   uint16       `json:"idle_power_raw"`
	IdleScale      int          `json:"idle_scale"` // 0 not reported, 1 = 0.0001 W, 2 = 0.01 W
	ActivePowerRaw uint16       `json:"active_power_raw"`
	ActiveScale    int          `json:"active_scale"`
}

// TotalLatencyUs is entry + exit latency, what the kernel compares with
// the APST latency tolerances.
func (p PowerState) TotalLatencyUs() uint64 {
	return uint64(p.EntryLatencyUs) + uint64(p.ExitLatencyUs)
}

// maxPower converts MP with MXPS.
func maxPower(raw uint16, mxps int) units.Watts {
	if mxps == 1 {
		return units.Watts(float64(raw) * 0.0001)
	}
	return units.Watts(float64(raw) * 0.01)
}

// scaledPower converts IDLP/ACTP with their 2-bit scale; nil when not
// reported (0) or reserved (3).
func scaledPower(raw uint16, scale int) *units.Watts {
	var w units.Watts
	switch scale {
	case 1:
		w = units.Watts(float64(raw) * 0.0001)
	case 2:
		w = units.Watts(float64(raw) * 0.01)
	default:
		return nil
	}
	return &w
}

// DecodeIdentify decodes a 4096-byte Identify Controller structure. Other
// sizes, and an NPSS beyond the 32 descriptors the structure holds, are
// refused with the offset.
func DecodeIdentify(b []byte) (*Identify, error) {
	if len(b) != IdentifySize {
		return nil, fmt.Errorf("identify controller: %d bytes, want %d", len(b), IdentifySize)
	}
	id := &Identify{
		VID:      alpm.Hex16(binary.LittleEndian.Uint16(b[offVID:])),
		SSVID:    alpm.Hex16(binary.LittleEndian.Uint16(b[offSSVID:])),
		Serial:   idString(b[offSN : offSN+20]),
		Model:    idString(b[offMN : offMN+40]),
		Firmware: idString(b[offFR : offFR+8]),
		NPSS:     int(b[offNPSS]),
		APSTA:    b[offAPSTA]&1 == 1,
	}
	if id.NPSS >= maxStates {
		return nil, fmt.Errorf("identify controller: byte %d (NPSS) is %d: more than the %d descriptors the structure holds", offNPSS, id.NPSS, maxStates)
	}
	for i := 0; i <= id.NPSS; i++ {
		id.PowerStates = append(id.PowerStates, decodePSD(i, b[offPSD+i*psdSize:offPSD+(i+1)*psdSize]))
	}
	return id, nil
}

func decodePSD(i int, d []byte) PowerState {
	p := PowerState{
		PS:             i,
		MaxPowerRaw:    binary.LittleEndian.Uint16(d[psdMP:]),
		MaxPowerScale:  int(d[psdFlags] & 1),
		NonOperational: d[psdFlags]&2 != 0,
		EntryLatencyUs: binary.LittleEndian.Uint32(d[psdENLAT:]),
		ExitLatencyUs:  binary.LittleEndian.Uint32(d[psdEXLAT:]),
		RRT:            int(d[psdRRT] & 0x1f),
		RRL:            int(d[psdRRL] & 0x1f),
		RWT:            int(d[psdRWT] & 0x1f),
		RWL:            int(d[psdRWL] & 0x1f),
		IdlePowerRaw:   binary.LittleEndian.Uint16(d[psdIDLP:]),
		IdleScale:      int(d[psdIPS] >> 6),
		ActivePowerRaw: binary.LittleEndian.Uint16(d[psdACTP:]),
		ActiveWorkload: int(d[psdAPWS] & 7),
		ActiveScale:    int(d[psdAPWS] >> 6),
	}
	p.fill()
	return p
}

// fill derives the typed powers from the raw fields.
func (p *PowerState) fill() {
	p.MaxPower = maxPower(p.MaxPowerRaw, p.MaxPowerScale)
	p.IdlePower = scaledPower(p.IdlePowerRaw, p.IdleScale)
	p.ActivePower = scaledPower(p.ActivePowerRaw, p.ActiveScale)
}

// idString trims the space padding of an Identify ASCII field and replaces
// bytes outside printable ASCII by '?' (a corrupt dump must not put control
// characters on a terminal).
func idString(b []byte) string {
	s := []byte(strings.TrimRight(string(b), " \x00"))
	for i, c := range s {
		if c < 0x20 || c > 0x7e {
			s[i] = '?'
		}
	}
	return string(s)
}

// Encode builds the 4096-byte structure id describes (fields not modelled
// are zero). Fixtures and tests use it; DecodeIdentify(id.Encode())
// returns id.
func (id *Identify) Encode() []byte {
	b := make([]byte, IdentifySize)
	binary.LittleEndian.PutUint16(b[offVID:], uint16(id.VID))
	binary.LittleEndian.PutUint16(b[offSSVID:], uint16(id.SSVID))
	putString(b[offSN:offSN+20], id.Serial)
	putString(b[offMN:offMN+40], id.Model)
	putString(b[offFR:offFR+8], id.Firmware)
	b[offNPSS] = byte(id.NPSS)
	if id.APSTA {
		b[offAPSTA] = 1
	}
	for i, p := range id.PowerStates {
		if i >= maxStates {
			break
		}
		d := b[offPSD+i*psdSize:]
		binary.LittleEndian.PutUint16(d[psdMP:], p.MaxPowerRaw)
		d[psdFlags] = byte(p.MaxPowerScale & 1)
		if p.NonOperational {
			d[psdFlags] |= 2
		}
		binary.LittleEndian.PutUint32(d[psdENLAT:], p.EntryLatencyUs)
		binary.LittleEndian.PutUint32(d[psdEXLAT:], p.ExitLatencyUs)
		d[psdRRT], d[psdRRL], d[psdRWT], d[psdRWL] = byte(p.RRT&0x1f), byte(p.RRL&0x1f), byte(p.RWT&0x1f), byte(p.RWL&0x1f)
		binary.LittleEndian.PutUint16(d[psdIDLP:], p.IdlePowerRaw)
		d[psdIPS] = byte(p.IdleScale&3) << 6
		binary.LittleEndian.PutUint16(d[psdACTP:], p.ActivePowerRaw)
		d[psdAPWS] = byte(p.ActiveWorkload&7) | byte(p.ActiveScale&3)<<6
	}
	return b
}

func putString(dst []byte, s string) {
	for i := range dst {
		dst[i] = ' '
	}
	copy(dst, s)
}

// DeepestNonOperational returns the index of the lowest-power
// non-operational state, or -1.
func (id *Identify) DeepestNonOperational() int {
	for i := len(id.PowerStates) - 1; i >= 0; i-- {
		if id.PowerStates[i].NonOperational {
			return i
		}
	}
	return -1
}
