package meter

import (
	"context"
	"errors"
	"fmt"

	"github.com/idlewatt/idlewatt/hostclock"
	"github.com/idlewatt/idlewatt/units"
)

// Rail identifies a supply rail of a drive port.
type Rail uint8

// Rails a channel may measure.
const (
	RailOther Rail = 0
	Rail5V    Rail = 1
	Rail12V   Rail = 2
	Rail3V3   Rail = 3
)

// Nominal returns the nominal voltage of r (0 for RailOther).
func (r Rail) Nominal() units.Volts {
	switch r {
	case Rail5V:
		return 5
	case Rail12V:
		return 12
	case Rail3V3:
		return 3.3
	}
	return 0
}

func (r Rail) String() string {
	switch r {
	case Rail5V:
		return "5v"
	case Rail12V:
		return "12v"
	case Rail3V3:
		return "3v3"
	}
	return "other"
}

// Channel is one measured rail of one drive port.
type Channel struct {
	Port int  `json:"port"` // drive port, 1-based; 1 for single-channel meters
	Rail Rail `json:"rail"`
	// VoltLSB and CurrentLSB are the meter's resolution (0 if unknown).
	VoltLSB    units.Volts `json:"volt_lsb_v"`
	CurrentLSB units.Amps  `json:"current_lsb_a"`
	// VoltGainErr, CurrentGainErr and CurrentOffset are the meter's
	// stated calibration limits (0 = not stated): bounds on the gain error
	// of the voltage and current readings, as fractions (0.001 = ±0.1 %),
	// and on the current's offset. Analysis puts them in every interval
	// (docs/analysis.md, "Uncertainty").
	VoltGainErr    float64    `json:"volt_gain_error,omitempty"`
	CurrentGainErr float64    `json:"current_gain_error,omitempty"`
	CurrentOffset  units.Amps `json:"current_offset_a,omitempty"`
}

// Name is the channel's stable short name, e.g. "p1.5v".
func (c Channel) Name() string { return fmt.Sprintf("p%d.%s", c.Port, c.Rail) }

// Info describes a meter as it identified itself.
type Info struct {
	Kind            string        `json:"kind"` // "hub", "ppk2", ...
	Model           string        `json:"model"`
	Firmware        string        `json:"firmware"`
	Serial          string        `json:"serial"`
	ProtocolVersion int           `json:"protocol_version"`
	Ports           int           `json:"ports"`
	Channels        []Channel     `json:"channels"` // every channel the meter can stream
	Rates           []units.Hertz `json:"rates_hz"` // supported sample rates
	MaxVoltage      units.Volts   `json:"max_voltage_v"`
	MaxCurrent      units.Amps    `json:"max_current_a"`
	Capabilities    []string      `json:"capabilities"` // "devslp", "port_power", "marks"
	// CurrentSense is how the meter reads a current flowing the wrong
	// way; analysis explains negative readings by it.
	CurrentSense CurrentSense `json:"current_sense,omitempty"`
}

// CurrentSense says how a meter reads a current that flows the wrong
// way, and so what a negative reading most likely means (docs/meters.md,
// "Negative readings"). The driver states it in its Info; the capture
// header keeps it, so analysis reads the property, never the meter kind.
type CurrentSense string

const (
	// SenseShunt (the zero value, omitted in JSON) is a signed shunt
	// sensor — the hub's INA226/INA228, a line meter's sketch: a current
	// measured backwards reads negative, so mostly negative readings are
	// a shunt wired IN+/IN− the wrong way round.
	SenseShunt CurrentSense = ""
	// SenseSink is an instrument that measures the current it sinks
	// (SCPI source-measure units, supplies): mostly negative readings are
	// its leads, or an ammeter's HI/LO, reversed.
	SenseSink CurrentSense = "sink"
	// SenseUnipolar is a meter that does not measure reverse current
	// (the PPK2): a negative reading is its offset calibration, or a DUT
	// feeding current back.
	SenseUnipolar CurrentSense = "unipolar"
)

// StreamConfig selects what a meter streams.
type StreamConfig struct {
	Rate units.Hertz // samples per second per channel; 0 = the meter's default
	// Ports is the set of ports to stream (1-based); empty = all.
	Ports []int
}

// Block is consecutive samples of one channel. The slices are owned by the
// driver and valid only for the duration of the Sink call that receives the
// block; a sink that keeps samples must copy them.
type Block struct {
	Channel int    // index into the stream's channel list (Stream's Info().Channels order)
	Start   uint64 // meter sample index of V[0] and I[0]
	V       []units.Volts
	I       []units.Amps
}

// Len returns the number of samples in b.
func (b *Block) Len() int { return len(b.I) }

// Gap says that samples [Start, Start+Count) of a channel are missing.
type Gap struct {
	Channel int    // index as in Block; -1 means every channel
	Start   uint64 // first missing sample index
	Count   uint64 // number of missing samples, exact
	Reason  string // "crc", "overrun", "disconnect", "counter", ...
}

// MarkEcho ties the host clock to the meter clock.
type MarkEcho struct {
	ID         uint32
	HostSent   hostclock.Time // hostclock.Now() just before the mark was written
	HostRecv   hostclock.Time // hostclock.Now() when the echo arrived (hub: when its bytes were read from the port) or was decoded
	MeterIndex uint64         // sample index at which the meter saw the mark
	Synthetic  bool           // produced by the driver from receive times, not by the meter
}

// EventKind classifies meter events.
type EventKind uint8

// Meter event kinds.
const (
	EventDevSlp      EventKind = 1 // a port's DEVSLP pin changed; Value 1 = asserted
	EventPortPower   EventKind = 2 // a port's power switched; Value 1 = on
	EventOverCurrent EventKind = 3 // Value = current in µA that tripped
	EventOverrun     EventKind = 4 // meter buffer overrun; Value = samples lost
	EventDisconnect  EventKind = 5 // link to the meter lost
	EventReconnect   EventKind = 6 // link to the meter restored
	// EventLogic: a meter's digital inputs changed (PPK2 D0–D7); Value is
	// the new 8-bit level, D0 in bit 0. The first event gives the initial level.
	EventLogic EventKind = 7
	// EventRestart: the meter's sample index went back (it started counting
	// again: a START from elsewhere, a reset). Index is where the new count
	// continues on the stream's timeline, Value the index the meter sent.
	// A "restart" gap before it covers the samples in between.
	EventRestart EventKind = 8
	// EventDuplicate: the meter sent again Value samples from Index on,
	// indices it had already sent; they were dropped (the first copy is
	// kept), not lost.
	EventDuplicate EventKind = 9
)

func (k EventKind) String() string {
	switch k {
	case EventDevSlp:
		return "devslp"
	case EventPortPower:
		return "port_power"
	case EventOverCurrent:
		return "over_current"
	case EventOverrun:
		return "overrun"
	case EventDisconnect:
		return "disconnect"
	case EventReconnect:
		return "reconnect"
	case EventLogic:
		return "logic"
	case EventRestart:
		return "restart"
	case EventDuplicate:
		return "duplicate"
	}
	return fmt.Sprintf("event(%d)", uint8(k))
}

// Event is something the meter reported that is not a sample.
type Event struct {
	Kind     EventKind
	Port     int    // 0 if not port-specific
	Index    uint64 // meter sample index at which it happened
	Value    int64
	HostRecv hostclock.Time // hostclock.Now() when decoded
}

// Stats are a driver's link-quality counters since it was opened.
type Stats struct {
	Frames         uint64 // good frames decoded
	CRCErrors      uint64 // frames dropped for a bad CRC
	Resyncs        uint64 // times the decoder hunted for the next start sequence
	BytesDiscarded uint64 // bytes skipped while resynchronising
	SamplesLost    uint64 // samples reported as gaps

	// Duplicates counts samples the meter sent again under indices it had
	// already sent (dropped: the first copy is kept; not lost, so not in
	// SamplesLost). Each run of them is an EventDuplicate.
	Duplicates uint64
	// Restarts counts the times the meter's index went back, i.e. it started
	// counting again; each is an EventRestart after a "restart" gap.
	Restarts uint64
	// Recovered counts samples a meter sent again on request (hub protocol
	// v2 RESEND) that filled what would otherwise have been a gap; they are
	// in the stream, not in SamplesLost.
	Recovered uint64
	// Refused counts frames with a good checksum the driver could not use
	// (a frame of a protocol version the link did not negotiate, a value
	// out of its range); each is dropped, never decoded into a sample.
	Refused uint64
	// BadLines counts text lines that were not a reading (line meters).
	// Each one after the first reading is a one-sample "bad-line" gap, so
	// later samples keep their place; lines before it (banners, headers)
	// are counted but are not gaps. FirstBadLine (1-based) and
	// FirstBadByte (0-based offset of its first byte in the stream) locate
	// the first of them; both 0 when BadLines is 0.
	BadLines     uint64
	FirstBadLine uint64
	FirstBadByte uint64
}

// Sink receives a meter's stream. Calls come from one goroutine, in order.
// A non-nil error from a Sink method stops the stream and is returned by
// Stream.
type Sink interface {
	Samples(b *Block) error
	Gap(g Gap) error
	Mark(m MarkEcho) error
	Event(e Event) error
}

// Meter is implemented by every meter driver.
type Meter interface {
	// Info returns the meter's identity and channels.
	Info() Info
	// Stream starts streaming with cfg, delivers everything to sink, and
	// returns when ctx is done (nil error) or on failure. The channels of the
	// stream are Channels(info, cfg) in that order.
	Stream(ctx context.Context, cfg StreamConfig, sink Sink) error
	// Stats returns link-quality counters.
	Stats() Stats
	Close() error
}

// DevSlpPin is implemented by meters that drive a port's DEVSLP pin.
// It is safe to call while Stream runs.
type DevSlpPin interface {
	SetDevSlp(ctx context.Context, port int, asserted bool) error
}

// PortPower is implemented by meters that switch a port's supply.
// It is safe to call while Stream runs.
type PortPower interface {
	SetPortPower(ctx context.Context, port int, on bool) error
}

// Marker is implemented by meters that echo clock marks. The echo arrives
// through Sink.Mark. It is safe to call while Stream runs.
type Marker interface {
	Mark(ctx context.Context, id uint32) error
}

// Channels returns the channels a stream with cfg carries, in Block.Channel
// order: info's channels whose port is in cfg.Ports (all if empty).
func Channels(info Info, cfg StreamConfig) []Channel {
	if len(cfg.Ports) == 0 {
		return info.Channels
	}
	var out []Channel
	for _, c := range info.Channels {
		for _, p := range cfg.Ports {
			if c.Port == p {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// Errors callers branch on.
var (
	// ErrNoDevice: nothing answered at the given port/path.
	ErrNoDevice = errors.New("no meter answered")
	// ErrProtocol: something answered, but not in the expected protocol.
	ErrProtocol = errors.New("meter protocol error")
	// ErrUnsupported: the meter cannot do what was asked (rate, port, capability).
	ErrUnsupported = errors.New("not supported by this meter")
	// ErrRejected: the meter refused a command; wrap it with the reason.
	ErrRejected = errors.New("meter rejected the command")
	// ErrDisconnected: the link went away mid-stream.
	ErrDisconnected = errors.New("meter disconnected")
	// ErrCalibration: the meter reported a calibration, LSB or range value
	// outside the physical bounds its driver documents (docs/meters.md);
	// its readings would be wrong numbers, so it is refused at open. Wrap it
	// with the field and the value.
	ErrCalibration = errors.New("meter calibration out of bounds")
)
