package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	stamped := []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "835727b0123456789abcdef0123456789abcdef0"},
		{Key: "vcs.time", Value: "2026-12-01T08:53:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}
	for _, c := range []struct {
		name, ldflags, mainVersion string
		settings                   []debug.BuildSetting
		want                       string
	}{
		{"go run or go test", "dev", "(devel)", nil, "dev"},
		{"no module version", "dev", "", nil, "dev"},
		{"go install @version", "dev", "v1.2.3", nil, "v1.2.3"},
		{"go build in a dirty checkout", "dev", "v0.0.0-20261201085300-835727b01234+dirty", stamped,
			"v0.0.0-20261201085300-835727b01234+dirty (rev 835727b01234, 2026-12-01T08:53:00Z, modified)"},
		{"devel with a revision", "dev", "(devel)", stamped[:2], "dev (rev 835727b01234)"},
		{"-ldflags -X wins", "v9.9.9-lab", "v1.2.3", stamped, "v9.9.9-lab"},
	} {
		info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/idlewatt/idlewatt", Version: c.mainVersion}, Settings: c.settings}
		if got := Version(c.ldflags, info); got != c.want {
			t.Errorf("%s: Version = %q, want %q", c.name, got, c.want)
		}
	}
}
