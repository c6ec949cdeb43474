package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/app/config"
	"github.com/idlewatt/idlewatt/app/emuhub"
	"github.com/idlewatt/idlewatt/meter/ppk2/ppk2emu"
	"github.com/idlewatt/idlewatt/meter/scpi/scpiemu"
	"github.com/idlewatt/idlewatt/states/drivesim"
)

// `idlewatt ppk2 emulate` and `idlewatt scpi emulate`: the drivers'
// emulators on a pty, served like `hub emulate` (the path on the first
// stdout line, then until SIGINT/SIGTERM), so a record or measure in
// another shell can use them as --port. Their settings have config keys
// under ppk2emu. and scpiemu.

func init() {
	register(func() *cobra.Command {
		c := &cobra.Command{Use: "ppk2", Short: "Emulate a Nordic PPK2 (docs/meters.md)"}
		e := &cobra.Command{
			Use:   "emulate",
			Short: "Serve the PPK2 byte protocol on a pseudo-terminal; prints its path first",
			Long: `Serve the PPK2 byte protocol on a new pseudo-terminal: the first line of stdout
is the pty path to pass as --port to 'record --meter ppk2'; the emulator serves
until SIGINT/SIGTERM. The DUT draws a constant --ma, or is a simulated drive
(--profile, see 'idlewatt profiles') whose 5 V rail the PPK2 measures. The
DUT is powered when the host switches the PPK2's output on.`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				o, err := emuhub.ReadPPK2(get(cmd), func() (map[string]drivesim.Profile, error) { return config.Profiles(cliOf(cmd).cfg) })
				if err != nil {
					return err
				}
				e, err := ppk2emu.New(o)
				if err != nil {
					return failErr("ppk2 emulate: %v", err)
				}
				defer e.Close()
				return serveUntilDone(cmd, e.Path())
			},
		}
		declare(e.Flags(), emuhub.PPK2Flags...)
		c.AddCommand(signalEnds(e))
		return c
	})
	register(func() *cobra.Command {
		c := &cobra.Command{Use: "scpi", Short: "Emulate a SCPI bench instrument (docs/meters.md)"}
		e := &cobra.Command{
			Use:   "emulate",
			Short: "Serve a SCPI instrument on a pseudo-terminal; prints its path first",
			Long: `Serve a SCPI instrument of one family on a new pseudo-terminal: the first line
of stdout is the pty path to pass as --port to 'record --meter scpi'; the
emulator serves until SIGINT/SIGTERM. It answers *IDN? as the family, its
measurement queries on channel 1, and SYST:ERR? (unknown commands queue
-113 "Undefined header").`,
			Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				o, err := scpiemu.Read(get(cmd))
				if err != nil {
					return err
				}
				e, err := scpiemu.New(o)
				if err != nil {
					return failErr("scpi emulate: %v", err)
				}
				defer e.Close()
				return serveUntilDone(cmd, e.Path())
			},
		}
		declare(e.Flags(), scpiemu.Flags...)
		c.AddCommand(signalEnds(e))
		return c
	})
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
