package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/app/config"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/textsafe"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/states/drivesim"
)

// Simulated drive profiles: `idlewatt profiles`, and the drives behind the
// hub emulator's ports (`hub emulate --profile NAME[,NAME…]`). Profiles are
// documented in docs/drive-profiles.md; users add their own under the
// config key profiles:.

func init() {
	register(newProfilesCmd)
}

func newProfilesCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "profiles",
		Short: "List the simulated drive profiles (built-in and from the config's profiles:)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			user, err := configProfiles(cmd)
			if err != nil {
				return err
			}
			return printProfiles(cmd.OutOrStdout(), user, optBool(cmd, "json", ""))
		},
	}
	c.Flags().Bool("json", false, "print JSON (every parameter, keys as in the config)")
	return c
}

// configProfiles decodes the config's profiles: map.
func configProfiles(cmd *cobra.Command) (map[string]drivesim.Profile, error) {
	return config.Profiles(cliOf(cmd).cfg)
}

type profileRow struct {
	Source string `json:"source"` // "builtin" or "config"
	drivesim.Profile
}

func allProfiles(user map[string]drivesim.Profile) []profileRow {
	var rows []profileRow
	for _, p := range drivesim.Builtins() {
		if _, over := user[p.Name]; !over {
			rows = append(rows, profileRow{"builtin", p})
		}
	}
	names := make([]string, 0, len(user))
	for n := range user {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		rows = append(rows, profileRow{"config", user[n]})
	}
	return rows
}

func printProfiles(w io.Writer, user map[string]drivesim.Profile, asJSON bool) error {
	rows := allProfiles(user)
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Profiles []profileRow `json:"profiles"`
		}{rows})
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSOURCE\tRAILS\tIDLE\tPARTIAL\tSLUMBER\tDEVSLP\tPEAK\tDESCRIPTION")
	for _, r := range rows {
		p := r.Profile
		devslp := "no"
		switch {
		case p.DevSlpBroken:
			devslp = "broken"
		case p.DevSlpSupported:
			devslp = p.DevSlpW.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", textsafe.Terminal(p.Name), textsafe.Terminal(r.Source), p.RailSet(),
			p.ActiveIdleW, p.PartialW, p.SlumberW, devslp, p.PeakWriteW, textsafe.Terminal(p.Description))
	}
	return tw.Flush()
}

// addProfileFlags adds the drive flags to `hub emulate`.
func addProfileFlags(c *cobra.Command) {
	f := c.Flags()
	f.String("profile", "", "simulated drive profile per port, NAME[,NAME…] (one name = every port); see idlewatt profiles")
	f.String("policy", drivesim.PolicyMaxPerformance, "initial ALPM policy of the simulated drives ("+strings.Join(drivesim.Policies, ", ")+")")
	f.String("truth-dir", "", "write each simulated drive's true timeline to DIR/truth-pN.jsonl")
	prev := c.PostRunE
	c.PostRunE = func(cmd *cobra.Command, args []string) error {
		err := finishTruth(cmd)
		if prev != nil {
			if e := prev(cmd, args); e != nil && err == nil {
				err = e
			}
		}
		return err
	}
}

// hubProfileDrives is the hub emulator's drive factory: nil (constant
// drives) unless --profile (config emulate.profile) names profiles.
func hubProfileDrives(cmd *cobra.Command, ports int) ([]meter.SimDrive, error) {
	spec := optString(cmd, "profile", "emulate.profile")
	if strings.TrimSpace(spec) == "" {
		if optString(cmd, "truth-dir", "emulate.truth_dir") != "" {
			// Constant drives have no timeline: the flag used to be
			// ignored, exit 0, no file written.
			return nil, usageErr("%s: the constant drives have no true timeline; give --profile (emulate.profile) to simulate drives", where(cmd, "truth-dir", "emulate.truth_dir"))
		}
		return nil, nil
	}
	var names []string
	for _, n := range strings.Split(spec, ",") {
		names = append(names, strings.TrimSpace(n))
	}
	seed, err := optInt(cmd, "seed", "emulate.seed")
	if err != nil {
		return nil, err
	}
	return profileDrives(cmd, names, ports, int64(seed))
}

// truthFile is an open truth output of a simulated drive (cli.truthFiles).
type truthFile struct {
	m *drivesim.Model
	f *os.File
}

// profileDrives builds one drivesim.Model per port from profile names (one
// name for every port, or one per port). Port N's model is seeded with
// seed+N so ports differ but runs repeat.
func profileDrives(cmd *cobra.Command, names []string, ports int, seed int64) ([]meter.SimDrive, error) {
	if len(names) != 1 && len(names) != ports {
		return nil, usageErr("%s: %d profiles for %d ports (give one for all, or one per port)", where(cmd, "profile", "emulate.profile"), len(names), ports)
	}
	user, err := configProfiles(cmd)
	if err != nil {
		return nil, err
	}
	policy := optString(cmd, "policy", "emulate.policy")
	dir := optString(cmd, "truth-dir", "emulate.truth_dir")
	drives := make([]meter.SimDrive, ports)
	for i := range ports {
		name := names[0]
		if len(names) > 1 {
			name = names[i]
		}
		p, err := drivesim.Lookup(name, user)
		if err != nil {
			return nil, usageErr("%s: %v", where(cmd, "profile", "emulate.profile"), err)
		}
		opt := drivesim.Options{Seed: seed + int64(i+1), Policy: policy, Port: i + 1}
		var f *os.File
		if dir != "" {
			// Written in place while the emulator runs (it is stopped by a
			// signal), like a capture.
			if f, err = outfile.CreateInPlace(filepath.Join(dir, fmt.Sprintf("truth-p%d.jsonl", i+1)), outOptions(cmd, "")); err != nil {
				return nil, usageErr("--truth-dir: %w", err)
			}
			opt.TruthOut = f
		}
		m, err := drivesim.New(p, opt)
		if err != nil {
			if f != nil {
				f.Close()
			}
			return nil, usageErr("port %d: %v", i+1, err)
		}
		if f != nil {
			c := cliOf(cmd)
			c.truthFiles = append(c.truthFiles, truthFile{m, f})
		}
		drives[i] = m
	}
	return drives, nil
}

// finishTruth writes the open segment of every drive of cmd's command line
// and closes the files.
func finishTruth(cmd *cobra.Command) error {
	c := cliOf(cmd)
	var first error
	for _, t := range c.truthFiles {
		at := t.m.Now()
		if err := t.m.Finish(at); err != nil && first == nil {
			first = failErr("truth %s: %v", t.f.Name(), err)
		}
		if err := t.f.Close(); err != nil && first == nil {
			first = failErr("truth %s: %v", t.f.Name(), err)
		}
	}
	c.truthFiles = nil
	return first
}
