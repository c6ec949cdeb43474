package alpm_test

import (
	"fmt"

	"github.com/idlewatt/idlewatt/states/alpm"
)

func ExampleParsePolicy() {
	_, err := alpm.ParsePolicy("min_powr")
	fmt.Println(err)
	_, err = alpm.ParseWritablePolicy("keep_firmware_settings")
	fmt.Println(err)
	// Output:
	// unknown policy min_powr; did you mean min_power?
	// keep_firmware_settings is display-only: the kernel rejects it on write (EINVAL)
}

func ExampleDecodePortCmd() {
	// A port the kernel 6.17+ and tuned leave without LPM: ESP and HPCP set.
	c := alpm.DecodePortCmd(0x0024c017)
	fmt.Println(c.Raw, "external:", c.ESP, "hot-plug:", c.HPCP, "skip LPM:", c.External())
	// Output: 0x0024c017 external: true hot-plug: true skip LPM: true
}

func ExampleDevSlpEligible() {
	h := &alpm.Host{Name: "host0", Policy: alpm.MedPowerWithDIPM,
		Cap2: new(alpm.DecodeHostCap2(0x04))} // APST only: no SDS, no SADM
	d := &alpm.Device{Name: "dev1.0", LogPage: alpm.UnknownLogPage(),
		Identify: &alpm.Identify{FeaturesValid: true, DevSlpSupported: true}}
	e := alpm.DevSlpEligible(h, d)
	fmt.Println(e.Verdict, e.Failed, e.Unknown)
	// Output: not eligible [policy SDS SADM] [log page DSP]
}
