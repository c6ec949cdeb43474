package rig

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/hostclock"
)

// TestPolicyStampedInsideTheWrites: the time between a policy's writes and
// its event is a scheduler's to stretch (held-out campaign seed 44: 0.38 s
// under load, the drive already in Partial under an event still saying
// max_performance). With 300 ms held there on every change, the capture's
// max_performance stretch still lies inside the writes that bound it: the
// change to max_performance is stamped after its writes returned, the
// change back to the run's policy before its writes began.
func TestPolicyStampedInsideTheWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run on the emulator")
	}
	// Not parallel: policyWritten is the package's.
	var written []hostclock.Time // when each change's writes had returned
	policyWritten = func() {
		written = append(written, hostclock.Now())
		time.Sleep(300 * time.Millisecond)
	}
	defer func() { policyWritten = nil }()
	out := t.TempDir()
	if _, err := Run(context.Background(), minPowerActiveIdle(), out, Plan{}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(out, CaptureFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := capture.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	type ev struct {
		at     hostclock.Time
		policy string
	}
	var evs []ev
	for {
		rec, err := rd.Next()
		if err != nil {
			break
		}
		if rec.Kind == capture.KindState && rec.State.Kind == capture.StatePolicy {
			evs = append(evs, ev{rec.State.Host, rec.State.Value})
		}
	}
	// The writes: min_power at the start (before recording: no event), then
	// max_performance and min_power again around the active-idle phase.
	if len(written) < 3 || len(evs) < 3 {
		t.Fatalf("%d policy changes written, %d events recorded (%v); want the run's, max_performance's and the run's again", len(written), len(evs), evs)
	}
	w, e := written[len(written)-2:], evs[len(evs)-2:]
	if e[0].policy != "max_performance" || e[1].policy != "min_power" {
		t.Fatalf("the last two policy events are %v; want max_performance then min_power", e)
	}
	if e[0].at < w[0] {
		t.Errorf("max_performance stamped %.1f ms before its writes returned: time before them reads as max_performance", float64(w[0]-e[0].at)/1e6)
	}
	if e[1].at > w[1] {
		t.Errorf("min_power stamped %.1f ms after its writes returned: the drive's time under min_power before it reads as max_performance", float64(e[1].at-w[1])/1e6)
	}
}
