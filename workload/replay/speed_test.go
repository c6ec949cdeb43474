package replay

import "testing"

// TestSpeedBounds: a speed whose scaled due times cannot be a
// time.Duration is refused (1e-320 used to replay as fast as possible).
func TestSpeedBounds(t *testing.T) {
	for _, s := range []float64{-1, 1e-320, MinSpeed / 2, MaxSpeed * 2, 1e308} {
		c := Config{Speed: s}
		if err := c.defaults(); err == nil {
			t.Errorf("speed %g accepted", s)
		}
	}
	for _, s := range []float64{0, MinSpeed, 1, MaxSpeed} {
		c := Config{Speed: s}
		if err := c.defaults(); err != nil {
			t.Errorf("speed %g: %v", s, err)
		}
	}
}
