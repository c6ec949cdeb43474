package main

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/states/alpm"
	"github.com/idlewatt/idlewatt/states/decode"
)

// newStatesDecodeCmd is `states decode`.
func newStatesDecodeCmd() *cobra.Command {
	{
		c := &cobra.Command{
			Use:   "decode FILE...",
			Short: "Decode saved nvme-cli, smartctl, hdparm, CrystalDiskInfo outputs and dumps, without a sysfs tree",
			Long: `Tells each FILE's format and prints what it holds as idlewatt states does:
NVMe power states (max/idle/active power, operational or not, entry/exit
latency) with the APST table the kernel would program under its defaults,
the APST feature (APSTE and the 32 entries), or a SATA drive's identity,
HIPM, DIPM and DevSlp support and enablement and DETO/MDAT. Reads nvme-cli
id-ctrl (text with or without -H, JSON of 1.x and 2.x, -b binary),
get-feature -f 0x0c (text with or without -H, JSON, binary), smartctl
-a/-x/-c and -j (NVMe) and -a/-x/-i (ATA), hdparm -I and --Istdout, the sysfs
id file, CrystalDiskInfo reports, raw 4096/512/256-byte images and their
xxd, hexdump -C and od -A x -t x1 dumps. A field a format does not carry is
listed as unknown, never guessed. An unknown format (the message lists the
formats read), a truncated or inconsistent file exits 2 naming the field
and line. Formats and examples: docs/states.md.`,
			Args: cobra.MinimumNArgs(1),
			RunE: runStatesDecode,
		}
		return c
	}
}

func runStatesDecode(cmd *cobra.Command, args []string) error {
	var results []*decode.Result
	for _, a := range args {
		f, err := os.Open(a)
		if err != nil {
			return inputErr(fmt.Errorf("states decode: %w", err))
		}
		st, err := f.Stat()
		if err == nil && st.IsDir() {
			f.Close()
			return inputErr(fmt.Errorf("states decode: %s is a directory (give the saved output's file; a sysfs tree goes to states --sysfs-root)", a))
		}
		r, err := decode.Read(a, f)
		f.Close()
		if err != nil {
			return inputErr(fmt.Errorf("states decode %w", err))
		}
		results = append(results, r)
	}
	out := cmd.OutOrStdout()
	if optBool(cmd, "json", "") {
		if len(results) == 1 {
			return writeJSON(out, results[0])
		}
		return writeJSON(out, results)
	}
	for i, r := range results {
		if i > 0 {
			fmt.Fprintln(out)
		}
		if err := r.WriteText(out); err != nil {
			return err
		}
	}
	return nil
}

var reATADev = regexp.MustCompile(`^dev[0-9]+\.[0-9]+(\.[0-9]+)?$`)

// sataFiles reads --sata-id/--sata-log (devN.M=FILE) and checks each file
// decodes, so a bad file is bad input, not a line among the problems.
func sataFiles(cmd *cobra.Command) (map[string]alpm.DeviceFiles, error) {
	out := map[string]alpm.DeviceFiles{}
	for _, flag := range []string{"sata-id", "sata-log"} {
		vals, _ := cmd.Flags().GetStringArray(flag)
		for _, v := range vals {
			name, file, ok := strings.Cut(v, "=")
			if !ok || !reATADev.MatchString(name) {
				return nil, usageErr("--%s %s: want devN.M=FILE (the ata_device name, like dev1.0)", flag, v)
			}
			b, err := os.ReadFile(file)
			if err != nil {
				return nil, inputErr(fmt.Errorf("--%s: %w", flag, err))
			}
			ds, _, err := alpm.ParseIdentifyFile(b)
			if err != nil {
				return nil, inputErr(fmt.Errorf("--%s %s: %w", flag, file, err))
			}
			if len(ds) != 1 {
				return nil, inputErr(fmt.Errorf("--%s %s: %d drives in the file, want one", flag, file, len(ds)))
			}
			x := out[name]
			if flag == "sata-id" {
				if ds[0].Identify == nil {
					return nil, inputErr(fmt.Errorf("--sata-id %s: no IDENTIFY data in the file (a log page? give it to --sata-log)", file))
				}
				x.Identify = file
			} else {
				if ds[0].LogPage == nil {
					return nil, inputErr(errors.New("--sata-log " + file + ": no DevSlp timings (log 30h page 08h dump, or hdparm -I with its Device Sleep section)"))
				}
				x.LogPage = file
			}
			out[name] = x
		}
	}
	return out, nil
}
