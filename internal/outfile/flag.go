package outfile

import "github.com/idlewatt/idlewatt/internal/settings"

// Flag declares --overwrite, the one way a command lets Options.Overwrite
// replace what names (its config key, if any, is key).
func Flag(what, key string) settings.Flag {
	return settings.Flag{Name: "overwrite", Key: key, Kind: settings.Bool,
		Help: "replace " + what + " if it exists (never through a symlink, never an input)"}
}
