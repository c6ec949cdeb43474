package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/ppk2/ppk2emu"
	"github.com/idlewatt/idlewatt/meter/scpi"
	"github.com/idlewatt/idlewatt/meter/scpi/scpiemu"
	"github.com/idlewatt/idlewatt/states/drivesim"
	"github.com/idlewatt/idlewatt/units"
)

// `idlewatt ppk2 emulate` and `idlewatt scpi emulate`: the drivers'
// emulators on a pty, served like `hub emulate` (the path on the first
// stdout line, then until SIGINT/SIGTERM), so a record or measure in
// another shell can use them as --port. Their settings have config keys
// under ppk2emu. and scpiemu.

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{Use: "ppk2", Short: "Emulate a Nordic PPK2 (docs/meters.md)"}
		c.AddCommand(signalEnds(newPPK2EmulateCmd()))
		return c
	})
	register(func() *cobra.Command {
		c := &cobra.Command{Use: "scpi", Short: "Emulate a SCPI bench instrument (docs/meters.md)"}
		c.AddCommand(signalEnds(newSCPIEmulateCmd()))
		return c
	})
}

func newPPK2EmulateCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "emulate",
		Short: "Serve the PPK2 byte protocol on a pseudo-terminal; prints its path first",
		Long: `Serve the PPK2 byte protocol on a new pseudo-terminal: the first line of stdout
is the pty path to pass as --port to 'record --meter ppk2'; the emulator serves
until SIGINT/SIGTERM. The DUT draws a constant --ma, or is a simulated drive
(--profile, see 'idlewatt profiles') whose 5 V rail the PPK2 measures. The
DUT is powered when the host switches the PPK2's output on.`,
		Args: cobra.NoArgs,
		RunE: runPPK2Emulate,
	}
	f := c.Flags()
	f.Int("supply-mv", 3000, "the VDD the metadata reports, mV (800–5000); the host may set another")
	f.Float64("ma", 0, "constant DUT current, mA (0–1000; default 10 without --profile)")
	f.String("profile", "", "simulated drive profile behind the PPK2 (see idlewatt profiles)")
	f.String("policy", drivesim.PolicyMedPowerDIPM, "ALPM policy of the simulated drive ("+strings.Join(drivesim.Policies, ", ")+")")
	f.Int64("seed", 1, "seed of the simulated drive's noise and timing")
	return c
}

// ppk2EmulatorOptions resolves the flags (config keys ppk2emu.*).
func ppk2EmulatorOptions(cmd *cobra.Command) (ppk2emu.Options, error) {
	var o ppk2emu.Options
	mv, err := optInt(cmd, "supply-mv", "ppk2emu.supply_mv")
	if err != nil {
		return o, err
	}
	if mv < 800 || mv > 5000 {
		return o, usageErr("%s: %d mV (the PPK2's regulator sets 800–5000 mV)", where(cmd, "supply-mv", "ppk2emu.supply_mv"), mv)
	}
	meta, err := ppk2emu.WithVDD(ppk2emu.DefaultMetadata, mv)
	if err != nil {
		return o, err
	}
	o.Metadata = meta
	ma, err := optFloat(cmd, "ma", "ppk2emu.current_ma")
	if err != nil {
		return o, err
	}
	if !(ma >= 0 && ma <= 1000) {
		return o, usageErr("%s: %g mA (the PPK2 measures 0–1000 mA)", where(cmd, "ma", "ppk2emu.current_ma"), ma)
	}
	profile := strings.TrimSpace(optString(cmd, "profile", "ppk2emu.profile"))
	if profile == "" {
		if ma == 0 {
			ma = 10
		}
		o.Drive = meter.ConstantDrive{V5: units.Volts(float64(mv) / 1000), I5: units.Amps(ma / 1000)}
		return o, nil
	}
	if ma != 0 {
		return o, usageErr("%s and %s: give one (a constant current or a simulated drive)",
			where(cmd, "ma", "ppk2emu.current_ma"), where(cmd, "profile", "ppk2emu.profile"))
	}
	user, err := configProfiles(cmd)
	if err != nil {
		return o, err
	}
	p, err := drivesim.Lookup(profile, user)
	if err != nil {
		return o, usageErr("%s: %v", where(cmd, "profile", "ppk2emu.profile"), err)
	}
	seed, err := optInt(cmd, "seed", "ppk2emu.seed")
	if err != nil {
		return o, err
	}
	// Off: the PPK2 powers the DUT only once the host switches it on.
	d, err := drivesim.New(p, drivesim.Options{Seed: int64(seed), Policy: optString(cmd, "policy", "ppk2emu.policy"), Off: true})
	if err != nil {
		return o, usageErr("%s: %v", where(cmd, "policy", "ppk2emu.policy"), err)
	}
	o.Drive = d
	return o, nil
}

func runPPK2Emulate(cmd *cobra.Command, _ []string) error {
	o, err := ppk2EmulatorOptions(cmd)
	if err != nil {
		return err
	}
	e, err := ppk2emu.New(o)
	if err != nil {
		return failErr("ppk2 emulate: %v", err)
	}
	defer e.Close()
	return serveUntilDone(cmd, e.Path())
}

func newSCPIEmulateCmd() *cobra.Command {
	var names []string
	for _, f := range scpi.Families {
		names = append(names, f.Name)
	}
	c := &cobra.Command{
		Use:   "emulate",
		Short: "Serve a SCPI instrument on a pseudo-terminal; prints its path first",
		Long: `Serve a SCPI instrument of one family on a new pseudo-terminal: the first line
of stdout is the pty path to pass as --port to 'record --meter scpi'; the
emulator serves until SIGINT/SIGTERM. It answers *IDN? as the family, its
measurement queries on channel 1, and SYST:ERR? (unknown commands queue
-113 "Undefined header").`,
		Args: cobra.NoArgs,
		RunE: runSCPIEmulate,
	}
	f := c.Flags()
	f.String("family", "n6705", "instrument family: "+strings.Join(names, ", "))
	f.Float64("ma", 12.5, "current the instrument reads, mA")
	f.Float64("voltage", 5, "voltage the instrument reads, V (current-only families never report it)")
	durationFlag(f, "delay", 0, "wait before each measurement reply (an integration time)")
	return c
}

// scpiEmulatorOptions resolves the flags (config keys scpiemu.*).
func scpiEmulatorOptions(cmd *cobra.Command) (scpiemu.Options, error) {
	var o scpiemu.Options
	o.Family = strings.ToLower(optString(cmd, "family", "scpiemu.family"))
	if _, err := scpi.FamilyByName(o.Family); err != nil {
		var names []string
		for _, f := range scpi.Families {
			names = append(names, f.Name)
		}
		return o, usageErr("%s %q: known families: %s", where(cmd, "family", "scpiemu.family"), o.Family, strings.Join(names, ", "))
	}
	ma, err := optFloat(cmd, "ma", "scpiemu.current_ma")
	if err != nil {
		return o, err
	}
	if o.Voltage, err = optFloat(cmd, "voltage", "scpiemu.voltage_v"); err != nil {
		return o, err
	}
	if o.Delay, err = optDuration(cmd, "delay", "scpiemu.delay"); err != nil {
		return o, err
	}
	o.Current = ma / 1000
	switch {
	case ma != ma || ma < -1e6 || ma > 1e6:
		return o, usageErr("%s: %g mA is not a plausible reading", where(cmd, "ma", "scpiemu.current_ma"), ma)
	case o.Voltage != o.Voltage || o.Voltage < -1e4 || o.Voltage > 1e4:
		return o, usageErr("%s: %g V is not a plausible reading", where(cmd, "voltage", "scpiemu.voltage_v"), o.Voltage)
	case o.Delay < 0:
		return o, usageErr("%s: %v is negative", where(cmd, "delay", "scpiemu.delay"), o.Delay)
	case o.Current == 0 && o.Voltage == 0:
		return o, usageErr("--ma and --voltage are both 0: the emulator would read 12.5 mA at 5 V instead")
	}
	return o, nil
}

func runSCPIEmulate(cmd *cobra.Command, _ []string) error {
	o, err := scpiEmulatorOptions(cmd)
	if err != nil {
		return err
	}
	e, err := scpiemu.New(o)
	if err != nil {
		return failErr("scpi emulate: %v", err)
	}
	defer e.Close()
	return serveUntilDone(cmd, e.Path())
}

// serveUntilDone prints an emulator's pty path as the first stdout line and
// waits for the command's context (SIGINT/SIGTERM).
func serveUntilDone(cmd *cobra.Command, path string) error {
	fmt.Fprintln(cmd.OutOrStdout(), path)
	if f, ok := cmd.OutOrStdout().(*os.File); ok {
		f.Sync() //nolint:errcheck // a pipe cannot sync; the line is written either way
	}
	<-cmd.Context().Done()
	return nil
}
