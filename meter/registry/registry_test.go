package registry_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/registry"
)

func TestKinds(t *testing.T) {
	want := []string{"battery", "hub", "line", "ppk2", "scpi"}
	if got := registry.Kinds(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Kinds() = %v, want %v", got, want)
	}
	if d, ok := registry.Lookup("linemeter"); !ok || d.Kind != "line" {
		t.Errorf("alias linemeter: %+v %v", d, ok)
	}
	if registry.DefaultPort("battery", "") != "/sys" || registry.DefaultPort("hub", "") != "" || registry.DefaultPort("hub", "/x") != "/x" {
		t.Error("DefaultPort")
	}
}

// A recorded hub stream is replayed, and the replay resolves its stream
// through the Resolver capability.
func TestOpenReplay(t *testing.T) {
	m, replayed, err := registry.Open("hub", "../../fixtures/hostile/hub-100ms.bin", registry.Settings{})
	if err != nil || !replayed {
		t.Fatalf("replayed %v, %v", replayed, err)
	}
	defer m.Close()
	cfg, err := meter.Resolve(m, meter.StreamConfig{})
	if err != nil || cfg.Rate <= 0 || len(cfg.Ports) == 0 {
		t.Errorf("resolved %+v, %v", cfg, err)
	}
}

// Each error says its class, and a bad setting is named the caller's way.
func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.bin")
	if err := os.WriteFile(junk, []byte("not a hub stream at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	flags := registry.Settings{Values: map[string]any{"mode": "voltmeter"}, Name: func(k string) string { return "--" + k }}
	for _, c := range []struct {
		kind, path string
		s          registry.Settings
		class      error
		text       string
	}{
		{"ppk9", junk, registry.Settings{}, registry.ErrUnknownKind, `"ppk9": unknown meter kind (known: battery, hub, line, ppk2, scpi)`},
		{"hub", "", registry.Settings{}, registry.ErrUsage, "meter.port is required"},
		{"hub", filepath.Join(dir, "absent"), registry.Settings{}, registry.ErrUsage, "absent: "},
		{"scpi", junk, registry.Settings{}, registry.ErrUsage, "no recorded-stream format"},
		{"hub", dir, registry.Settings{}, registry.ErrUsage, "meter.port " + dir + " is a directory, not a serial port, pty or recorded hub stream"},
		{"ppk2", dir, registry.Settings{}, registry.ErrUsage, "is a directory"},
		{"hub", junk, registry.Settings{}, registry.ErrInput, ""},
		{"ppk2", junk, flags, registry.ErrUsage, `--mode "voltmeter": a PPK2 is an ampere or a source meter`},
		{"line", junk, registry.Settings{}, registry.ErrUsage, "line meters need meter.columns"},
		{"battery", dir, registry.Settings{Values: map[string]any{"interval": -time.Second}}, registry.ErrUsage, "meter.interval: -1s is negative"},
	} {
		m, _, err := registry.Open(c.kind, c.path, c.s)
		if m != nil {
			m.Close()
		}
		if !errors.Is(err, c.class) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s %s: %v, want %v containing %q", c.kind, c.path, err, c.class, c.text)
		}
	}
}

func TestSettingsJSON(t *testing.T) {
	s := registry.Settings{Values: map[string]any{"mode": "", "supply_mv": 3300, "rapl": false, "columns": "x"}}
	b, err := s.MarshalJSON()
	if err != nil || string(b) != `{"columns":"x","supply_mv":3300}` {
		t.Errorf("%s, %v", b, err)
	}
}

// A measurement refuses a recorded stream as its meter.
func TestOpenLive(t *testing.T) {
	m, err := registry.OpenLive("hub", "../../fixtures/hostile/hub-100ms.bin", registry.Settings{})
	if m != nil || !errors.Is(err, registry.ErrUsage) || !strings.Contains(err.Error(), "meter.port ../../fixtures/hostile/hub-100ms.bin is a regular file") {
		t.Errorf("%v, %v", m, err)
	}
}

// Driver.Flags declare every setting its file reads (s.String("mode"), …):
// a command refuses a setting the kind does not take, so a key left off
// the declarations would be refused although the driver reads it.
func TestSettingsListed(t *testing.T) {
	read := regexp.MustCompile(`s\.(?:String|Bool|Int|Float|Duration)\("([a-z_]+)"\)`)
	for _, kind := range registry.Kinds() {
		d, _ := registry.Lookup(kind)
		src, err := os.ReadFile(kind + ".go")
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range read.FindAllStringSubmatch(string(src), -1) {
			if !d.Takes(m[1]) {
				t.Errorf("%s.go reads setting %q, which Driver.Flags does not declare", kind, m[1])
			}
		}
	}
	if d, _ := registry.Lookup("hub"); d.Takes("supply_mv") || !d.Takes("rate_hz") {
		t.Errorf("hub takes supply_mv %v, rate_hz %v", d.Takes("supply_mv"), d.Takes("rate_hz"))
	}
}
