package analysis

import (
	"testing"

	"github.com/idlewatt/idlewatt/states/detect"
	"github.com/idlewatt/idlewatt/units"
)

// nameBackground sets idle's band top half way to the background level
// only where the band mirrored from the next lower level would end within
// idleTopSigmas block σ of idle (campaign seed 25 drive 118: Partial 2.4
// mW under a 21.6 mW idle, block σ about 1 mW); an HDD's resolved mirror
// stays (its background rises through power the nearer threshold counts).
func TestIdleTopOnlyWhereTheMirrorIsNotResolved(t *testing.T) {
	for _, c := range []struct {
		name                  string
		idle, partial, bg, sb float64
		wantTop               units.Watts
	}{
		{"noisy SSD", 0.0216, 0.0192, 0.047, 0.001, units.Watts((0.0216 + 0.047) / 2)},
		{"quiet SSD", 0.0216, 0.0192, 0.047, 0.0002, 0},
		{"HDD", 4.85, 4.70, 5.43, 0.004, 0},
	} {
		nm := naming{f: scaleFit{sb: c.sb}, ev: map[string]string{}, idle: 1,
			all: []mode{{x: c.bg, n: 100}, {x: c.idle, n: 500}, {x: c.partial, n: 500}},
			lv:  detect.Levels{Idle: units.Watts(c.idle), Partial: units.Watts(c.partial)}}
		nm.nameBackground()
		if nm.lv.Background != units.Watts(c.bg) || nm.lv.IdleTop != c.wantTop {
			t.Errorf("%s: background %v, idle top %v; want %v, %v", c.name, nm.lv.Background, nm.lv.IdleTop, c.bg, c.wantTop)
		}
		if err := nm.lv.Validate(); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
