package hub_test

import (
	"testing"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
)

// The version is negotiated from IDENTITY: a v2 host and a v1 hub speak
// v1; a v2 hub kept on v1 by the host (Options.Protocol 1) sends v1 frames
// only; a v2 pair speaks v2 with packed 20-bit samples (or 20-bit ones,
// asked for or from a v2 hub that predates packing) and the agreed frames.
func TestNegotiation(t *testing.T) {
	for _, c := range []struct {
		name          string
		hubV, hostV   int
		maxFrame      int
		wantV         int
		wantLSBBelowA float64 // 5 V current LSB
		hubFormats    uint8   // 0: the emulator's (every format)
		hostFormat    uint8
		wantFormat    uint8
	}{
		{"v1 hub", 1, 0, 0, 1, 51e-6, 0, 0, hub.Format16},
		{"v2 hub, host asks v1", 2, 1, 0, 1, 51e-6, 0, 0, hub.Format16},
		{"v2 hub and host", 2, 0, 0, 2, 8.1e-6, 0, 0, hub.FormatPacked},
		{"v2, 1024-byte frames", 2, 2, 1024, 2, 8.1e-6, 0, 0, hub.FormatPacked},
		{"v2, host asks 20-bit", 2, 0, 0, 2, 8.1e-6, 0, hub.Format20, hub.Format20},
		{"v2 hub without packing", 2, 0, 0, 2, 8.1e-6, hub.FormatBit16 | hub.FormatBit20, 0, hub.Format20},
		{"v2, host asks 16-bit", 2, 0, 0, 2, 51e-6, 0, hub.Format16, hub.Format16},
	} {
		t.Run(c.name, func(t *testing.T) {
			emu, err := hubemu.New(hubemu.Options{Ports: 2, Seed: 4, Protocol: c.hubV, Formats: c.hubFormats})
			if err != nil {
				t.Fatal(err)
			}
			defer emu.Close()
			h, err := hub.Open(emu.Path(), hub.Options{Protocol: c.hostV, MaxFrame: c.maxFrame, Format: c.hostFormat})
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
			if ls.Version != c.wantV || ls.MaxFrame != wantFrame || st.Refused != 0 || c.wantV == 2 && ls.Format != c.wantFormat {
				t.Errorf("link %+v, stats %+v; want v%d, max frame %d, format %d, nothing refused", ls, st, c.wantV, wantFrame, c.wantFormat)
			}
			if c.wantFormat == hub.FormatPacked {
				// Packed frames vary in size: none above the agreed
				// maximum on average, at least one per 10 ms block.
				if avg := float64(ls.LiveBytes) / float64(st.Frames); avg > float64(wantFrame) || st.Frames < sink.samples[0]/100 {
					t.Errorf("%d frames of %.0f bytes on average for %d samples (max frame %d)", st.Frames, avg, sink.samples[0], wantFrame)
				}
			} else if c.wantV == 2 {
				// 10 ms blocks of 100 samples × 4 channels × 5 B split to fit.
				per := hub.BlockSamples2(4, hub.FormatWidth(c.wantFormat), wantFrame)
				if frames := float64(st.Frames); frames < float64(sink.samples[0])/float64(per)*0.9 {
					t.Errorf("%v frames for %d samples: blocks not split to %d samples", frames, sink.samples[0], per)
				}
			}
		})
	}
}
