package emuhub

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/states/drivesim"
)

// defaults are the flags' defaults as the command line gives them.
func defaults() map[string]string {
	d := map[string]string{}
	for _, f := range Flags {
		switch v := f.Default.(type) {
		case string:
			d[f.Name] = v
		case int, int64, float64:
			d[f.Name] = strings.TrimSpace(strings.ReplaceAll(fmtAny(v), "+", ""))
		}
	}
	return d
}

func read(vals map[string]string) (int, error) {
	o, t, err := Read(settings.Fixed{Values: vals, Defaults: defaults()}, ReadOptions{
		Profiles: func() (map[string]drivesim.Profile, error) { return nil, nil }})
	if err != nil {
		return 0, err
	}
	t.Close()
	return len(o.Drives), nil
}

// TestProfileDrivesPerPort: one profile for every port or one per port;
// another count, or an unknown profile, is bad usage.
func TestProfileDrivesPerPort(t *testing.T) {
	if _, err := read(map[string]string{"ports": "2", "profile": "ssd340,hdd-7200,x"}); err == nil {
		t.Fatal("3 profiles for 2 ports accepted")
	}
	if n, err := read(map[string]string{"ports": "3", "profile": "hdd-7200"}); err != nil || n != 3 {
		t.Fatalf("%d drives, %v", n, err)
	}
	if _, err := read(map[string]string{"ports": "1", "profile": "nope"}); err == nil || !strings.Contains(err.Error(), "unknown drive profile") {
		t.Fatalf("unknown profile: %v", err)
	}
}

// TestReadLimits: each limit is checked where the option lives, naming
// the setting, as bad usage.
func TestReadLimits(t *testing.T) {
	for _, c := range []struct {
		vals map[string]string
		want string
	}{
		{map[string]string{"ports": "9"}, "--ports: 9 ports (1–8 allowed)"},
		{map[string]string{"protocol": "4"}, "--protocol: 4 (1, 2 or 3)"},
		{map[string]string{"protocol": "1", "ring": "0"}, "--ring: a protocol 2 and 3 setting"},
		{map[string]string{"max-frame": "10"}, "--max-frame: 10 bytes"},
		{map[string]string{"link": "wifi"}, `--link: "wifi" (want usb or uart)`},
		{map[string]string{"stall-every": "1s"}, "--stall-every and --stall-for go together"},
		{map[string]string{"rail-3v3": "true", "ports": "6"}, "a 3.3 V rail needs --protocol 3 and at most 5 ports"},
		{map[string]string{"accuracy": "9,1"}, "--accuracy: gain 9 %: 0–5 %"},
		{map[string]string{"nvme": "1=970evo"}, `no simulated NVMe profile "970evo"`},
		{map[string]string{"truth-dir": "/tmp"}, "the constant drives have no true timeline"},
	} {
		_, err := read(c.vals)
		if err == nil || !errors.Is(err, settings.ErrUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want a usage error saying %q", c.vals, err, c.want)
		}
	}
	if n, err := read(map[string]string{"nvme": "2=980pro-1tb"}); err != nil || n != 2 {
		t.Errorf("an NVMe drive on port 2: %d drives, %v", n, err)
	}
}

// TestParseAccuracy: every channel of every port gets the stated accuracy,
// a 3.3 V rail's too when the hub has one.
func TestParseAccuracy(t *testing.T) {
	acc, err := ParseAccuracy("0.1,10", 2, true)
	if err != nil || len(acc) != 6 {
		t.Fatalf("%d entries, %v", len(acc), err)
	}
	if e := acc[0]; e.VoltGainPPM != 1000 || e.CurrentOffsetNA != 10000 || e.Port != 1 {
		t.Errorf("first entry %+v", e)
	}
	var _ hub.AccEntry = acc[5]
	for _, bad := range []string{"x", "0.1", "6,1", "0.1,-1"} {
		if _, err := ParseAccuracy(bad, 1, false); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func fmtAny(v any) string { return fmt.Sprint(v) }
