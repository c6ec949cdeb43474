package emuhub

// `idlewatt ppk2 emulate`'s settings (config keys under ppk2emu.): the
// PPK2 emulator with a constant DUT or a simulated drive on its output.

import (
	"strings"

	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/ppk2/ppk2emu"
	"github.com/idlewatt/idlewatt/states/drivesim"
	"github.com/idlewatt/idlewatt/units"
)

// PPK2Flags are `ppk2 emulate`'s settings.
var PPK2Flags = []settings.Flag{
	{Name: "supply-mv", Key: "ppk2emu.supply_mv", Kind: settings.Int, Default: 3000, Help: "the VDD the metadata reports, mV (800–5000); the host may set another"},
	{Name: "ma", Key: "ppk2emu.current_ma", Kind: settings.Float, Help: "constant DUT current, mA (0–1000; default 10 without --profile)"},
	{Name: "profile", Key: "ppk2emu.profile", Kind: settings.String, Help: "simulated drive profile behind the PPK2 (see idlewatt profiles)"},
	{Name: "policy", Key: "ppk2emu.policy", Kind: settings.String, Default: drivesim.PolicyMedPowerDIPM, Help: "ALPM policy of the simulated drive (" + strings.Join(drivesim.Policies, ", ") + ")"},
	{Name: "seed", Key: "ppk2emu.seed", Kind: settings.Int64, Default: int64(1), Help: "seed of the simulated drive's noise and timing"},
}

// ReadPPK2 reads and checks PPK2Flags into the emulator's options; profiles
// gives the user's drive profiles (asked only when a profile is named).
func ReadPPK2(g settings.Getter, profiles func() (map[string]drivesim.Profile, error)) (ppk2emu.Options, error) {
	var o ppk2emu.Options
	mv, err := g.Int("supply-mv")
	if err != nil {
		return o, err
	}
	if mv < 800 || mv > 5000 {
		return o, settings.Usagef("%s: %d mV (the PPK2's regulator sets 800–5000 mV)", g.Where("supply-mv"), mv)
	}
	if o.Metadata, err = ppk2emu.WithVDD(ppk2emu.DefaultMetadata, mv); err != nil {
		return o, err
	}
	ma, err := g.Float("ma")
	if err != nil {
		return o, err
	}
	if !(ma >= 0 && ma <= 1000) {
		return o, settings.Usagef("%s: %g mA (the PPK2 measures 0–1000 mA)", g.Where("ma"), ma)
	}
	profile := strings.TrimSpace(g.String("profile"))
	if profile == "" {
		if ma == 0 {
			ma = 10
		}
		o.Drive = meter.ConstantDrive{V5: units.Volts(float64(mv) / 1000), I5: units.Amps(ma / 1000)}
		return o, nil
	}
	if ma != 0 {
		return o, settings.Usagef("%s and %s: give one (a constant current or a simulated drive)", g.Where("ma"), g.Where("profile"))
	}
	user, err := profiles()
	if err != nil {
		return o, err
	}
	p, err := drivesim.Lookup(profile, user)
	if err != nil {
		return o, settings.Usagef("%s: %v", g.Where("profile"), err)
	}
	seed, err := g.Int("seed")
	if err != nil {
		return o, err
	}
	// Off: the PPK2 powers the DUT only once the host switches it on.
	d, err := drivesim.New(p, drivesim.Options{Seed: int64(seed), Policy: g.String("policy"), Off: true})
	if err != nil {
		return o, settings.Usagef("%s: %v", g.Where("policy"), err)
	}
	o.Drive = d
	return o, nil
}
