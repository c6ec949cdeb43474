package hub

import (
	"fmt"
	"math"

	"github.com/idlewatt/idlewatt/meter"
)

// Physical bounds of what a hub may report about itself
// (docs/hub-protocol.md § Bounds). A hub beyond them would make every
// reading a wrong number — a bus LSB of 0 reads every rail as 0 V, a
// current LSB of 0xFFFFFFFF nA reads a SATA drive as 34 kW — so Open and
// NewReplay refuse it with an error wrapping meter.ErrCalibration.
const (
	// MinBusLSBuV and MaxBusLSBuV bound the bus-voltage LSB: an INA226 has
	// 1250 µV, an INA219 4000 µV, an INA228 195 µV; above 10 mV a 5 V rail
	// has fewer than 500 counts.
	MinBusLSBuV = 10
	MaxBusLSBuV = 10_000
	// RailHeadroom: a rail's full-scale voltage must reach its nominal
	// voltage plus the SATA/ATX tolerance (±5 %), or readings clip.
	RailHeadroom = 1.05
	// MaxRailMilliVolt: no rail of a drive port needs more than 60 V.
	MaxRailMilliVolt = 60_000
	// MaxFullScaleA bounds a rail's current range (32767 × its current
	// LSB): a SATA power connector carries 4.5 A per rail (3 pins ×
	// 1.5 A); 10 A leaves headroom for any hub design.
	MaxFullScaleA = 10.0
	// CalLSBFactor: a calibrated current LSB is a trim of the rail's
	// nominal one; more than ×2 either way is a unit error (µA for nA).
	CalLSBFactor = 2.0
	// MinShuntMicroOhm and MaxShuntMicroOhm bound a stated shunt (0 = not
	// stated): below 100 µΩ the shunt voltage is noise, above 1 Ω a 3 A
	// spin-up drops 3 V.
	MinShuntMicroOhm = 100
	MaxShuntMicroOhm = 1_000_000
	// MaxRateHz bounds a listed sample rate.
	MaxRateHz = 1_000_000
	// ina226CAL is the INA226 calibration constant: CAL = 0.00512 /
	// (current LSB × R_shunt); CalTolerance is how far CAL may differ from
	// it (the register is an integer, and hubs round either way).
	ina226CAL    = 0.00512
	CalTolerance = 0.01
)

// maxCurrentLSBnA is the largest current LSB with MaxFullScaleA full scale.
var maxCurrentLSBnA = uint32(math.Floor(MaxFullScaleA / 32767 * 1e9))

func boundsErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", meter.ErrCalibration, fmt.Sprintf(format, a...))
}

// Check tests an identity against the physical bounds above. The error
// names the field and the value.
func (id *Identity) Check() error {
	if id.BusLSBuV < MinBusLSBuV || id.BusLSBuV > MaxBusLSBuV {
		return boundsErr("IDENTITY bus voltage LSB %d µV outside %d–%d µV", id.BusLSBuV, MinBusLSBuV, MaxBusLSBuV)
	}
	seen := map[meter.Rail]bool{}
	for i, r := range id.Rails {
		nom := float64(r.Rail.Nominal())
		if nom == 0 {
			return boundsErr("IDENTITY rail %d: rail id %d (1 = 5 V, 2 = 12 V, 3 = 3.3 V)", i, r.Rail)
		}
		if seen[r.Rail] {
			return boundsErr("IDENTITY rail %d: a second %s rail", i, r.Rail)
		}
		seen[r.Rail] = true
		lo := math.Round(nom * RailHeadroom * 1000)
		hi := min(MaxRailMilliVolt, 65535*float64(id.BusLSBuV)/1000)
		if float64(r.MaxMilliVolt) < lo || float64(r.MaxMilliVolt) > hi {
			return boundsErr("IDENTITY rail %d (%s): full-scale voltage %d mV outside %.0f–%.0f mV (%g V + 5 %%, up to what the bus LSB can count)",
				i, r.Rail, r.MaxMilliVolt, lo, hi, nom)
		}
		if r.CurrentLSBnA < 1 || r.CurrentLSBnA > maxCurrentLSBnA {
			return boundsErr("IDENTITY rail %d (%s): current LSB %d nA outside 1–%d nA (full scale 32767 × LSB ≤ %g A)",
				i, r.Rail, r.CurrentLSBnA, maxCurrentLSBnA, MaxFullScaleA)
		}
	}
	for i, q := range id.Rates {
		if q > MaxRateHz {
			return boundsErr("IDENTITY rate %d: %d Hz above %d Hz", i, q, MaxRateHz)
		}
	}
	if id.Version < 2 {
		return nil
	}
	if id.MaxFrame < MinMaxFrame || id.MaxFrame > MaxFrame {
		return boundsErr("IDENTITY v2 maximum frame %d bytes outside %d–%d", id.MaxFrame, MinMaxFrame, MaxFrame)
	}
	if id.Formats&FormatBit16 == 0 {
		return boundsErr("IDENTITY v2 formats 0x%02X lack the 16-bit format (bit 0), which every hub has", id.Formats)
	}
	if id.Formats&FormatBitPacked != 0 && id.Formats&FormatBit20 == 0 {
		return boundsErr("IDENTITY v2 formats 0x%02X list the packed format (bit 2) without the 20-bit one (bit 1) whose LSBs it uses", id.Formats)
	}
	if id.Formats&FormatBit20 != 0 {
		for i, w := range id.WideLSBpA {
			if w < 1 || w > maxWideLSBpA {
				return boundsErr("IDENTITY rail %d (%s): 20-bit current LSB %d pA outside 1–%d pA (full scale 524287 × LSB ≤ %g A)",
					i, id.Rails[i].Rail, w, maxWideLSBpA, MaxFullScaleA)
			}
		}
	}
	return nil
}

// maxWideLSBpA is the largest 20-bit current LSB with MaxFullScaleA full scale.
var maxWideLSBpA = uint32(math.Floor(MaxFullScaleA / (1<<19 - 1) * 1e12))

// Check tests a calibration against id (already checked) and the bounds
// above: each entry names a port and rail the hub has, its current LSB (0
// = use the nominal one) is within CalLSBFactor of the nominal and within
// the full-scale bound, a stated shunt is plausible, and a CAL register
// with a stated shunt agrees with the INA226 formula.
func (c *Calibration) Check(id *Identity) error {
	for k, e := range c.Entries {
		where := fmt.Sprintf("CALIBRATION entry %d (port %d, rail %s)", k, e.Port, e.Rail)
		if e.Port < 1 || e.Port > id.Ports {
			return boundsErr("%s: port %d (the hub has ports 1–%d)", where, e.Port, id.Ports)
		}
		var nominal uint32
		for _, r := range id.Rails {
			if r.Rail == e.Rail {
				nominal = r.CurrentLSBnA
			}
		}
		if nominal == 0 {
			return boundsErr("%s: the hub has no such rail", where)
		}
		if e.WideLSBpA != 0 {
			var wnom uint32
			for i, r := range id.Rails {
				if r.Rail == e.Rail && i < len(id.WideLSBpA) {
					wnom = id.WideLSBpA[i]
				}
			}
			if wnom == 0 {
				return boundsErr("%s: a 20-bit current LSB (%d pA) from a hub without the 20-bit format", where, e.WideLSBpA)
			}
			lo, hi := float64(wnom)/CalLSBFactor, min(float64(wnom)*CalLSBFactor, float64(maxWideLSBpA))
			if float64(e.WideLSBpA) < lo || float64(e.WideLSBpA) > hi {
				return boundsErr("%s: 20-bit current LSB %d pA outside %.0f–%.0f pA (×%g of the nominal %d pA)",
					where, e.WideLSBpA, lo, hi, CalLSBFactor, wnom)
			}
		}
		if e.CurrentLSBnA == 0 {
			continue // not calibrated: the nominal LSB stands
		}
		lo, hi := float64(nominal)/CalLSBFactor, min(float64(nominal)*CalLSBFactor, float64(maxCurrentLSBnA))
		if float64(e.CurrentLSBnA) < lo || float64(e.CurrentLSBnA) > hi {
			return boundsErr("%s: current LSB %d nA outside %.0f–%.0f nA (×%g of the nominal %d nA, full scale ≤ %g A)",
				where, e.CurrentLSBnA, lo, hi, CalLSBFactor, nominal, MaxFullScaleA)
		}
		if e.ShuntMicroOhm == 0 {
			continue
		}
		if e.ShuntMicroOhm < MinShuntMicroOhm || e.ShuntMicroOhm > MaxShuntMicroOhm {
			return boundsErr("%s: shunt %d µΩ outside %d–%d µΩ", where, e.ShuntMicroOhm, MinShuntMicroOhm, MaxShuntMicroOhm)
		}
		if e.CalReg != 0 {
			want := ina226CAL / (float64(e.CurrentLSBnA) * 1e-9 * float64(e.ShuntMicroOhm) * 1e-6)
			if math.Abs(float64(e.CalReg)-want) > max(1, CalTolerance*want) {
				return boundsErr("%s: CAL register %d disagrees with 0.00512 / (current LSB %d nA × shunt %d µΩ) = %.0f: the LSB or the shunt is wrong",
					where, e.CalReg, e.CurrentLSBnA, e.ShuntMicroOhm, want)
			}
		}
	}
	return nil
}
