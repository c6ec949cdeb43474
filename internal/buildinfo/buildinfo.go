package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Version says which build this is. A version set with -ldflags
// "-X main.version=…" wins. Otherwise the module version the go command
// stamped (v1.2.3 from `go install …@v1.2.3`; a pseudo-version such as
// v0.0.0-20261201085300-abcdef123456+dirty from `go build` in a checkout),
// followed by the VCS revision, its commit time and "modified" when the
// working tree had changes. What `go run` and `go test` build carries no
// VCS stamp and no module version: that stays "dev".
func Version(ldflags string, info *debug.BuildInfo) string {
	if ldflags != "dev" && ldflags != "" {
		return ldflags
	}
	v := info.Main.Version
	if v == "" || v == "(devel)" {
		v = "dev"
	}
	var rev, at string
	modified := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return v
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	extra := []string{"rev " + rev}
	if at != "" {
		extra = append(extra, at)
	}
	if modified {
		extra = append(extra, "modified")
	}
	return v + " (" + strings.Join(extra, ", ") + ")"
}
