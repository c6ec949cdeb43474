package record_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/capture/record"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
)

// readWhole reads a capture to its end and returns its gaps, its last
// meter-refused note, its samples on channel 0 and its account.
func readWhole(t *testing.T, path string) (gaps []meter.Gap, note string, samples uint64, acc capture.Account) {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return gaps, note, samples, r.Account()
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		switch rec.Kind {
		case capture.KindGap:
			gaps = append(gaps, rec.Gap)
		case capture.KindSamples:
			if rec.Block.Channel == 0 {
				samples += uint64(rec.Block.Len())
			}
		case capture.KindState:
			if v := rec.State.Value; rec.State.Kind == capture.StateNote && strings.HasPrefix(v, record.RefusedNote+" ") {
				note = v
			}
		}
	}
}

// TestHostileFramesRecorded: a recorded hub stream with a malformed EVENT,
// an unknown frame type, a block for a port never started, a short SAMPLES
// and a count that jumps near 2⁶⁴ records to its end (no stream error);
// the capture reads back whole (no damage, nothing rejected), holds the
// refused blocks as "refused" gaps of exactly their samples and the counts
// by kind as a note, and Result says the same.
func TestHostileFramesRecorded(t *testing.T) {
	o := hubemu.Options{Ports: 2, Rate: 1000, Protocol: 1, Seed: 9, Faults: hubemu.Faults{Inject: []hubemu.Injection{
		{At: 100, Kind: hubemu.InjectEventShort}, {At: 200, Kind: hubemu.InjectUnknownType},
		{At: 300, Kind: hubemu.InjectForeignPorts}, {At: 400, Kind: hubemu.InjectSamplesShort},
		{At: 500, Kind: hubemu.InjectCounterJump, To: 1<<64 - 100}}}}
	var b bytes.Buffer
	if err := hubemu.WriteFast(&b, o, time.Second); err != nil {
		t.Fatal(err)
	}
	m, err := hub.NewReplay(&b, "hostile")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "c.iwcap")
	rec, err := record.Start(context.Background(), m, record.Options{Path: path, Replayed: true, Header: capture.Header{Tool: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	<-rec.Done()
	res := rec.Close()
	if res.StreamErr != nil || res.WriteErr != nil {
		t.Fatalf("stream %v, write %v: a hostile frame must not end the recording", res.StreamErr, res.WriteErr)
	}
	want := map[string]uint64{"event": 1, "unknown_type": 1, "channel_mask": 1, "samples": 1}
	if !equalCounts(res.RefusedBy, want) || res.Stats.Refused != 4 || res.Stats.Restarts != 1 {
		t.Errorf("refused %v (%d), restarts %d; want %v and one restart", res.RefusedBy, res.Stats.Refused, res.Stats.Restarts, want)
	}
	if res.Gaps != 2 || res.LostBy["refused"] != 20 || res.Lost != 20 {
		t.Errorf("totals: %d gaps, lost by reason %v: want the two 10-sample blocks refused", res.Gaps, res.LostBy)
	}
	gaps, note, samples, acc := readWhole(t, path)
	if !acc.Clean() || len(acc.Notes()) != 0 {
		t.Errorf("the capture does not read back whole: %v", acc.Notes())
	}
	if len(gaps) != 2 || gaps[0] != (meter.Gap{Channel: -1, Start: 300, Count: 10, Reason: "refused"}) ||
		gaps[1] != (meter.Gap{Channel: -1, Start: 400, Count: 10, Reason: "refused"}) {
		t.Errorf("capture gaps %+v, want the refused blocks at 300 and 400", gaps)
	}
	var got map[string]uint64
	if err := json.Unmarshal([]byte(strings.TrimPrefix(note, record.RefusedNote+" ")), &got); err != nil || !equalCounts(got, want) {
		t.Errorf("note %q: want %v", note, want)
	}
	if samples != res.Samples/4 || samples+20 != 1000 {
		t.Errorf("%d samples on channel 0 read back, %d recorded on 4 channels; want 980 of 1000", samples, res.Samples)
	}
	if span := res.Span(1000); span != 1 {
		t.Errorf("span %g s, want 1 s (1000 indices, the gaps included)", span)
	}
}

func equalCounts(a, b map[string]uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
