package alpm

import (
	"fmt"
	"strconv"
	"strings"
)

// Hex32 is a register value; it marshals as "0x%08x" so JSON shows the bits
// a reader compares against the AHCI specification.
type Hex32 uint32

func (h Hex32) String() string               { return fmt.Sprintf("0x%08x", uint32(h)) }
func (h Hex32) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// Hex16 is an IDENTIFY word; it marshals as "0x%04x".
type Hex16 uint16

func (h Hex16) String() string               { return fmt.Sprintf("0x%04x", uint16(h)) }
func (h Hex16) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// Bit positions from the AHCI 1.3.1 specification, as spelled in the
// kernel's drivers/ata/ahci.h (HOST_CAP_*, HOST_CAP2_*, PORT_CMD_*).
const (
	capSXS  = 5  // HOST_CAP_SXS: supports external SATA
	capPSC  = 13 // HOST_CAP_PART: Partial state capable
	capSSC  = 14 // HOST_CAP_SSC: Slumber state capable
	capSALP = 26 // HOST_CAP_ALPM: aggressive link power management

	cap2APST = 2 // HOST_CAP2_APST: automatic Partial to Slumber
	cap2SDS  = 3 // HOST_CAP2_SDS: supports DevSlp
	cap2SADM = 4 // HOST_CAP2_SADM: supports aggressive DevSlp management
	cap2DESO = 5 // HOST_CAP2_DESO: DevSlp entered from Slumber only

	cmdHPCP     = 18 // PORT_CMD_HPCP: hot-plug capable port
	cmdESP      = 21 // PORT_CMD_ESP: external SATA port
	cmdALPE     = 26 // PORT_CMD_ALPE: aggressive link PM enable
	cmdASP      = 27 // PORT_CMD_ASP: aggressive Slumber (vs Partial)
	cmdICCShift = 28 // PORT_CMD_ICC_MASK = 0xf << 28
)

func bit(v uint32, n uint) bool { return v>>n&1 == 1 }

// HostCaps is ahci_host_caps, the HBA's CAP register (AHCI 1.3.1 §3.1.1).
type HostCaps struct {
	Raw   Hex32 `json:"raw"`
	Ports int   `json:"ports"` // CAP.NP + 1
	SXS   bool  `json:"sxs"`   // the HBA has external (eSATA) ports
	PSC   bool  `json:"psc"`   // Partial supported
	SSC   bool  `json:"ssc"`   // Slumber supported
	SALP  bool  `json:"salp"`  // the HBA can enter Partial/Slumber by itself
}

// DecodeHostCaps decodes a CAP value.
func DecodeHostCaps(v uint32) HostCaps {
	return HostCaps{Raw: Hex32(v), Ports: int(v&0x1f) + 1, SXS: bit(v, capSXS), PSC: bit(v, capPSC), SSC: bit(v, capSSC), SALP: bit(v, capSALP)}
}

// HostCap2 is ahci_host_cap2, the CAP2 register (AHCI 1.3.1 §3.1.10).
type HostCap2 struct {
	Raw  Hex32 `json:"raw"`
	APST bool  `json:"apst"` // automatic Partial to Slumber
	SDS  bool  `json:"sds"`  // DevSlp supported
	SADM bool  `json:"sadm"` // aggressive DevSlp management (HBA asserts DEVSLP after DITO idle)
	DESO bool  `json:"deso"` // DevSlp may be entered only from Slumber
}

// DecodeHostCap2 decodes a CAP2 value.
func DecodeHostCap2(v uint32) HostCap2 {
	return HostCap2{Raw: Hex32(v), APST: bit(v, cap2APST), SDS: bit(v, cap2SDS), SADM: bit(v, cap2SADM), DESO: bit(v, cap2DESO)}
}

// PortCmd is ahci_port_cmd, the port's PxCMD register (AHCI 1.3.1 §3.3.7),
// read live by the kernel on every access.
type PortCmd struct {
	Raw  Hex32 `json:"raw"`
	HPCP bool  `json:"hpcp"` // hot-plug capable port
	ESP  bool  `json:"esp"`  // external SATA port
	ALPE bool  `json:"alpe"` // aggressive link PM enabled
	ASP  bool  `json:"asp"`  // aggressive entry goes to Slumber, not Partial
	ICC  int   `json:"icc"`  // interface communication control (pending request; 0 when idle)
}

// DecodePortCmd decodes a PxCMD value.
func DecodePortCmd(v uint32) PortCmd {
	return PortCmd{Raw: Hex32(v), HPCP: bit(v, cmdHPCP), ESP: bit(v, cmdESP), ALPE: bit(v, cmdALPE), ASP: bit(v, cmdASP), ICC: int(v >> cmdICCShift)}
}

// External reports a port the kernel (6.17+) and tuned treat as unfit for
// LPM: external or hot-plug capable (tuned skips ALPM when PxCMD & 0x240000).
func (c PortCmd) External() bool { return c.ESP || c.HPCP }

// ICCName names the ICC field (AHCI 1.3.1 §3.3.7: 0 idle, 1 active,
// 2 Partial, 6 Slumber, 8 DevSlp; others reserved).
func (c PortCmd) ICCName() string {
	switch c.ICC {
	case 0:
		return "idle"
	case 1:
		return "active"
	case 2:
		return "partial"
	case 6:
		return "slumber"
	case 8:
		return "devslp"
	}
	return "reserved"
}

// PortDevSlp is the port's PxDEVSLP register (AHCI 1.3.1 §3.3.17, port
// offset 0x44). Mainline Linux does not expose it; idlewatt reads it only
// from the optional file idlewatt_port_devslp (see docs/states.md).
type PortDevSlp struct {
	Raw    Hex32 `json:"raw"`
	ADSE   bool  `json:"adse"`    // aggressive DevSlp enabled
	DSP    bool  `json:"dsp"`     // DevSlp present: set by firmware when the DEVSLP pin is wired
	DETOms int   `json:"deto_ms"` // bits 9:2
	MDATms int   `json:"mdat_ms"` // bits 14:10
	DITO   int   `json:"dito"`    // bits 24:15, units of (DM+1) ms
	DM     int   `json:"dm"`      // bits 28:25
	// IdleMs is DITO × (DM+1): how long the port idles before the HBA
	// asserts DEVSLP by itself.
	IdleMs int `json:"idle_ms"`
}

// DecodePortDevSlp decodes a PxDEVSLP value.
func DecodePortDevSlp(v uint32) PortDevSlp {
	d := PortDevSlp{Raw: Hex32(v), ADSE: bit(v, 0), DSP: bit(v, 1),
		DETOms: int(v >> 2 & 0xff), MDATms: int(v >> 10 & 0x1f), DITO: int(v >> 15 & 0x3ff), DM: int(v >> 25 & 0xf)}
	d.IdleMs = d.DITO * (d.DM + 1)
	return d
}

// ParseHex32 parses a register file as the kernel prints it ("%x\n"); a
// "0x" prefix is tolerated for hand-written files.
func ParseHex32(b []byte) (uint32, error) {
	s := strings.TrimSpace(string(b))
	t := strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	if t == "" {
		return 0, fmt.Errorf("empty, want a hex number")
	}
	v, err := strconv.ParseUint(t, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("%q is not a 32-bit hex number", clip(s, 40))
	}
	return uint32(v), nil
}

// clip shortens s for an error message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
