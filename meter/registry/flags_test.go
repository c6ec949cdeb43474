package registry_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/meter/registry"
)

// fakeGetter resolves settings from a map by flag name; has lists the
// flags the command has, changed those given on its command line.
type fakeGetter struct {
	vals         map[string]string
	has, changed map[string]bool
}

func (g fakeGetter) String(f string) string { return g.vals[f] }
func (g fakeGetter) Bool(f string) bool     { return g.vals[f] == "true" }
func (g fakeGetter) Int(f string) (int, error) {
	var n int
	_, err := fmtSscan(g.vals[f], &n)
	return n, err
}
func (g fakeGetter) Float(f string) (float64, error) {
	var x float64
	_, err := fmtSscan(g.vals[f], &x)
	return x, err
}
func (g fakeGetter) Duration(f string) (time.Duration, error) {
	return settings.ParseDuration(g.vals[f])
}
func (g fakeGetter) List(f string) []string { return nil }
func (g fakeGetter) Ints(f string) []int    { return nil }
func (g fakeGetter) Set(f string) bool      { _, ok := g.vals[f]; return ok }
func (g fakeGetter) Changed(f string) bool  { return g.changed[f] }
func (g fakeGetter) Has(f string) bool      { return g.has[f] }
func (g fakeGetter) Where(f string) string  { return "--" + f }

// TestFlags: a flag several kinds read is declared once, its help naming
// them; every driver's flag has its config key under meter.
func TestFlags(t *testing.T) {
	help := map[string]string{}
	for _, f := range registry.Flags() {
		if _, dup := help[f.Name]; dup {
			t.Errorf("--%s declared twice", f.Name)
		}
		help[f.Name] = f.Help
		if !strings.HasPrefix(f.Key, "meter.") {
			t.Errorf("--%s: key %q is not under meter.", f.Name, f.Key)
		}
	}
	for name, want := range map[string]string{
		"baud": "line, scpi: serial baud rate",
		"mode": "ppk2: ampere|source (default source; a dump's own mode); scpi: poll|array|array-binary (default poll)",
		"rapl": "battery: add the CPU package (RAPL) channel as port 0",
	} {
		if help[name] != want {
			t.Errorf("--%s: help %q, want %q", name, help[name], want)
		}
	}
}

// TestReadAndForeign: a flag the command has is read with its default; one
// it lacks only when its key is set; a flag the kind does not take is
// refused, naming the kinds that do.
func TestReadAndForeign(t *testing.T) {
	g := fakeGetter{vals: map[string]string{"baud": "9600", "columns": "currentranger", "interval": "2s"},
		has: map[string]bool{"baud": true, "columns": true, "supply-mv": true}, changed: map[string]bool{"supply-mv": true}}
	s, err := registry.Read(g, 500)
	if err != nil {
		t.Fatal(err)
	}
	if s.Int("baud") != 9600 || s.String("columns") != "currentranger" || s.Duration("interval") != 2*time.Second || s.Float("rate_hz") != 500 {
		t.Errorf("values %v", s.Values)
	}
	if _, ok := s.Values["family"]; ok {
		t.Error("family read though the command has no --family and its key is not set")
	}
	if s.Where("baud") != "--baud (meter.baud)" || s.Where("family") != "meter.family" || s.Where("port") != "meter.port" {
		t.Errorf("names: %s, %s, %s", s.Where("baud"), s.Where("family"), s.Where("port"))
	}
	err = registry.Foreign("hub", g)
	if !errors.Is(err, settings.ErrUsage) || err.Error() != "--supply-mv: a setting of ppk2 meters; a hub meter does not take it (see idlewatt meters)" {
		t.Errorf("Foreign(hub) = %v", err)
	}
	if err := registry.Foreign("ppk2", g); err != nil {
		t.Errorf("Foreign(ppk2) = %v", err)
	}
}

// fmtSscan reads s into v; "" is the zero value (a flag's default).
func fmtSscan(s string, v any) (int, error) {
	if s == "" {
		return 0, nil
	}
	return fmt.Sscan(s, v)
}
