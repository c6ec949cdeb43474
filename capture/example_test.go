package capture_test

import (
	"errors"
	"fmt"
	"io"
	"log"

	"github.com/idlewatt/idlewatt/capture"
)

// Read a capture front to back: the header says which channel is which, and
// Next returns one record at a time until io.EOF. The fixture is the example
// of docs/capture-format.md: one port, two rails, a mark, a DEVSLP event, a
// phase, a gap and one I/O.
func Example() {
	r, err := capture.Open("../fixtures/capture/tiny.iwcap")
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	h := r.Header()
	fmt.Printf("%s %s, %g samples/s per channel\n", h.Meter.Kind, h.Meter.Model, h.RateHz)
	for i, c := range h.Channels {
		fmt.Printf("channel %d: port %d %s\n", i, c.Port, c.Rail)
	}
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			log.Fatal(err) // wraps capture.ErrTruncated at a damaged or cut tail
		}
		switch rec.Kind {
		case capture.KindSamples: // rec.Block is the Reader's: copy what you keep
			b := rec.Block
			fmt.Printf("samples: channel %d, %d from index %d, first %v × %v\n", b.Channel, len(b.V), b.Start, b.V[0], b.I[0])
		case capture.KindGap:
			fmt.Printf("gap: channel %d, %d samples from index %d (%s)\n", rec.Gap.Channel, rec.Gap.Count, rec.Gap.Start, rec.Gap.Reason)
		case capture.KindState:
			fmt.Printf("state: port %d %q\n", rec.State.Port, rec.State.Value)
		case capture.KindIO:
			for _, e := range rec.IO {
				fmt.Printf("io: port %d %s %d bytes at %d, %d ns\n", e.Port, e.Op, e.Size, e.Offset, e.Complete-e.Issue)
			}
		}
	}
	fmt.Println("complete:", r.Complete())
	// Output:
	// hub demo, 1000 samples/s per channel
	// channel 0: port 1 5v
	// channel 1: port 1 12v
	// state: port 1 "idle"
	// samples: channel 1, 2 from index 0, first 12 V × 125 mA
	// gap: channel 1, 2 samples from index 2 (crc)
	// samples: channel 0, 4 from index 0, first 5 V × 250 mA
	// io: port 1 write 4096 bytes at 8192, 1000 ns
	// complete: true
}
