package detect

import (
	"math"
	"testing"

	"github.com/idlewatt/idlewatt/states/powerstate"
)

// A learned background level moves the threshold into background down to
// the midpoint of idle and it (an HDD's background work 12 % above idle
// sat under the 25 % cap, read as idle), never up; a background level not
// above idle is refused.
func TestBackgroundLevelThreshold(t *testing.T) {
	for _, c := range []struct {
		l    Levels
		want float64
	}{
		{Levels{Idle: 4.85}, 4.85 * 1.25},
		{Levels{Idle: 4.85, Background: 5.43}, (4.85 + 5.43) / 2},
		{Levels{Idle: 4.85, Background: 9}, 4.85 * 1.25},
		{Levels{Idle: 4.85, Partial: 4.7, Background: 5.43}, 2*4.85 - (4.85+4.7)/2},
		// A top the learning set (the mirror not resolved) replaces the
		// rest, still at most 25 % above idle.
		{Levels{Idle: 0.0216, Partial: 0.0192, Background: 0.047, IdleTop: 0.0343}, 0.0216 * 1.25},
		{Levels{Idle: 0.0216, Partial: 0.0192, Background: 0.040, IdleTop: 0.0258}, 0.0258},
	} {
		lo, hi, ok := c.l.Band(powerstate.Background)
		if !ok || math.Abs(lo-c.want) > 1e-12 || !math.IsInf(hi, 1) {
			t.Errorf("%+v: background band [%g, %g] %v, want from %g", c.l, lo, hi, ok, c.want)
		}
		if err := c.l.Validate(); err != nil {
			t.Errorf("%+v: %v", c.l, err)
		}
	}
	if err := (Levels{Idle: 4.85, Background: 4.8}).Validate(); err == nil {
		t.Error("a background level below idle was accepted")
	}
	if err := (Levels{Idle: 4.85, IdleTop: 4.8}).Validate(); err == nil {
		t.Error("an idle band top below idle was accepted")
	}
}
