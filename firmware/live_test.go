package firmware

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/units"
)

// startPty runs a firmware build that serves the hub on a pty (hubsim, or
// qemu.sh) and returns the pty's path, which it prints on its first line.
func startPty(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second): // a hang guard, not a timing check
			cmd.Process.Kill()
			<-done
		}
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- strings.TrimSpace(sc.Text())
		}
		close(line)
		for sc.Scan() {
		}
	}()
	select {
	case p, ok := <-line:
		if !ok || !strings.HasPrefix(p, "/dev/") {
			t.Fatalf("%s printed %q, not a pty path", name, p)
		}
		return p
	case <-time.After(60 * time.Second): // a hang guard (QEMU boots in well under a second)
		t.Fatalf("%s printed no pty path", name)
	}
	return ""
}

// sink counts what a stream delivers, per channel.
type sink struct {
	mu      sync.Mutex
	next    map[int]uint64 // next expected index per channel
	samples map[int]uint64
	gaps    []meter.Gap
	marks   map[uint32]meter.MarkEcho
	events  []meter.Event
	badOrd  int
}

func newSink() *sink {
	return &sink{next: map[int]uint64{}, samples: map[int]uint64{}, marks: map[uint32]meter.MarkEcho{}}
}

func (s *sink) Samples(b *meter.Block) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b.Start != s.next[b.Channel] {
		s.badOrd++
	}
	s.next[b.Channel] = b.Start + uint64(len(b.I))
	s.samples[b.Channel] += uint64(len(b.I))
	return nil
}
func (s *sink) Gap(g meter.Gap) error {
	s.mu.Lock()
	s.gaps = append(s.gaps, g)
	s.mu.Unlock()
	return nil
}
func (s *sink) Mark(m meter.MarkEcho) error {
	s.mu.Lock()
	s.marks[m.ID] = m
	s.mu.Unlock()
	return nil
}
func (s *sink) Event(e meter.Event) error {
	s.mu.Lock()
	s.events = append(s.events, e)
	s.mu.Unlock()
	return nil
}

// TestHubsimThroughTheDriver streams from the host build through idlewatt's
// hub driver while sending marks and DEVSLP commands (driverSession).
func TestHubsimThroughTheDriver(t *testing.T) {
	dir := build(t, "host")
	for _, tc := range []struct {
		name string
		args []string
		opts hub.Options
	}{
		{"v2-packed", nil, hub.Options{}},
		{"v2-20bit", nil, hub.Options{Format: hub.Format20}},
		{"v1", []string{"--protocol", "1"}, hub.Options{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := startPty(t, filepath.Join(dir, "build", "host", "hubsim"), append([]string{"--seed", "3"}, tc.args...)...)
			driverSession(t, path, tc.opts, "idlewatt open hub", 2000)
		})
	}
}

// driverSession opens the hub at path with idlewatt's driver and streams at
// rate for about 1.5 s while sending 20 marks and 8 DEVSLP commands: every
// sample arrives in order with no gap, every mark is echoed in the order
// sent, and every DEVSLP command is answered and confirmed by an EVENT whose
// index lies within the stream.
func driverSession(t *testing.T, path string, opts hub.Options, model string, rate units.Hertz) {
	t.Helper()
	h, err := hub.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if id := h.Identity(); id.Model != model || id.Ports != 2 {
		t.Fatalf("identity %+v", id)
	}
	s := newSink()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Stream(ctx, meter.StreamConfig{Rate: rate}, s) }()
	const marks = 20
	var pins int
	time.Sleep(200 * time.Millisecond)
	for i := range marks {
		if err := h.Mark(context.Background(), uint32(100+i)); err != nil {
			t.Errorf("mark %d: %v", i, err)
		}
		if i%5 == 0 {
			for _, port := range []int{1, 2} {
				if err := h.SetDevSlp(context.Background(), port, i%10 == 0); err != nil {
					t.Errorf("SET_DEVSLP port %d: %v", port, err)
				}
				pins++
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.gaps) != 0 || s.badOrd != 0 {
		t.Errorf("gaps %v, %d blocks out of order", s.gaps, s.badOrd)
	}
	if len(s.samples) != 4 {
		t.Fatalf("samples on %d channels, want 4", len(s.samples))
	}
	var n uint64
	for ch, k := range s.samples {
		if n == 0 {
			n = k
		}
		if k != n || k < uint64(rate) {
			t.Errorf("channel %d: %d samples (channel 0: %d)", ch, k, n)
		}
	}
	var prev uint64
	for i := range marks {
		m, ok := s.marks[uint32(100+i)]
		if !ok {
			t.Errorf("mark %d not echoed", 100+i)
			continue
		}
		if m.MeterIndex < prev || m.MeterIndex > n {
			t.Errorf("mark %d at index %d (previous %d, stream %d samples)", 100+i, m.MeterIndex, prev, n)
		}
		prev = m.MeterIndex
	}
	var devslp int
	for _, e := range s.events {
		if e.Kind == meter.EventDevSlp {
			devslp++
			if e.Index > n {
				t.Errorf("DEVSLP event at index %d beyond the stream's %d samples", e.Index, n)
			}
		}
	}
	if devslp != pins {
		t.Errorf("%d DEVSLP events for %d commands", devslp, pins)
	}
	if st := h.Stats(); st.CRCErrors != 0 || st.Refused != 0 {
		t.Errorf("stats %+v", st)
	}
}

// idlewattBinary builds cmd/idlewatt once.
var idlewattBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "idlewatt-fw-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "idlewatt")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/idlewatt").CombinedOutput()
	if err != nil {
		return "", &buildError{"idlewatt", err, string(out)}
	}
	return bin, nil
})

type recordResult struct {
	Samples   uint64 `json:"samples"`
	Channels  int    `json:"channels"`
	Gaps      uint64 `json:"gaps"`
	Lost      uint64 `json:"samples_lost"`
	CRCErrors uint64 `json:"crc_errors"`
	Marks     uint64 `json:"marks"`
	Recovered uint64 `json:"samples_recovered"`
	Refused   uint64 `json:"frames_refused"`
}

// record runs `idlewatt record` from path for d and returns its result.
func record(t *testing.T, path string, d time.Duration, extra ...string) recordResult {
	t.Helper()
	bin, err := idlewattBinary()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run.iwcap")
	args := append([]string{"record", "--meter", "hub", "--port", path, "--duration", d.String(), "--out", out, "--json"}, extra...)
	b, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("idlewatt %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	var r recordResult
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("record --json printed %q: %v", b, err)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", r)
	return r
}

// TestRecordFromHubsim: `idlewatt record` from the host build, clean and
// with one byte in 2,000 corrupted on the way: every sample arrives, the
// corrupted frames are asked for again (RESEND) and recovered.
func TestRecordFromHubsim(t *testing.T) {
	dir := build(t, "host")
	sim := filepath.Join(dir, "build", "host", "hubsim")
	clean := record(t, startPty(t, sim, "--seed", "5"), 3*time.Second, "--rate", "5000")
	if clean.CRCErrors != 0 || clean.Gaps != 0 || clean.Lost != 0 || clean.Refused != 0 {
		t.Errorf("clean link: %+v", clean)
	}
	if clean.Channels != 4 || clean.Samples < 3*5000*9/10 {
		t.Errorf("clean link: %d samples on %d channels in 3 s at 5 kS/s", clean.Samples, clean.Channels)
	}
	noisy := record(t, startPty(t, sim, "--seed", "6", "--corrupt", "5e-4"), 3*time.Second, "--rate", "5000")
	if noisy.CRCErrors == 0 || noisy.Recovered == 0 {
		t.Errorf("corrupted link: no CRC errors or nothing recovered: %+v", noisy)
	}
	// A RESEND answered after the hub's ring has moved on loses its
	// samples (a host starved on a loaded machine reads the corrupted
	// frame late): that is allowed, accounted as a gap, never more than
	// the corrupted frames could hold (a frame carries fewer samples than
	// its payload has bytes); most corrupted samples come back.
	if noisy.Lost > 0 && noisy.Gaps == 0 || noisy.Lost > noisy.CRCErrors*hub.MaxPayload || noisy.Samples+noisy.Lost < 3*5000*9/10 {
		t.Errorf("corrupted link: %d samples, %d lost in %d gaps, %d CRC errors", noisy.Samples, noisy.Lost, noisy.Gaps, noisy.CRCErrors)
	}
}
