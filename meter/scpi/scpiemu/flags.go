package scpiemu

import (
	"strings"

	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/meter/scpi"
)

// Flags are `idlewatt scpi emulate`'s settings (config keys under
// scpiemu.).
var Flags = []settings.Flag{
	{Name: "family", Key: "scpiemu.family", Kind: settings.String, Default: "n6705", Help: "instrument family: " + strings.Join(familyNames(), ", ")},
	{Name: "ma", Key: "scpiemu.current_ma", Kind: settings.Float, Default: 12.5, Help: "current the instrument reads, mA"},
	{Name: "voltage", Key: "scpiemu.voltage_v", Kind: settings.Float, Default: 5.0, Help: "voltage the instrument reads, V (current-only families never report it)"},
	{Name: "delay", Key: "scpiemu.delay", Kind: settings.Duration, Help: "wait before each measurement reply (an integration time)"},
}

func familyNames() []string {
	var names []string
	for _, f := range scpi.Families {
		names = append(names, f.Name)
	}
	return names
}

// Read reads and checks Flags into the emulator's options.
func Read(g settings.Getter) (Options, error) {
	var o Options
	o.Family = strings.ToLower(g.String("family"))
	if _, err := scpi.FamilyByName(o.Family); err != nil {
		return o, settings.Usagef("%s %q: known families: %s", g.Where("family"), o.Family, strings.Join(familyNames(), ", "))
	}
	ma, err := g.Float("ma")
	if err != nil {
		return o, err
	}
	if o.Voltage, err = g.Float("voltage"); err != nil {
		return o, err
	}
	if o.Delay, err = g.Duration("delay"); err != nil {
		return o, err
	}
	o.Current = ma / 1000
	switch {
	case ma != ma || ma < -1e6 || ma > 1e6:
		return o, settings.Usagef("%s: %g mA is not a plausible reading", g.Where("ma"), ma)
	case o.Voltage != o.Voltage || o.Voltage < -1e4 || o.Voltage > 1e4:
		return o, settings.Usagef("%s: %g V is not a plausible reading", g.Where("voltage"), o.Voltage)
	case o.Delay < 0:
		return o, settings.Usagef("%s: %v is negative", g.Where("delay"), o.Delay)
	case o.Current == 0 && o.Voltage == 0:
		return o, settings.Usagef("--ma and --voltage are both 0: the emulator would read 12.5 mA at 5 V instead")
	}
	return o, nil
}
