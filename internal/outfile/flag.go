package outfile

import (
	"os"
	"path/filepath"

	"github.com/idlewatt/idlewatt/internal/settings"
)

// Flag declares --overwrite, the one way a command lets Options.Overwrite
// replace what names (its config key, if any, is key).
func Flag(what, key string) settings.Flag {
	return settings.Flag{Name: "overwrite", Key: key, Kind: settings.Bool,
		Help: "replace " + what + " if it exists (never through a symlink, never an input)"}
}

// Same reports whether a and b name the same file: the same absolute
// path, or the same inode when both exist.
func Same(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	if err1 == nil && err2 == nil && aa == bb {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}
