package hub_test

import (
	"testing"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
)

// The version is negotiated from IDENTITY: a v2 host and a v1 hub speak
// v1; a v2 hub kept on v1 by the host (Options.Protocol 1) sends v1 frames
// only; a v2 pair speaks v2 with 20-bit samples and the agreed frames.
func TestNegotiation(t *testing.T) {
	for _, c := range []struct {
		name          string
		hubV, hostV   int
		maxFrame      int
		wantV         int
		wantLSBBelowA float64 // 5 V current LSB
	}{
		{"v1 hub", 1, 0, 0, 1, 51e-6},
		{"v2 hub, host asks v1", 2, 1, 0, 1, 51e-6},
		{"v2 hub and host", 2, 0, 0, 2, 8.1e-6},
		{"v2, 1024-byte frames", 2, 2, 1024, 2, 8.1e-6},
	} {
		t.Run(c.name, func(t *testing.T) {
			emu, err := hubemu.New(hubemu.Options{Ports: 2, Seed: 4, Protocol: c.hubV})
			if err != nil {
				t.Fatal(err)
			}
			defer emu.Close()
			h, err := hub.Open(emu.Path(), hub.Options{Protocol: c.hostV, MaxFrame: c.maxFrame})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			info := h.Info()
			if info.ProtocolVersion != c.wantV || float64(info.Channels[0].CurrentLSB) > c.wantLSBBelowA {
				t.Fatalf("version %d, 5 V LSB %v; want v%d, below %g A", info.ProtocolVersion, info.Channels[0].CurrentLSB, c.wantV, c.wantLSBBelowA)
			}
			sink := newRecSink()
			streamFor(t, h, meter.StreamConfig{Rate: 10000}, sink, func() bool { _, _, n := sink.snapshot(); return n >= 5000 })
			checkClean(t, h, sink, 4)
			ls, st := h.LinkStats(), h.Stats()
			wantFrame := map[int]int{1: hub.MaxFrame, 2: max(c.maxFrame, hub.DefaultMaxFrame)}[c.wantV]
			if ls.Version != c.wantV || ls.MaxFrame != wantFrame || st.Refused != 0 {
				t.Errorf("link %+v, stats %+v; want v%d, max frame %d, nothing refused", ls, st, c.wantV, wantFrame)
			}
			if c.wantV == 2 {
				// 10 ms blocks of 100 samples × 4 channels × 5 B split to fit.
				per := hub.BlockSamples2(4, 5, wantFrame)
				if frames := float64(st.Frames); frames < float64(sink.samples[0])/float64(per)*0.9 {
					t.Errorf("%v frames for %d samples: blocks not split to %d samples", frames, sink.samples[0], per)
				}
			}
		})
	}
}
