package record_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/capture/record"
	"github.com/idlewatt/idlewatt/meter/registry"
)

// Record a meter into a capture: Start resolves the stream, writes the
// header and streams until the context ends (a live meter) or the stream
// does (here a recorded hub stream, replayed unpaced); ProgressLine is the
// line every recording command prints; Close writes the final link
// statistics and closes the capture, which capture.Open reads back.
func Example() {
	m, replayed, err := registry.Open("hub", "../../fixtures/hostile/hub-100ms.bin", registry.Settings{})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	dir, err := os.MkdirTemp("", "record-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "run.iwcap")

	rec, err := record.Start(context.Background(), m, record.Options{Path: path,
		Header: capture.Header{Tool: "example"}, Replayed: replayed})
	if err != nil {
		log.Fatal(err)
	}
	<-rec.Done()
	fmt.Println(record.ProgressLine(record.ProgressOptions{Label: "record", Replayed: replayed}, 0, rec.Progress()))
	res := rec.Close()
	if res.StreamErr != nil || res.WriteErr != nil {
		log.Fatal(res.StreamErr, res.WriteErr)
	}
	fmt.Printf("%d samples, %d gaps, %d marks\n", res.Samples, res.Gaps, res.Marks)

	r, err := capture.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	h := r.Header()
	fmt.Printf("%s: %s meter, %d channels at %v\n", h.Tool, h.Meter.Kind, len(h.Channels), h.RateHz)
	// Output:
	// record 0s  400 samples  p1 399.9 mW  p2 399.9 mW  gaps 0 (0 lost)
	// 400 samples, 0 gaps, 0 marks
	// example: hub meter, 4 channels at 1 kHz
}
