package config

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/idlewatt/idlewatt/internal/textsafe"
	"github.com/idlewatt/idlewatt/states/drivesim"
)

// ProfileRow is one simulated drive profile of `idlewatt profiles`: a
// built-in one, or the configuration's (which hides a built-in one of its
// name).
type ProfileRow struct {
	Source string `json:"source"` // "builtin" or "config"
	drivesim.Profile
}

// ProfileRows lists the built-in profiles the user's do not replace, then
// the user's by name.
func ProfileRows(user map[string]drivesim.Profile) []ProfileRow {
	var rows []ProfileRow
	for _, p := range drivesim.Builtins() {
		if _, over := user[p.Name]; !over {
			rows = append(rows, ProfileRow{"builtin", p})
		}
	}
	names := make([]string, 0, len(user))
	for n := range user {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		rows = append(rows, ProfileRow{"config", user[n]})
	}
	return rows
}

// WriteProfiles writes ProfileRows as a table, or as JSON (every parameter,
// keys as in the config).
func WriteProfiles(w io.Writer, user map[string]drivesim.Profile, asJSON bool) error {
	rows := ProfileRows(user)
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Profiles []ProfileRow `json:"profiles"`
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
