package capture

import "github.com/idlewatt/idlewatt/meter"

// legacyCurrentSense fills meter.Info.CurrentSense in a header written
// before the field (idlewatt before issue 28): the meter kinds whose
// drivers state a sense other than meter.SenseShunt now stated it by
// their kind alone, and analysis reads only the field.
func legacyCurrentSense(m *meter.Info) {
	if m.CurrentSense != "" {
		return
	}
	switch m.Kind {
	case "ppk2":
		m.CurrentSense = meter.SenseUnipolar
	case "scpi":
		m.CurrentSense = meter.SenseSink
	}
}
