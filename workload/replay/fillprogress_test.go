package replay

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// A long fill says how far it is: nothing in its first 2 s, then a line a
// second with the GiB done of the total; a stop ends it with the stop's
// error. The clock is a fake one, a second a MiB.
func TestFillProgress(t *testing.T) {
	var errb bytes.Buffer
	clock := time.Unix(0, 0)
	now := func() time.Time { return clock }
	stopAt, calls := 6, 0
	halt := errors.New("interrupted by SIGINT")
	stop := func() error {
		if calls++; calls > stopAt {
			return halt
		}
		return nil
	}
	f := FillProgress(&errb, "replay", t.TempDir()+"/new.img", 4<<20, stop, now)
	var err error
	for range 10 {
		if err = f(); err != nil {
			break
		}
		clock = clock.Add(time.Second)
	}
	if !errors.Is(err, halt) {
		t.Fatalf("the fill went on past the stop: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(errb.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "replay: filling ") || !strings.Contains(lines[0], "2 MiB of 4 MiB (50 %) after 2 s") {
		t.Fatalf("progress:\n%s", errb.String())
	}
}
