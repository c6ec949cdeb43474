package ppk2

import "math"

// Encode is the inverse of Amps for emulators and tests: it picks the most
// sensitive range whose ADC reading of amps stays below 95 % of full scale
// (as the device's auto-ranging does, roughly) and packs the word.
// Currents below the most sensitive range's zero encode as ADC 0.
func (k *Converter) Encode(amps float64, counter, logic uint8) Word {
	var adc float64
	r := 0
	for ; r < Ranges; r++ {
		adc = k.adcFor(r, amps)
		if adc <= 0.95*0x3fff || r == Ranges-1 {
			break
		}
	}
	code := uint32(math.Max(0, math.Min(0x3fff, math.Round(adc))))
	return Word(code | uint32(r)<<14 | uint32(counter&63)<<18 | uint32(logic)<<24)
}

// adcFor solves ug·(gs·r0² + gi·r0 + add) = amps for r0 and returns the
// 14-bit ADC value (adc/4) that yields it in range r.
func (k *Converter) adcFor(r int, amps float64) float64 {
	c := k.add[r] - amps/k.ug[r]
	var r0 float64
	if math.Abs(k.gs[r]) < 1e-12 {
		r0 = -c / k.gi[r]
	} else {
		disc := k.gi[r]*k.gi[r] - 4*k.gs[r]*c
		if disc < 0 {
			disc = 0
		}
		r0 = (-k.gi[r] + math.Sqrt(disc)) / (2 * k.gs[r])
	}
	return (r0/k.mult[r] + k.o[r]) / 4
}
