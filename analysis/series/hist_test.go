package series

import (
	"math"
	"testing"
)

func TestHistQuantile(t *testing.T) {
	h, _ := NewHist(0, 10, 10, false)
	for i := 0; i < 100; i++ {
		h.Add(float64(i)/10 + 0.05) // uniform over [0, 10)
	}
	if got := h.Quantile(0.5); math.Abs(got-5) > 0.11 {
		t.Errorf("median %g, want 5", got)
	}
	h.Add(-1)
	h.Add(11)
	if h.Total() != 102 {
		t.Errorf("Total %g, want 102 (under/overflow count)", h.Total())
	}
	if !math.IsNaN(h.Quantile(0.001)) {
		t.Error("a quantile inside the underflow should be NaN")
	}
}

// The accessors the charts draw from: bins, edges, the occupied range and
// the underflow, on a log histogram where a bin edge is not a round number.
func TestHistBins(t *testing.T) {
	h, err := NewHist(1e-3, 10, 4, true) // one bin per decade
	if err != nil {
		t.Fatal(err)
	}
	if !h.Log() || h.Hi() != 10 {
		t.Errorf("Log %v Hi %g", h.Log(), h.Hi())
	}
	if _, _, ok := h.Occupied(); ok {
		t.Error("an empty histogram has occupied bins")
	}
	h.AddN(0.05, 2) // decade [0.01, 0.1): bin 1
	h.Add(5)        // bin 3
	h.Add(1e-4)     // underflow
	h.Add(math.NaN())
	if got := h.Counts(); len(got) != 4 || got[0] != 0 || got[1] != 2 || got[2] != 0 || got[3] != 1 {
		t.Errorf("Counts %v, want [0 2 0 1]", got)
	}
	if first, last, ok := h.Occupied(); !ok || first != 1 || last != 3 {
		t.Errorf("Occupied %d..%d %v, want 1..3", first, last, ok)
	}
	if h.Under() != 1 || h.Total() != 4 {
		t.Errorf("Under %g Total %g, want 1 and 4 (NaN is a gap, not counted)", h.Under(), h.Total())
	}
	for i, want := range []float64{1e-3, 1e-2, 1e-1, 1, 10} {
		if got := h.Edge(i); math.Abs(got-want) > 1e-12*want {
			t.Errorf("Edge(%d) = %g, want %g", i, got, want)
		}
	}
}
