package config

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/internal/settings"
)

// TestConfigKeysDocumented: docs/config.md names every key of the table, and
// every key it lists in a table's first column is in the table.
func TestConfigKeysDocumented(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for k := range Keys() {
		if !strings.Contains(doc, "`"+k+"`") {
			t.Errorf("docs/config.md does not list `%s`", k)
		}
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z0-9_.\\[\\]]+)`")
	n := 0
	for _, m := range row.FindAllStringSubmatch(doc, -1) {
		k := m[1]
		n++
		if _, ok := Keys()[k]; ok {
			continue
		}
		if _, ok := DriveKeys()[k]; ok {
			continue
		}
		if strings.HasPrefix(k, "profiles.") {
			continue
		}
		t.Errorf("docs/config.md lists `%s`, which no command reads", k)
	}
	if n < 60 {
		t.Errorf("docs/config.md: only %d key rows found", n)
	}
}

// TestKeysFromTypes: the measurement set-up's keys are read off app/rig's
// types with their kinds; the drivers' come from their registry entries.
func TestKeysFromTypes(t *testing.T) {
	t.Parallel()
	for k, want := range map[string]settings.Kind{
		"meter.kind": settings.String, "meter.rate_hz": settings.Float, "emulator.seed": settings.Int,
		"emulator.offset": settings.SignedDuration, "devslp.hold": settings.Duration, "drives": settings.List,
		"keep_scratch": settings.Bool, "battery.capacity_wh": settings.Float, "workload.qd": settings.Int,
		"meter.supply_mv": settings.Int, "meter.interval": settings.Duration, "meter.rapl": settings.Bool,
	} {
		if got, ok := Keys()[k]; !ok || got != want {
			t.Errorf("%s: %v (%v), want %v", k, got, ok, want)
		}
	}
	for _, k := range []string{"meter", "devslp", "emulator.formats", "meter.settings"} {
		if _, ok := Keys()[k]; ok {
			t.Errorf("%s is a key; want a section or nothing", k)
		}
	}
	for k, want := range map[string]settings.Kind{"port": settings.Int, "size_bytes": settings.Int,
		"expect": settings.Map, "expect.devslp_mw": settings.Float, "allow_destructive": settings.String} {
		if got, ok := DriveKeys()[k]; !ok || got != want {
			t.Errorf("drives[].%s: %v (%v), want %v", k, got, ok, want)
		}
	}
	if _, ok := DriveKeys()["sim"]; ok {
		t.Error("drives[].sim is a key (rig.DriveConfig.Sim is not for the config)")
	}
}

// mapSource is a Source of nested maps (as a YAML file decodes).
type mapSource map[string]any

func (m mapSource) AllKeys() []string           { return nil }
func (m mapSource) AllSettings() map[string]any { return m }
func (m mapSource) Get(key string) any          { return m[key] }
func (m mapSource) IsSet(key string) bool       { _, ok := m[key]; return ok }

// TestDecodeBareDuration: a YAML number under a duration key (devslp.hold:
// 300) is refused by the decoder too, naming both readings; a duration
// with its unit decodes.
func TestDecodeBareDuration(t *testing.T) {
	t.Parallel()
	for _, v := range []any{300, int64(300), 300.0} {
		var out struct {
			Hold time.Duration `mapstructure:"hold"`
		}
		if err := Decode(mapSource{"hold": v}, "", &out); err == nil || !strings.Contains(err.Error(), "300: write 300ms or 300s") {
			t.Errorf("decoding hold: %T 300 gave %v, %v", v, out.Hold, err)
		}
	}
	var out struct {
		Hold time.Duration `mapstructure:"hold"`
	}
	if err := Decode(mapSource{"hold": "300ms"}, "", &out); err != nil || out.Hold != 300*time.Millisecond {
		t.Errorf("decoding hold: 300ms gave %v, %v", out.Hold, err)
	}
}
