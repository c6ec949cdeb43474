package ppk2

import "encoding/binary"

// SampleRate is the PPK2's fixed raw sample rate.
const SampleRate = 100_000

// adcMult converts ADC counts (×4) to volts across the shunt.
const adcMult = 1.8 / 163840

// Word is one raw 4-byte sample as the device sends it (little-endian).
type Word uint32

// WordAt decodes the word at b[0:4]; b must hold at least 4 bytes.
func WordAt(b []byte) Word { return Word(binary.LittleEndian.Uint32(b)) }

// ADC returns the 14-bit ADC reading.
func (w Word) ADC() uint16 { return uint16(w & 0x3fff) }

// Range returns the shunt range, clamped to 4 as the device can report 5–7.
func (w Word) Range() uint8 { return min(uint8(w>>14)&7, Ranges-1) }

// Counter returns the 6-bit sample counter (mod 64).
func (w Word) Counter() uint8 { return uint8(w>>18) & 0x3f }

// Logic returns the digital inputs D0–D7 (D0 in bit 0).
func (w Word) Logic() uint8 { return uint8(w >> 24) }

// Converter turns words into amperes with one calibration and supply
// voltage. Per-range terms are folded once so Amps is a handful of flops in
// exactly the reference formula's order (results are bit-identical to it).
type Converter struct {
	o, mult, gs, gi, ug, add [Ranges]float64
}

// NewConverter folds c for a supply set-point of vddMV millivolts.
func NewConverter(c Calibration, vddMV float64) *Converter {
	var k Converter
	for r := range Ranges {
		k.o[r] = c.O[r]
		k.mult[r] = adcMult / c.R[r]
		k.gs[r], k.gi[r], k.ug[r] = c.GS[r], c.GI[r], c.UG[r]
		k.add[r] = c.S[r]*(vddMV/1000) + c.I[r]
	}
	return &k
}

// Amps converts w without spike filtering.
func (k *Converter) Amps(w Word) float64 {
	r := w.Range()
	adc := float64(w.ADC()) * 4
	r0 := (adc - k.o[r]) * k.mult[r]
	return k.ug[r] * (r0*(k.gs[r]*r0+k.gi[r]) + k.add[r])
}

// SpikeFilter smooths the sample at a range switch and the two after it,
// exactly as both reference hosts do: the shunt switch leaves a transient
// that reads as a spike. The zero value is ready to use.
type SpikeFilter struct {
	avg, avg4   float64
	set         bool
	prevRange   uint8
	rangeSet    bool
	consecutive int
	afterSpike  int
}

// Apply filters current i measured in range rng.
func (f *SpikeFilter) Apply(i float64, rng uint8) float64 {
	prev, prev4 := f.avg, f.avg4
	if !f.set {
		f.avg, f.avg4, f.set = i, i, true
	} else {
		f.avg = 0.18*i + 0.82*f.avg
		f.avg4 = 0.06*i + 0.94*f.avg4
	}
	if !f.rangeSet {
		f.prevRange, f.rangeSet = rng, true
	}
	if rng != f.prevRange || f.afterSpike > 0 {
		if rng != f.prevRange {
			f.consecutive = 0
			f.afterSpike = 3
		} else {
			f.consecutive++
		}
		if rng == Ranges-1 {
			if f.consecutive < 2 {
				f.avg, f.avg4 = prev, prev4
			}
			i = f.avg4
		} else {
			i = f.avg
		}
		f.afterSpike--
	}
	f.prevRange = rng
	return i
}
