package gen

import "testing"

// TestPCMark7ScaleBounds: a scale whose burst count cannot be an int is
// refused (1e308 used to give one burst per application, silently).
func TestPCMark7ScaleBounds(t *testing.T) {
	for _, s := range []float64{1e308, MaxScale * 1.0001} {
		if _, err := PCMark7("all", 1, 1<<30, s); err == nil {
			t.Errorf("scale %g accepted", s)
		}
	}
	if _, err := PCMark7("defender", 1, 1<<30, MaxScale); err != nil {
		t.Errorf("scale %g: %v", float64(MaxScale), err)
	}
}
