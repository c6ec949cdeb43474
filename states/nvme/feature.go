package nvme

import (
	"encoding/binary"
	"fmt"
)

// Feature identifiers (NVMe Base Specification 2.0 §5.27.1).
const (
	FeaturePowerManagement = 0x02
	FeatureAPST            = 0x0c

	// APSTTableSize is the Autonomous Power State Transition data
	// structure: 32 entries of 64 bits (figure 326).
	APSTTableSize = 256
	apstEntries   = 32
	// MaxITPTms is the largest ITPT a 24-bit field holds.
	MaxITPTms = 1<<24 - 1
)

// APSTEntry is one entry of the APST table: after ITPTms of idle in the
// state this entry belongs to, the controller moves to ITPS. An entry of
// zero means "no transition".
type APSTEntry struct {
	ITPS   int    `json:"itps"`    // bits 7:3
	ITPTms uint32 `json:"itpt_ms"` // bits 31:8
}

// APST is feature 0Ch: the enable bit (Dword 0 bit 0 of the Get Features
// completion) and the table.
type APST struct {
	// Enabled is APSTE; nil when the source held only the table (a raw
	// data dump has no completion Dword 0).
	Enabled *bool `json:"enabled"`
	// Selection is set when the source shows a selection other than the
	// current state (nvme get-feature -s 1 or 2: "Default", "Saved").
	Selection string `json:"selection,omitempty"`
	// Entries[i] is the transition from power state i (32 entries).
	Entries []APSTEntry `json:"entries"`
}

// DecodeAPSTTable decodes the 256-byte APST data structure.
func DecodeAPSTTable(b []byte) ([]APSTEntry, error) {
	if len(b) != APSTTableSize {
		return nil, fmt.Errorf("APST table: %d bytes, want %d", len(b), APSTTableSize)
	}
	out := make([]APSTEntry, apstEntries)
	for i := range out {
		v := binary.LittleEndian.Uint64(b[i*8:])
		out[i] = APSTEntry{ITPS: int(v >> 3 & 0x1f), ITPTms: uint32(v >> 8 & MaxITPTms)}
	}
	return out, nil
}

// EncodeAPSTTable is the inverse of DecodeAPSTTable (entries beyond 32 are
// ignored, missing ones are zero).
func EncodeAPSTTable(e []APSTEntry) []byte {
	b := make([]byte, APSTTableSize)
	for i := 0; i < len(e) && i < apstEntries; i++ {
		v := uint64(e[i].ITPS&0x1f)<<3 | uint64(e[i].ITPTms&MaxITPTms)<<8
		binary.LittleEndian.PutUint64(b[i*8:], v)
	}
	return b
}

// PowerManagement is feature 02h (Dword 0 of Get Features).
type PowerManagement struct {
	PS int `json:"ps"`            // bits 4:0, the current power state as the host set it
	WH int `json:"workload_hint"` // bits 7:5
}

// DecodePowerManagement splits Dword 0 of Get Features 02h.
func DecodePowerManagement(dw0 uint32) PowerManagement {
	return PowerManagement{PS: int(dw0 & 0x1f), WH: int(dw0 >> 5 & 7)}
}

// Reached lists, from state from, the states an APST table moves the
// controller through and the idle time before each, in order, stopping at a
// loop or an entry of zero. It is what "after how long idle does the drive
// reach PSn" means.
func Reached(e []APSTEntry, from int) []APSTEntry {
	var path []APSTEntry
	seen := map[int]bool{from: true}
	cur := from
	for cur >= 0 && cur < len(e) {
		n := e[cur]
		if n.ITPTms == 0 || seen[n.ITPS] { // ITPT 0: no transition from this state
			break
		}
		path = append(path, n)
		seen[n.ITPS] = true
		cur = n.ITPS
	}
	return path
}
