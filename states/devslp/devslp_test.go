package devslp

import (
	"context"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/hostclock"
)

type fakeRig struct {
	pins   []bool
	phases []string
}

func (f *fakeRig) SetDevSlp(ctx context.Context, a bool) (hostclock.Time, error) {
	f.pins = append(f.pins, a)
	return 1, nil
}
func (f *fakeRig) Probe(ctx context.Context) (hostclock.Time, hostclock.Time, error) {
	return 2, 3, nil
}
func (f *fakeRig) Phase(n string) { f.phases = append(f.phases, n) }

func TestRunSequence(t *testing.T) {
	rig := &fakeRig{}
	tms, err := Run(context.Background(), rig, Options{Cycles: 2, Settle: time.Millisecond, Hold: 10 * time.Millisecond, Return: time.Millisecond})
	if err != nil || len(tms) != 2 {
		t.Fatalf("Run: %v, %d cycles", err, len(tms))
	}
	if want := []bool{true, false, true, false}; len(rig.pins) != 4 || rig.pins[0] != want[0] || rig.pins[1] != want[1] {
		t.Errorf("pin sequence %v", rig.pins)
	}
	if len(rig.phases) != 3 || rig.phases[1] != "devslp-cycle:2" {
		t.Errorf("phases %v", rig.phases)
	}
	if _, err := Run(context.Background(), rig, Options{Cycles: 1, Hold: time.Millisecond, MDAT: 10 * time.Millisecond}); err == nil {
		t.Error("hold shorter than MDAT accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rig2 := &fakeRig{}
	if _, err := Run(ctx, rig2, Options{Cycles: 1}); err == nil {
		t.Error("cancelled run returned no error")
	}
}
