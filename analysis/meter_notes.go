package analysis

import (
	"fmt"
	"math"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// What the meter's own account says about its data (issue 13): index
// restarts and duplicates, line-meter bad lines, and negative readings.
// Each becomes a report note; nothing here changes a number.

// meterStatsNotes turns the capture's last link counters into notes.
// gapSamples are the missing samples per gap reason.
func meterStatsNotes(st meter.Stats, gapSamples map[string]uint64, rate units.Hertz) []string {
	var out []string
	const restarted = "the meter's sample index restarted %d× (it counted again from a lower index: a START from elsewhere, a reset); "
	switch n := gapSamples["restart"]; {
	case st.Restarts > 0 && n == 0:
		out = append(out, fmt.Sprintf(restarted+"each new count continues the timeline right after the old one, with no gap: "+
			"nothing (no host times, as in a replayed stream) said how long the meter was away", st.Restarts))
	case st.Restarts > 0:
		out = append(out, fmt.Sprintf(restarted+"each new count continues the timeline after a \"restart\" gap, %d samples (%.3f s) in all, "+
			"whose length is estimated from the host clock, not exact", st.Restarts, n, rate.Span(float64(n))))
	}
	if st.Duplicates > 0 {
		out = append(out, fmt.Sprintf("the meter sent %d samples again under indices it had already sent: the repeats were dropped and the first copies kept, so nothing is missing", st.Duplicates))
	}
	if st.BadLines > 0 {
		out = append(out, fmt.Sprintf("line meter: %d lines were not readings (first: line %d at byte %d); the %d after the first reading are one-sample \"bad-line\" gaps, "+
			"so the samples after them keep their time; the rest came before the first reading (banners, headers)",
			st.BadLines, st.FirstBadLine, st.FirstBadByte, gapSamples["bad-line"]))
	}
	return out
}

// negativePower counts a channel's samples whose power (V × I) is below
// zero, and the most negative one.
type negativePower struct {
	n, total uint64
	min      float64
	sum      float64 // of the negative readings
}

// negativeCounter keeps a negativePower per capture channel.
type negativeCounter []negativePower

func newNegativeCounter(channels int) negativeCounter { return make(negativeCounter, channels) }

// add counts the power samples p of channel ch.
func (c negativeCounter) add(ch int, p []float64) {
	if ch < 0 || ch >= len(c) {
		return
	}
	np := &c[ch]
	np.total += uint64(len(p))
	for _, w := range p {
		if w < 0 {
			if np.n == 0 || w < np.min {
				np.min = w
			}
			np.n++
			np.sum += w
		}
	}
}

// offsetLSBs is how many current LSBs from zero a negative reading may be
// and still be read as the sensor's offset at near-zero current.
const offsetLSBs = 20

// notes says, per channel with negative readings, how many, what fraction,
// the most negative value, and what that most likely means for this kind
// of meter (docs/meters.md, "Negative readings"). drive names the drive of
// each channel ("" if it is not in the report). The readings stay as
// measured: averages and energies include them.
func (c negativeCounter) notes(h capture.Header, drive []string) []string {
	var out []string
	for ch, np := range c {
		if np.n == 0 || ch >= len(h.Channels) {
			continue
		}
		hc := h.Channels[ch]
		frac := float64(np.n) / float64(np.total)
		who := fmt.Sprintf("channel %s", hc.Name())
		if ch < len(drive) && drive[ch] != "" {
			who = fmt.Sprintf("drive %q channel %s", drive[ch], hc.Name())
		}
		out = append(out, fmt.Sprintf("%s: %d of %d samples (%.2f %%) read negative power, down to %.4g W: %s; average_w and energy_j include them as measured (not clamped)",
			who, np.n, np.total, 100*frac, np.min, negativeMeaning(h.Meter.CurrentSense, hc, np)))
	}
	return out
}

// noiseTail is the shape of sensor noise around a low level: rare
// negative readings (under 5 %), spread from zero down to the most
// negative one — their mean well under half the extreme — rather than
// clustered at one negative value, as a back-fed rail or a reversed shunt
// on a steady load gives. At least 10 readings, so the shape means
// something.
func (np negativePower) noiseTail() bool {
	if np.n < 10 || np.total == 0 || !(np.min < 0) {
		return false
	}
	frac := float64(np.n) / float64(np.total)
	mean := np.sum / float64(np.n)
	return frac < 0.05 && mean > 0.5*np.min
}

// negativeMeaning reads a channel's negative readings: mostly negative is
// a current measured backwards; within offsetLSBs of zero is the sensor's
// offset; rare readings spread like a noise tail are sensor noise around
// a low level; anything else is a reading the wiring or calibration
// should explain. What mostly negative readings mean, and whether any
// beyond the offset can be real, is the meter's current sense (its Info,
// in the capture header).
func negativeMeaning(sense meter.CurrentSense, ch meter.Channel, np negativePower) string {
	minW := np.min
	frac := float64(np.n) / float64(max(np.total, 1))
	v := float64(ch.Rail.Nominal())
	offset := !math.IsNaN(minW) && ch.CurrentLSB > 0 && v > 0 && -minW <= offsetLSBs*float64(ch.CurrentLSB)*v
	switch {
	case frac >= 0.5:
		switch sense {
		case meter.SenseSink:
			return "most readings are negative: the instrument measures the current as sunk — its leads (or the ammeter's HI/LO) are reversed"
		case meter.SenseUnipolar:
			return "most readings are negative: the PPK2 does not measure reverse current, so its offset calibration (metadata O/S/I) is wrong or the DUT feeds current back"
		}
		return "most readings are negative: the current is measured backwards — the shunt's IN+/IN− (or the sensor's sign) are reversed"
	case offset:
		return fmt.Sprintf("within %d current LSBs of zero: the sensor's offset and noise at near-zero current (an idle, sleeping or unused rail)", offsetLSBs)
	case np.noiseTail():
		return fmt.Sprintf("rare and spread from zero down (mean of the negative readings %.4g W): the tail of sensor noise around a low level (an idle, sleeping or unused rail)", np.sum/float64(np.n))
	case sense == meter.SenseUnipolar:
		return "beyond the current offset: the PPK2 does not measure reverse current, so check its offset calibration and the DUT for back-feeding"
	}
	return "some readings are negative beyond the sensor's offset: check the wiring (reversed shunt, a back-fed rail) and the calibration"
}
