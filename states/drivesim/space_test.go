package drivesim

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

func TestDrawStaysInSpace(t *testing.T) {
	var hdd, deso int
	modes := map[string]int{}
	minIdle, maxIdle := 1e9, 0.0
	const n = 3000
	for i := range n {
		p := Draw(rand.New(rand.NewPCG(11, uint64(i))), "d")
		if err := p.InSpace(); err != nil {
			t.Fatalf("draw %d outside its own space: %v\n%+v", i, err, p)
		}
		if _, err := New(p, Options{}); err != nil {
			t.Fatalf("draw %d: New: %v", i, err)
		}
		if p.HDD() {
			hdd++
		}
		if p.DESO {
			deso++
		}
		modes[p.DevSlpMode()]++
		minIdle, maxIdle = min(minIdle, float64(p.ActiveIdleW)), max(maxIdle, float64(p.ActiveIdleW))
	}
	// The space is covered: both kinds, every DevSlp mode, DESO both ways,
	// active idle from near 0.02 W to near 8 W.
	if hdd < n/4 || hdd > n*35/100 {
		t.Errorf("%d HDDs in %d draws, want ≈ 30 %%", hdd, n)
	}
	if deso < n*45/100 || deso > n*55/100 {
		t.Errorf("%d DESO in %d draws, want ≈ 50 %%", deso, n)
	}
	for _, m := range []string{DevSlpModeWorking, DevSlpModeUnsupported, DevSlpModeBroken} {
		if modes[m] < n/10 {
			t.Errorf("DevSlp %s: %d of %d draws", m, modes[m], n)
		}
	}
	if minIdle > 0.022 || maxIdle < 7.5 {
		t.Errorf("active idle drawn over %.3f–%.2f W, want ≈ 0.02–8 W", minIdle, maxIdle)
	}
}

func TestDrawReplays(t *testing.T) {
	a := Draw(rand.New(rand.NewPCG(5, 17)), "x")
	b := Draw(rand.New(rand.NewPCG(5, 17)), "x")
	c := Draw(rand.New(rand.NewPCG(5, 18)), "x")
	if !reflect.DeepEqual(a, b) {
		t.Errorf("same (seed, index), different profiles:\n%+v\n%+v", a, b)
	}
	if reflect.DeepEqual(a, c) {
		t.Errorf("indices 17 and 18 drew the same profile")
	}
}

func TestInSpaceNamesTheKey(t *testing.T) {
	var ssd, hdd Profile
	for i := uint64(0); ssd.Name == "" || hdd.Name == ""; i++ {
		p := Draw(rand.New(rand.NewPCG(1, i)), "p")
		if p.HDD() && hdd.Name == "" {
			hdd = p
		} else if !p.HDD() && p.DevSlpMode() == DevSlpModeWorking && ssd.Name == "" {
			ssd = p
		}
	}
	cases := []struct {
		base Profile
		mod  func(*Profile)
		key  string
	}{
		{ssd, func(p *Profile) { p.NoiseMA = 3.5 }, "noise_ma"},
		{ssd, func(p *Profile) { p.GCEveryS = 0.1 }, "gc_every_s"},
		{ssd, func(p *Profile) { p.ActiveIdleW, p.PeakWriteW = 4, 7 }, "active_idle_w"},
		{ssd, func(p *Profile) { p.DevSlpW = 0.00002 }, "devslp_w"},
		{ssd, func(p *Profile) { p.Noise = Noise{AR1MA: 3, AR1TauMs: 10} }, "noise"},
		{ssd, func(p *Profile) { p.Noise = Noise{AR1MA: 0.1, AR1TauMs: 30} }, "noise.ar1_tau_ms"},
		{ssd, func(p *Profile) { p.Noise = Noise{RippleMA: 1, RippleKHz: 100.001} }, "noise.ripple_khz"},
		{ssd, func(p *Profile) { p.Noise = Noise{OffsetUA: 6, DriftUA: 5, DriftS: 20} }, "noise.offset_ua"},
		{ssd, func(p *Profile) { p.Noise = Noise{HumMA: 1, HumHz: 55} }, "noise.hum_hz"},
		{ssd, func(p *Profile) { p.SlumberExitMs = 400 }, "slumber_exit_ms"},
		{ssd, func(p *Profile) { p.GCW = 8 }, "gc_w"},
		{hdd, func(p *Profile) {
			p.DevSlpSupported, p.DevSlpW, p.DevSlpExitMs, p.DetoMs, p.MdatMs = true, 0.001, 10, 20, 10
		}, "devslp_supported"},
		{hdd, func(p *Profile) { p.StandbyAfterS = 60 }, "standby_after_s"},
		{hdd, func(p *Profile) { p.ActiveIdleW, p.PartialW, p.SlumberW, p.SpindleW = 2, 1.9, 1.8, 1 }, "active_idle_w"},
	}
	for _, c := range cases {
		p := c.base
		c.mod(&p)
		err := p.InSpace()
		ve, ok := err.(*ValidationError)
		if !ok || ve.Key != c.key {
			t.Errorf("%s: got %v, want an error naming %s", c.key, err, c.key)
		}
	}
}

// Values the model's fields cannot carry are refused by Validate (and so
// by the config parser), naming the key.
func TestValidateUpperBounds(t *testing.T) {
	cases := []struct{ key, val, want string }{
		{"deto_ms", "3000", "profiles.x.deto_ms: 3000 is above 1000"},
		{"mdat_ms", "40", "profiles.x.mdat_ms: 40 is above 31"},
		{"dito_ms", "2000", "profiles.x.dito_ms: 2000 is above 1023"},
		{"active_idle_w", "400", "profiles.x.active_idle_w: 400 is above 76.5"},
		{"noise_ma", "500", "profiles.x.noise_ma: 500 is above 100"},
		{"max_write_mbps", "4000", "profiles.x.max_write_mbps: 4000 is above 600"},
		{"active_12v_share", "1.5", "profiles.x.active_12v_share: 1.5 is above 1"},
	}
	for _, c := range cases {
		_, err := parseYAML(t, "profiles:\n  x:\n    base: jmf667h-128-a19\n    "+c.key+": "+c.val+"\n")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %s: got %v, want %q", c.key, c.val, err, c.want)
		}
	}
	// Every numeric key has a bound.
	p := builtins[0]
	for _, f := range p.numbers() {
		if _, ok := limits[f.key]; !ok {
			t.Errorf("%s has no upper bound", f.key)
		}
	}
	for _, b := range builtins {
		if err := b.Validate(); err != nil {
			t.Errorf("built-in %s: %v", b.Name, err)
		}
	}
}

// Every family's draws stay in the space, long means no noisier than the
// white family's worst; the quantised family puts floors under one LSB.
func TestDrawNoiseStaysInSpace(t *testing.T) {
	for _, fam := range Families {
		under, floors, capped := 0, 0, 0
		for i := range 400 {
			r := rand.New(rand.NewPCG(21, uint64(i)))
			p := Draw(r, "d")
			lsb := 30e-6 + 20e-6*r.Float64()
			if err := DrawNoise(r, fam, &p, lsb); err != nil {
				t.Fatal(err)
			}
			if err := p.InSpace(); err != nil {
				t.Fatalf("%s draw %d outside the space: %v\n%+v", fam, i, err, p.Noise)
			}
			if _, err := New(p, Options{}); err != nil {
				t.Fatalf("%s draw %d: %v", fam, i, err)
			}
			if lr := p.Noise.LongRunMA(p.NoiseMA, SpaceRateHz); lr > SpaceLongRunMaxMA*0.99 {
				capped++
			}
			if fam != FamilyWhite && fam != FamilyQuantised && fam != FamilyBandwidth && fam != FamilyDrift && p.Noise.IsZero() {
				t.Fatalf("%s draw %d has no noise model", fam, i)
			}
			if fam == FamilyQuantised {
				if p.NoiseMA > 0.5*lsb*1e3*(1+1e-9) {
					t.Fatalf("quantised noise %g mA over half an LSB of %g µA", p.NoiseMA, lsb*1e6)
				}
				if p.DevSlpSupported {
					floors++
					if float64(p.DevSlpW) < lsb*5 {
						under++
					}
				}
			}
		}
		if fam == FamilyQuantised && (floors == 0 || under < floors/4) {
			t.Errorf("quantised: %d of %d floors under one LSB", under, floors)
		}
		if (fam == FamilyAR1 || fam == FamilySteps) && capped == 0 {
			t.Errorf("%s: no draw reached the long-run cap; the cap is never exercised", fam)
		}
	}
	if err := DrawNoise(rand.New(rand.NewPCG(1, 1)), "pink", &Profile{}, 0); err == nil {
		t.Error("an unknown family was drawn")
	}
}
