package detect

import (
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/states/powerstate"
)

// misplacedOf classifies segs and returns, per state, the samples found
// clearly in that state's band inside other states' spans (in) and the
// spans' samples found clearly in another band (out).
func misplacedOf(t *testing.T, segs []seg, sigma float64) (in, out ClearCounts, spans []Span) {
	t.Helper()
	c, err := New(Options{Levels: profile, Period: period, Adaptive: true}, func(s Span) { spans = append(spans, s) })
	if err != nil {
		t.Fatal(err)
	}
	render(c, segs, sigma, 7)
	for _, sp := range spans {
		if sp.State == powerstate.Active {
			continue
		}
		for st, k := range sp.Clear {
			if powerstate.State(st) != sp.State && powerstate.State(st) != powerstate.Unknown {
				in[st] += k
				out[sp.State] += k
			}
		}
	}
	return in, out, spans
}

// Idle excursions of 0.6 ms between Partial spans are shorter than the
// dwell a state must hold, so the classifier reads them as Partial — the
// residency misses them. Span.Clear must find them (the residency's
// interval counts them); a trace without such excursions must show next
// to none.
func TestClearCountsFindHiddenExcursions(t *testing.T) {
	const k, exN = 30, 6 // excursions, samples each
	segs := []seg{{powerstate.Idle, 0.40, 300 * time.Millisecond, false}}
	for range k {
		segs = append(segs, seg{powerstate.Partial, 0.30, 20 * time.Millisecond, false},
			seg{powerstate.Idle, 0.40, exN * period, false})
	}
	segs = append(segs, seg{powerstate.Partial, 0.30, 50 * time.Millisecond, false},
		seg{powerstate.Slumber, 0.060, 100 * time.Millisecond, false})
	in, out, spans := misplacedOf(t, segs, 0.002)
	idleSpans := 0
	for _, sp := range spans {
		if sp.State == powerstate.Idle {
			idleSpans++
		}
	}
	if idleSpans > 3 {
		t.Fatalf("%d idle spans: the excursions were not hidden, the test does not test what it says", idleSpans)
	}
	if got, lo := int(in[powerstate.Idle]), k*exN*3/4; got < lo || got > k*exN+k {
		t.Fatalf("idle samples hidden in other spans: Clear counted %d, want %d–%d (%d excursions × %d samples)", got, lo, k*exN+k, k, exN)
	}
	if out[powerstate.Partial] < in[powerstate.Idle] {
		t.Fatalf("partial out %d < idle in %d: the hidden idle samples sit in partial spans", out[powerstate.Partial], in[powerstate.Idle])
	}

	clean := []seg{{powerstate.Idle, 0.40, 300 * time.Millisecond, false}}
	for range k {
		clean = append(clean, seg{powerstate.Partial, 0.30, 20 * time.Millisecond, false},
			seg{powerstate.Idle, 0.40, 20 * time.Millisecond, false})
	}
	clean = append(clean, seg{powerstate.Slumber, 0.060, 100 * time.Millisecond, false})
	in, _, _ = misplacedOf(t, clean, 0.002)
	total := 0
	for _, n := range in {
		total += int(n)
	}
	// Each of the 62 boundaries may leave a sample or two on the far side.
	if total > 2*(2*k+2) {
		t.Fatalf("clean trace: %d samples counted misplaced, want ≤ %d (boundary samples only)", total, 2*(2*k+2))
	}
}
