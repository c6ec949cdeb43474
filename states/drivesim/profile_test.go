package drivesim

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestBuiltinsValidAndNamed(t *testing.T) {
	want := []string{"jmf667h-128-a19", "jmf667h-256-a19", "jmf667h-128-l85", "jmf667h-256-l85", "ssd340", "hdd-7200", "broken-devslp"}
	seen := map[string]bool{}
	for _, p := range Builtins() {
		if err := p.Validate(); err != nil {
			t.Errorf("built-in %s: %v", p.Name, err)
		}
		if seen[p.Name] {
			t.Errorf("built-in %s twice", p.Name)
		}
		seen[p.Name] = true
	}
	for _, n := range want {
		if !seen[n] {
			t.Errorf("built-in %s missing", n)
		}
	}
	// Reference anchors.
	a128, _ := Lookup("jmf667h-128-a19", nil)
	a256, _ := Lookup("jmf667h-256-a19", nil)
	ssd, _ := Lookup("ssd340", nil)
	if a128.ActiveIdleW != 0.4 || a256.ActiveIdleW != 0.2 || ssd.DevSlpW != 0.0025 {
		t.Errorf("reference values changed: %v %v %v", a128.ActiveIdleW, a256.ActiveIdleW, ssd.DevSlpW)
	}
	hdd, _ := Lookup("hdd-7200", nil)
	if !hdd.HDD() || a128.HDD() {
		t.Error("rails: hdd-7200 must be 5v+12v, jmf667h 5v")
	}
	if b, _ := Lookup("broken-devslp", nil); !b.DevSlpBroken || b.DevSlpWorks() {
		t.Error("broken-devslp must be broken")
	}
}

func TestValidateNamesProfileAndKey(t *testing.T) {
	base, _ := Lookup("jmf667h-128-a19", nil)
	hdd, _ := Lookup("hdd-7200", nil)
	cases := []struct {
		name string
		from Profile
		mut  func(p *Profile)
		key  string
	}{
		{"negative", base, func(p *Profile) { p.SlumberW = -0.1 }, "slumber_w"},
		{"negative timer", base, func(p *Profile) { p.DipmSlumberAfterMs = -1 }, "dipm_slumber_after_ms"},
		{"missing idle", base, func(p *Profile) { p.ActiveIdleW = 0 }, "active_idle_w"},
		{"devslp above slumber", base, func(p *Profile) { p.DevSlpW = 0.2 }, "devslp_w"},
		{"zero slumber exit", base, func(p *Profile) { p.SlumberExitMs = 0 }, "slumber_exit_ms"},
		{"zero partial exit", base, func(p *Profile) { p.PartialExitUs = 0 }, "partial_exit_us"},
		{"zero devslp exit", base, func(p *Profile) { p.DevSlpExitMs = 0 }, "devslp_exit_ms"},
		{"exit beyond deto", base, func(p *Profile) { p.DevSlpExitMs = 60 }, "devslp_exit_ms"},
		{"zero mdat", base, func(p *Profile) { p.MdatMs = 0 }, "mdat_ms"},
		{"spike without duration", base, func(p *Profile) { p.WakeSpikeMs = 0 }, "wake_spike_ms"},
		{"gc without duration", base, func(p *Profile) { p.GCMs = 0 }, "gc_ms"},
		{"partial above idle", base, func(p *Profile) { p.PartialW = 0.5 }, "partial_w"},
		{"form factor", base, func(p *Profile) { p.FormFactor = "5.25" }, "form_factor"},
		{"rails", base, func(p *Profile) { p.Rails = "3v3" }, "rails"},
		{"zero spinup", hdd, func(p *Profile) { p.SpinupMs = 0 }, "spinup_ms"},
		{"standby on ssd", base, func(p *Profile) { p.StandbyAfterS = 5 }, "standby_after_s"},
		{"broken not supported", base, func(p *Profile) { p.DevSlpSupported, p.DevSlpBroken = false, true }, "devslp_broken"},
	}
	for _, c := range cases {
		p := c.from
		c.mut(&p)
		err := p.Validate()
		var ve *ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("%s: got %v, want a ValidationError", c.name, err)
			continue
		}
		if ve.Key != c.key || ve.Profile != p.Name || !strings.Contains(err.Error(), p.Name) {
			t.Errorf("%s: error %q names key %q, want %q", c.name, err, ve.Key, c.key)
		}
	}
}

func TestLookup(t *testing.T) {
	user := map[string]Profile{"mine": {Name: "mine"}}
	if p, err := Lookup("mine", user); err != nil || p.Name != "mine" {
		t.Fatalf("user profile: %v %v", p.Name, err)
	}
	_, err := Lookup("jmf667h-128", user)
	if !errors.Is(err, ErrUnknownProfile) || !strings.Contains(err.Error(), `did you mean "jmf667h-128-`) {
		t.Fatalf("unknown profile error = %v", err)
	}
	if _, err := Lookup("zzzzzzzzzzzzzzzzzzzzzzzz", nil); !errors.Is(err, ErrUnknownProfile) || !strings.Contains(err.Error(), "known:") {
		t.Fatalf("far name error = %v", err)
	}
}

func parseYAML(t testing.TB, src string) (map[string]Profile, error) {
	var doc struct {
		Profiles map[string]any `yaml:"profiles"`
	}
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatalf("yaml: %v", err)
	}
	return ParseProfiles(doc.Profiles)
}

func TestParseProfilesInheritsAndOverrides(t *testing.T) {
	got, err := parseYAML(t, `
profiles:
  quiet-128:
    base: jmf667h-128-a19
    active_idle_w: 0.35
    partial_w: "0.25"
    deso: false
  quieter:
    base: quiet-128
    slumber_w: 0.05
  fresh:
    form_factor: 2.5
    active_idle_w: 0.5
    partial_w: 0.4
    slumber_w: 0.1
    read_w_per_mbps: 0.002
    write_w_per_mbps: 0.005
    peak_write_w: 3
    max_read_mbps: 500
    max_write_mbps: 400
    partial_exit_us: 5
    slumber_exit_ms: 5
`)
	if err != nil {
		t.Fatal(err)
	}
	q := got["quieter"]
	if q.Name != "quieter" || q.ActiveIdleW != 0.35 || q.PartialW != 0.25 || q.SlumberW != 0.05 || q.DESO || q.MaxWriteMBps != 290 {
		t.Errorf("quieter = %+v", q)
	}
	if f := got["fresh"]; f.FormFactor != "2.5" || f.DevSlpSupported || f.RailSet() != Rails5V {
		t.Errorf("fresh = %+v", f)
	}
}

func TestParseProfilesErrorsNameKey(t *testing.T) {
	cases := []struct{ src, want string }{
		{"profiles:\n  x:\n    base: jmf667h-128-a19\n    slumbr_w: 0.1\n", `profiles.x.slumbr_w: unknown parameter (did you mean "slumber_w"?)`},
		{"profiles:\n  x:\n    base: jmf667h-128-a19\n    slumber_w: -1\n", "profiles.x.slumber_w: -1 must not be negative"},
		{"profiles:\n  x:\n    base: jmf667h-128-a19\n    devslp_w: 0.5\n", "profiles.x.devslp_w:"},
		{"profiles:\n  x:\n    base: jmf667h-128-a19\n    slumber_exit_ms: 0\n", "profiles.x.slumber_exit_ms: missing or 0"},
		{"profiles:\n  x:\n    base: jmf667h-128\n", `profiles.x.base: unknown profile "jmf667h-128" (did you mean`},
		{"profiles:\n  x:\n    base: y\n  y:\n    base: x\n", "inheritance cycle"},
		{"profiles:\n  x:\n    form_factor: 2.5\n", "profiles.x.active_idle_w: missing"},
		{"profiles:\n  x:\n    base: jmf667h-128-a19\n    slumber_w: lots\n", `profiles.x.slumber_w: "lots" is not a number`},
		{"profiles:\n  x:\n    base: jmf667h-128-a19\n    deso: maybe\n", `profiles.x.deso: "maybe" is not true or false`},
		{"profiles:\n  x: 3\n", "profiles.x: want a map"},
		{"profiles:\n  x:\n    base: jmf667h-128-a19\n    name: y\n", "profiles.x.name:"},
	}
	for _, c := range cases {
		_, err := parseYAML(t, c.src)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %q", c.src, err, c.want)
		}
	}
}

func FuzzParseProfiles(f *testing.F) {
	f.Add([]byte("profiles:\n  x:\n    base: jmf667h-128-a19\n    slumber_w: 0.05\n"))
	f.Add([]byte("profiles:\n  x:\n    base: hdd-7200\n    standby_after_s: 1\n  y:\n    base: x\n    spindle_w: 9\n"))
	f.Add([]byte("profiles:\n  a:\n    base: b\n  b:\n    base: a\n"))
	f.Add([]byte("profiles:\n  x:\n    form_factor: 3.5\n    active_idle_w: 1e400\n"))
	f.Add([]byte("profiles:\n  x:\n    base: ssd340\n    noise:\n      ar1_ma: 1\n      ar1_tau_ms: 2\n      hum_ma: 0.5\n      hum_hz: 50\n  y:\n    base: x\n    noise:\n      gain_pct: -0.1\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		var doc struct {
			Profiles map[string]any `yaml:"profiles"`
		}
		if yaml.Unmarshal(src, &doc) != nil {
			return
		}
		got, err := ParseProfiles(doc.Profiles)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "profiles") {
				t.Fatalf("error does not name the key: %v", err)
			}
			return
		}
		for name, p := range got {
			if err := p.Validate(); err != nil {
				t.Fatalf("%s parsed but invalid: %v", name, err)
			}
			if _, err := New(p, Options{}); err != nil {
				t.Fatalf("%s: New: %v", name, err)
			}
		}
	})
}

// MDAT and DETO give the profile's millisecond figures as durations, the
// way the DevSlp verification uses them (truncated below 1 ns).
func TestProfileDevSlpDurations(t *testing.T) {
	p := Profile{MdatMs: 10, DetoMs: 0.0125}
	if got := p.MDAT(); got != 10*time.Millisecond {
		t.Errorf("MDAT() = %v, want 10ms", got)
	}
	if got := p.DETO(); got != 12500*time.Nanosecond {
		t.Errorf("DETO() = %v, want 12.5µs", got)
	}
	if got := (&Profile{}).MDAT(); got != 0 {
		t.Errorf("MDAT() of no mdat_ms = %v, want 0", got)
	}
}
