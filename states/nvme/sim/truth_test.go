package sim

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/units"
)

// TestHubDriveTruth drives a HubDrive through idle, I/O bursts (with the
// wake from PS4 and L1.2), an ASPM change and a power cycle, and checks
// that its truth file integrates to the model's own draw (Drive.Power,
// sampled every 10 µs with the state in force, as the emulator renders
// late) over windows spanning every kind of segment.
func TestHubDriveTruth(t *testing.T) {
	h := NewHubDrive(profile(t, "980pro-1tb"), 100000, 0, 7)
	var buf bytes.Buffer
	h.RecordTruth(&buf, 0, 2)
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	// The schedule, and the draw at each 10 µs step taken from the state in
	// force (Power on the drive as it stands between events).
	type ev struct {
		at time.Duration
		do func(time.Duration)
	}
	evs := []ev{
		{ms(300), func(at time.Duration) { h.IO(at) }}, // from PS4 + L1.2: a wake
		{ms(302), func(at time.Duration) { h.IODone(at) }},
		{ms(302.5), func(at time.Duration) { h.IO(at) }},
		{ms(303), func(at time.Duration) { h.IO(at) }},
		{ms(304), func(at time.Duration) { h.IODone(at) }},
		{ms(305), func(at time.Duration) { h.IODone(at) }},
		{ms(420), func(at time.Duration) { h.SetASPM(at, true, false) }}, // L1 only
		{ms(600), func(at time.Duration) { h.SetPower(at, false) }},
		{ms(650), func(at time.Duration) { h.SetPower(at, true) }},
	}
	end := ms(900)
	step := 10 * time.Microsecond
	var samples []float64
	k := 0
	for at := time.Duration(0); at < end; at += step {
		for k < len(evs) && evs[k].at <= at {
			evs[k].do(evs[k].at)
			k++
		}
		h.mu.Lock()
		p := 0.0
		if h.on {
			p = float64(h.d.Power(at))
		}
		h.mu.Unlock()
		samples = append(samples, p)
	}
	if err := h.Finish(end); err != nil {
		t.Fatal(err)
	}
	hd, segs, err := ReadTruth(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if hd.Profile != "980pro-1tb" || hd.Port != 2 || hd.Seed != 7 || hd.Rail != "3v3" {
		t.Errorf("header %+v", hd)
	}
	if segs[0].Start != 0 || segs[len(segs)-1].End != end {
		t.Fatalf("truth covers %v–%v, want 0–%v", segs[0].Start, segs[len(segs)-1].End, end)
	}
	var io, off, ps4 bool
	for _, s := range segs {
		io, off, ps4 = io || s.IO, off || s.Off, ps4 || (s.PS == 4 && s.Link == L12)
	}
	if !io || !off || !ps4 {
		t.Errorf("segments lack I/O %v, off %v or PS4+L1.2 %v:\n%s", io, off, ps4, buf.String())
	}
	for _, w := range [][2]float64{{0, 900}, {250, 310}, {300, 306}, {400, 600}, {590, 700}, {0, 100}, {650, 900}} {
		from, to := ms(w[0]), ms(w[1])
		got, ok := MeanPower(segs, from, to)
		if !ok {
			t.Fatalf("%v–%v not covered", from, to)
		}
		var sum float64
		n := 0
		for i := int(from / step); i < int(to/step); i++ {
			sum += samples[i]
			n++
		}
		want := sum / float64(n)
		// Each 10 µs point stands for its step: a change inside one is off
		// by at most a step's worth of the largest draw.
		if tol := 6.0 * float64(step) / float64(to-from); math.Abs(float64(got)-want) > tol {
			t.Errorf("%v–%v: truth mean %.6f W, model sampled %.6f W (tol %.6f)", from, to, float64(got), want, tol)
		}
	}
	if _, ok := MeanPower(segs, 0, end+time.Millisecond); ok {
		t.Error("a window past the truth's end was covered")
	}
}

func TestReadTruthErrors(t *testing.T) {
	hdr := `{"schema":"idlewatt.nvmesim.truth/v1","profile":"x","seed":1,"rail":"3v3"}` + "\n"
	for _, c := range []struct{ in, want string }{
		{"", "empty"},
		{`{"schema":"nope"}` + "\n", `line 1: schema "nope"`},
		{hdr + `{"ps":0,"link":"L3","start_s":0,"end_s":1,"power_w":1}` + "\n", `line 2: link "L3"`},
		{hdr + `{"ps":40,"link":"L0","start_s":0,"end_s":1,"power_w":1}` + "\n", "line 2: ps 40"},
		{hdr + `{"ps":0,"link":"L0","start_s":1,"end_s":0.5,"power_w":1}` + "\n", "line 2: end_s 0.5 before"},
		{hdr + `{"ps":0,"link":"L0","start_s":0,"end_s":1,"power_w":1}` + "\n" + `{"ps":0,"link":"L0","start_s":0.5,"end_s":2,"power_w":1}` + "\n", "line 3: start_s 0.5 before"},
		{hdr + `{"ps":0,"link":"L0","start_s":0,"end_s":1e12,"power_w":1}` + "\n", "line 2: value"},
		{hdr + `{"ps":0,` + "\n", "line 2:"},
	} {
		_, _, err := ReadTruth(strings.NewReader(c.in))
		if err == nil || !errors.Is(err, ErrTruthFormat) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
}

func FuzzReadTruth(f *testing.F) {
	hdr := `{"schema":"idlewatt.nvmesim.truth/v1","profile":"x","seed":1,"rail":"3v3"}` + "\n"
	f.Add([]byte(hdr + `{"ps":4,"link":"L1.2","start_s":0,"end_s":1,"power_w":0.005}` + "\n"))
	f.Add([]byte(hdr + `{"ps":0,"link":"L0","io":true,"start_s":0,"end_s":1,"power_w":5}` + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, segs, err := ReadTruth(bytes.NewReader(b))
		if err != nil && !errors.Is(err, ErrTruthFormat) {
			t.Fatalf("error not ErrTruthFormat: %v", err)
		}
		for i, s := range segs {
			if s.End < s.Start || (i > 0 && s.Start < segs[i-1].End-time.Microsecond) {
				t.Fatalf("segment %d out of order: %+v", i, s)
			}
		}
		if len(segs) > 0 {
			MeanPower(segs, segs[0].Start, segs[len(segs)-1].End)
		}
	})
}

// TestHubDriveLateEvent: a completion told after the emulator drew past
// its stamp takes effect where the drawing ended, in the truth as in the
// samples that follow.
func TestHubDriveLateEvent(t *testing.T) {
	h := NewHubDrive(profile(t, "980pro-1tb"), 100000, 0, 1)
	var buf bytes.Buffer
	h.RecordTruth(&buf, 0, 1)
	ms := time.Millisecond
	n := 100 // 10 ms at 10 kHz
	v33, i33 := make([]units.Volts, n), make([]units.Amps, n)
	h.IO(10 * ms)
	h.Render3V3(10*ms, 10000, v33, i33) // drawn busy up to 20 ms
	busy := float64(i33[n-1]) * 3.3
	if err := h.IODone(12 * ms); err != nil { // stamped 12 ms, told after 20 ms
		t.Fatal(err)
	}
	h.Render3V3(20*ms, 10000, v33, i33)
	idle := 0.0
	for _, x := range i33 {
		idle += float64(x) * 3.3 / float64(n)
	}
	if err := h.Finish(30 * ms); err != nil {
		t.Fatal(err)
	}
	_, segs, err := ReadTruth(&buf)
	if err != nil {
		t.Fatal(err)
	}
	wb, _ := MeanPower(segs, 12*ms, 20*ms)
	wi, _ := MeanPower(segs, 20*ms, 30*ms)
	// The samples average 8 points each: a change inside one is off by an
	// eighth of it at most, once in the 100 samples.
	if math.Abs(float64(wb)-busy) > 1e-9 || math.Abs(float64(wi)-idle) > 0.01 || busy <= idle {
		t.Errorf("truth 12–20 ms %v (drawn %v W), after %v (drawn %v W)", wb, busy, wi, idle)
	}
}
