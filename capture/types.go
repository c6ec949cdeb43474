package capture

import (
	"encoding/json"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
	"github.com/idlewatt/idlewatt/workload"
)

// Header is the capture's metadata, written first.
type Header struct {
	Created   string          `json:"created"`    // RFC 3339 wall-clock time, for humans only
	Meter     meter.Info      `json:"meter"`      // identity as the meter reported it
	Channels  []meter.Channel `json:"channels"`   // stream channel order (Block.Channel indexes this)
	RateHz    units.Hertz     `json:"rate_hz"`    // samples per second per channel
	StartHost hostclock.Time  `json:"start_host"` // hostclock.Now() when streaming was requested
	// Drives names what sits on each port (by port), e.g. profile or model.
	Drives []DriveInfo `json:"drives,omitempty"`
	// Config is the resolved configuration of the run, verbatim.
	Config json.RawMessage `json:"config,omitempty"`
	Tool   string          `json:"tool"` // "idlewatt vX"
}

// DriveInfo names the drive on a port.
type DriveInfo struct {
	Port    int    `json:"port"`
	Name    string `json:"name"`
	Profile string `json:"profile,omitempty"` // drivesim profile name, when simulated or known
	Target  string `json:"target,omitempty"`  // block device or file the workload used
	// Model and Firmware identify a real drive (config drives[].model,
	// drives[].firmware), for queries across runs (docs/lab.md).
	Model    string `json:"model,omitempty"`
	Firmware string `json:"firmware,omitempty"`
	// Interface is InterfaceNVMe for an NVMe drive (Profile then names a
	// states/nvme/sim profile), "" for SATA.
	Interface string `json:"interface,omitempty"`
}

// InterfaceNVMe is DriveInfo.Interface of an NVMe drive.
const InterfaceNVMe = "nvme"

// Op and IOEvent are the workload's types (the I/O side feeds the capture,
// so the capture imports them, not the reverse); these names keep
// capture.Op, capture.OpRead, … and capture.IOEvent working.
type (
	Op      = workload.Op
	IOEvent = workload.IOEvent
)

// I/O operations (workload.OpRead, …).
const (
	OpRead  = workload.OpRead
	OpWrite = workload.OpWrite
	OpFlush = workload.OpFlush
	OpTrim  = workload.OpTrim
)

// StateKind classifies host-side state events.
type StateKind uint8

// Host-side state events.
const (
	StatePolicy    StateKind = 1 // ALPM policy target set; Value = policy name
	StateDevSlpPin StateKind = 2 // host asked for DEVSLP assert/deassert; Value "1"/"0"
	StatePhase     StateKind = 3 // a measurement phase began; Value = phase name ("workload:pcmark7", "idle", "devslp-cycle:3", "end")
	StateNote      StateKind = 4 // free text
	StatePortPower StateKind = 5 // host asked for port power on/off; Value "1"/"0"
)

// StateEvent is a host-side event on the host monotonic clock.
type StateEvent struct {
	Host  hostclock.Time // hostclock.Now()
	Port  int            // 0 = all ports / not port-specific
	Kind  StateKind
	Value string
}

// Kind says which field of a Record is set.
type Kind uint8

// Record kinds.
const (
	KindSamples Kind = 1
	KindGap     Kind = 2
	KindMark    Kind = 3
	KindEvent   Kind = 4
	KindIO      Kind = 5
	KindState   Kind = 6
	KindSummary Kind = 7
	KindStats   Kind = 8
	// KindRejected: samples the Reader did not place on the channel's
	// timeline because their indices are already covered (Record.Rejected
	// says how); Block holds them. Consumers that only want samples skip it.
	KindRejected Kind = 9
)

// Record is one item read back from a capture. Only the field named by Kind
// is meaningful. Block (and its slices), Summary (and its slices) and IO are
// owned by the Reader, reused, and valid only until the next call to Next;
// copy what you keep.
type Record struct {
	Kind    Kind
	Block   *meter.Block
	Gap     meter.Gap
	Mark    meter.MarkEcho
	Event   meter.Event
	IO      []IOEvent // a batch, in completion order
	State   StateEvent
	Stats   meter.Stats // link counters at the time they were written (cumulative)
	Summary *Summary
	// Rejected says why a KindRejected record's samples were not placed.
	Rejected Reject
	// Host is hostclock.Now() when a KindStats record's counters were read.
	Host hostclock.Time
	// StatsCounters is how many of meter.Stats' counters a KindStats
	// record carried, in stats-extended order (docs/capture-format.md):
	// StatsCountersV10 for a stats chunk, StatsCountersV11 for a
	// stats-extended chunk of 1.1, StatsCountersRetx once Recovered and
	// Refused were added. Counters beyond it are unknown, not zero.
	StatsCounters int
	Offset        int64 // byte offset of the chunk that held this record
}

// Summary is a decimated view of one channel: per window of Per samples
// (aligned to multiples of Per in index space), min/max/mean power of the
// samples present. Charts and zooms read summaries instead of every sample.
//
// A format 1 capture has one level (Level 0, StdW and Count nil: a window's
// sample count is not stored). A format 2 capture has several levels, each
// Per = SummaryPer·16^Level, with σ and the count of samples present per
// window; a consumer picks one level (by Per or Level, as analysis/plot.go
// does: the coarsest that still gives each chart point two summary points)
// and must not add points of different levels together. Read with
// SkipSamples(true), a scan hands out only summaries and events, the same way
// for both formats.
type Summary struct {
	Channel int
	Level   int    // 0 = finest
	Start   uint64 // sample index of the first summarised sample
	Per     uint32 // samples per summary point
	MinW    []float32
	MaxW    []float32
	MeanW   []float32
	StdW    []float32 // population σ of power per window (format 2; nil in format 1)
	Count   []uint32  // samples present per window (format 2; nil in format 1)
}

// N is the number of samples window k summarises; Per when the capture
// (format 1) does not say.
func (s *Summary) N(k int) uint32 {
	if k < len(s.Count) {
		return s.Count[k]
	}
	return s.Per
}
