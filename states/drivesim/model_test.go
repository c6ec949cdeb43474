package drivesim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/states/powerstate"
	"github.com/idlewatt/idlewatt/units"
	"github.com/idlewatt/idlewatt/workload"
)

const ms = time.Millisecond

// randomProfile returns a valid profile with every level, latency and timer
// drawn at random, SSD or HDD.
func randomProfile(r *rand.Rand) Profile {
	u := r.Float64
	if r.IntN(5) == 0 {
		p, _ := Lookup("hdd-7200", nil)
		p.Name = "rand-hdd"
		p.StandbyAfterS = 0.3 + u()
		p.SpinupMs = 50 + 300*u()
		p.NoiseMA = 3 * u()
		p.DipmSlumberAfterMs = 10 + 100*u()
		return p
	}
	p, _ := Lookup("jmf667h-128-a19", nil)
	p.Name = "rand"
	p.ActiveIdleW = units.Watts(0.1 + 0.8*u())
	p.PartialW = p.ActiveIdleW * units.Watts(0.5+0.5*u())
	p.SlumberW = p.PartialW * units.Watts(0.1+0.5*u())
	p.DevSlpW = p.SlumberW * units.Watts(0.01+0.3*u())
	p.MaxReadMBps, p.MaxWriteMBps = 200+400*u(), 100+400*u()
	p.ReadWPerMBps, p.WriteWPerMBps = 0.001+0.003*u(), 0.003+0.008*u()
	p.PeakWriteW = p.ActiveIdleW + units.Watts(0.5+3*u())
	p.PartialExitUs, p.SlumberExitMs = 1+9*u(), 1+9*u()
	p.DetoMs = 20 + 200*u()
	p.DevSlpExitMs = p.DetoMs * (0.2 + 0.8*u())
	p.MdatMs = 1 + 20*u()
	p.HipmPartialAfterMs, p.DipmPartialAfterMs = 5*u(), 10*u()
	p.DipmSlumberAfterMs, p.DitoMs = 10+200*u(), 100+500*u()
	p.WakeSpikeW, p.WakeSpikeMs = p.ActiveIdleW+units.Watts(2*u()), 0.5+3*u()
	p.NoiseMA = 2 * u()
	p.DESO = r.IntN(2) == 0
	p.DevSlpSupported = r.IntN(4) != 0
	p.DevSlpBroken = p.DevSlpSupported && r.IntN(4) == 0
	p.GCEveryS, p.GCMs, p.GCW = 0.3+2*u(), 5+100*u(), 0.5+units.Watts(u())
	if r.IntN(3) == 0 {
		p.GCEveryS = 0
	}
	return p
}

// event is one step of a script.
type event struct {
	at     time.Duration
	kind   int // 0 io, 1 done, 2 pin, 3 power, 4 policy
	op     workload.Op
	size   int
	on     bool
	policy string
	id     int
}

// randomScript returns bursts of I/O separated by idle gaps, DEVSLP pulses
// (some shorter than MDAT), policy changes and rare power cycles, in time order.
func randomScript(r *rand.Rand, length time.Duration, power bool) []event {
	var evs []event
	t := time.Duration(r.IntN(50)) * ms
	id := 0
	pin := false
	for t < length {
		switch x := r.IntN(10); {
		case x < 6: // a burst
			n := 1 + r.IntN(20)
			for range n {
				op := workload.OpRead
				if r.IntN(2) == 0 {
					op = workload.OpWrite
				}
				size := 4096 << r.IntN(9)
				evs = append(evs, event{at: t, kind: 0, op: op, size: size, id: id})
				t += time.Duration(r.IntN(3000)) * time.Microsecond
				evs = append(evs, event{at: t, kind: 1, op: op, size: size, id: id})
				id++
				t += time.Duration(r.IntN(500)) * time.Microsecond
			}
		case x < 8:
			pin = !pin
			evs = append(evs, event{at: t, kind: 2, on: pin})
		case x < 9:
			evs = append(evs, event{at: t, kind: 4, policy: Policies[r.IntN(len(Policies))]})
		default:
			if power {
				evs = append(evs, event{at: t, kind: 3, on: false})
				t += time.Duration(r.IntN(100)) * ms
				evs = append(evs, event{at: t, kind: 3, on: true})
			}
		}
		t += time.Duration(r.ExpFloat64() * float64(300*ms))
	}
	return evs
}

type ioRecord struct {
	at   time.Duration
	wait time.Duration
}

// run plays evs against m, rendering at 10 kS/s in chunks of chunk samples
// (events of a chunk are applied before it is rendered, as the emulator
// renders after the fact), up to length. It returns the 5 V and 12 V
// currents and each IO's wait.
func run(m *Model, evs []event, length time.Duration, chunk int) (i5, i12 []float64, ios []ioRecord) {
	const rate = 10000
	n := int(length.Seconds() * rate)
	i5, i12 = make([]float64, n), make([]float64, n)
	v5, v12 := make([]units.Volts, chunk), make([]units.Volts, chunk)
	a5, a12 := make([]units.Amps, chunk), make([]units.Amps, chunk)
	ei := 0
	for k := 0; k < n; k += chunk {
		c := min(chunk, n-k)
		end := time.Duration(k+c) * 100 * time.Microsecond
		for ; ei < len(evs) && evs[ei].at < end; ei++ {
			e := evs[ei]
			switch e.kind {
			case 0:
				ios = append(ios, ioRecord{e.at, m.IO(e.at, e.op, e.size)})
			case 1:
				m.IODone(e.at, e.op, e.size)
			case 2:
				m.SetDevSlp(e.at, e.on)
			case 3:
				m.SetPower(e.at, e.on)
			case 4:
				if err := m.SetPolicy(e.at, e.policy); err != nil {
					panic(err)
				}
			}
		}
		m.Render(time.Duration(k)*100*time.Microsecond, rate, v5[:c], a5[:c], v12[:c], a12[:c])
		for j := range c {
			i5[k+j], i12[k+j] = float64(a5[j]), float64(a12[j])
		}
	}
	return i5, i12, ios
}

// levels returns the total powers a profile allows in each state.
func levels(p Profile) map[powerstate.State][]float64 {
	c := compile(p, Options{})
	l := map[powerstate.State][]float64{
		powerstate.Off:     {0},
		powerstate.SpinUp:  {c.idle - c.spindle + c.spinupW},
		powerstate.Wake:    {c.idle, c.spikeW, c.gcW},
		powerstate.Idle:    {c.idle, c.spikeW, c.gcW},
		powerstate.Active:  {c.activeRead, c.activeWrite},
		powerstate.Partial: {c.partial, c.spikeW, c.gcW},
		powerstate.Slumber: {c.slumber, c.spikeW, c.gcW},
		powerstate.DevSlp:  {c.devslp},
		powerstate.Standby: {c.standby},
	}
	return l
}

func TestPropertyRandomProfilesAndScripts(t *testing.T) {
	const length = 3 * time.Second
	for i := range 40 {
		r := rand.New(rand.NewPCG(uint64(i), 7))
		p := randomProfile(r)
		if err := p.Validate(); err != nil {
			t.Fatalf("case %d: random profile invalid: %v", i, err)
		}
		evs := randomScript(r, length, true)
		policy := Policies[r.IntN(len(Policies))]
		m, err := New(p, Options{Seed: int64(i), KeepTruth: true, Policy: policy})
		if err != nil {
			t.Fatal(err)
		}
		i5, i12, ios := run(m, evs, length, 50+r.IntN(100))
		truth := m.Truth()
		t.Run(fmt.Sprintf("case%d-%s", i, p.Name), func(t *testing.T) {
			checkTimeline(t, p, truth, length)
			checkSamples(t, p, truth, i5, i12)
			checkWaits(t, p, truth, ios)
			checkDevSlpEntries(t, p, truth, evs, policy)
		})
	}
}

func checkTimeline(t *testing.T, p Profile, truth []Segment, length time.Duration) {
	t.Helper()
	if len(truth) == 0 || truth[0].Start != 0 || truth[len(truth)-1].End < length {
		t.Fatalf("timeline does not cover [0, %v)", length)
	}
	lv := levels(p)
	peak := math.Max(float64(p.PeakWriteW), math.Max(float64(p.WakeSpikeW), float64(p.GCW)))
	if p.HDD() {
		peak = math.Max(peak, float64(p.ActiveIdleW-p.SpindleW+p.SpinupW))
	}
	for j, s := range truth {
		if j > 0 && s.Start != truth[j-1].End {
			t.Fatalf("segment %d starts at %v, previous ended %v", j, s.Start, truth[j-1].End)
		}
		ok := false
		for _, l := range lv[s.State] {
			if math.Abs(float64(s.Power())-l) < 1e-9 {
				ok = true
			}
		}
		if !ok {
			t.Fatalf("segment %d %v at %v: power %v not a level of the profile (%v)", j, s.State, s.Start, s.Power(), lv[s.State])
		}
		if float64(s.Power()) > peak+1e-9 {
			t.Fatalf("segment %d: power %v above every peak the profile allows (%v)", j, s.Power(), peak)
		}
		if s.State == powerstate.Active && s.Power() > p.PeakWriteW+1e-9 {
			t.Fatalf("active power %v above peak_write_w", s.Power())
		}
		if !p.HDD() && s.P12 != 0 {
			t.Fatalf("5 V drive draws %v on 12 V", s.P12)
		}
		if s.State == powerstate.DevSlp && !p.DevSlpWorks() {
			t.Fatalf("drive with DevSlp unsupported or broken entered DevSlp at %v", s.Start)
		}
		// The floor: nothing powered goes below DevSlp (if it works), else
		// below Slumber (or standby for a spun-down HDD).
		floor := p.SlumberW
		if p.DevSlpWorks() {
			floor = min(floor, p.DevSlpW)
		}
		if p.HDD() {
			floor = min(floor, p.StandbyW)
		}
		if s.State != powerstate.Off && s.Power() < floor-1e-12 {
			t.Fatalf("segment %d %v: power %v below the floor %v", j, s.State, s.Power(), floor)
		}
	}
}

// checkSamples: every sample that lies wholly inside a truth segment is the
// segment's current plus noise, within the ±4.0 σ the noise table spans;
// the mean over each long segment is within 6 σ/√n.
func checkSamples(t *testing.T, p Profile, truth []Segment, i5, i12 []float64) {
	t.Helper()
	sig := p.NoiseMA / 1e3
	const dt = 100 * time.Microsecond
	for _, s := range truth {
		k0 := int((s.Start + dt - 1) / dt)
		k1 := min(int(s.End/dt), len(i5)) // samples [k0, k1) lie inside
		if k1 <= k0 {
			continue
		}
		c5, c12 := float64(s.P5)/5, float64(s.P12)/12
		var sum float64
		for k := k0; k < k1; k++ {
			if d := math.Abs(i5[k] - c5); d > 4.05*sig+1e-12 {
				t.Fatalf("sample %d (%v, in %v %v–%v): 5 V %v A, true %v A, noise σ %v", k, time.Duration(k)*dt, s.State, s.Start, s.End, i5[k], c5, sig)
			}
			sig12 := 0.0
			if p.HDD() {
				sig12 = sig
			}
			if d := math.Abs(i12[k] - c12); d > 4.05*sig12+1e-12 {
				t.Fatalf("sample %d: 12 V %v A, true %v A", k, i12[k], c12)
			}
			sum += i5[k]
		}
		if n := k1 - k0; n >= 20 {
			mean := sum / float64(n)
			if math.Abs(mean-c5) > 6*sig/math.Sqrt(float64(n))+1e-12 {
				t.Fatalf("%v %v–%v: mean 5 V %v A over %d samples, true %v A", s.State, s.Start, s.End, mean, n, c5)
			}
		}
	}
}

// checkWaits: an I/O waits exactly the exit latency of the state it found.
func checkWaits(t *testing.T, p Profile, truth []Segment, ios []ioRecord) {
	t.Helper()
	c := compile(p, Options{})
	for _, io := range ios {
		// The state just before the I/O arrived.
		i := sort.Search(len(truth), func(i int) bool { return truth[i].End >= io.at })
		if i == len(truth) {
			t.Fatalf("io at %v beyond the timeline", io.at)
		}
		st := truth[i].State
		if truth[i].Start == io.at && i > 0 {
			st = truth[i-1].State // the I/O changed the state at its own time
		}
		var want time.Duration
		switch st {
		case powerstate.Partial:
			want = time.Duration(c.partialExit)
		case powerstate.Slumber:
			want = time.Duration(c.slumberExit)
		case powerstate.DevSlp:
			want = time.Duration(c.devslpExit)
		case powerstate.Standby:
			want = time.Duration(c.spinup)
		case powerstate.Idle, powerstate.Active, powerstate.Off:
			want = 0
		default: // already waking: the rest of the wake
			if io.wait < 0 || io.wait > time.Duration(max(c.devslpExit, c.spinup, c.ready)) {
				t.Fatalf("io at %v while %v: wait %v", io.at, st, io.wait)
			}
			continue
		}
		if io.wait != want {
			t.Fatalf("io at %v found the drive %v: wait %v, want %v", io.at, st, io.wait, want)
		}
	}
}

// checkDevSlpEntries: DevSlp is entered only while the pin is asserted or the
// policy lets the HBA ask, from Slumber when the profile says DESO, and a
// pin-driven DevSlp lasts at least MDAT.
func checkDevSlpEntries(t *testing.T, p Profile, truth []Segment, evs []event, policy string) {
	t.Helper()
	pinAt := func(at time.Duration) (bool, string) {
		pin, pol := false, policy
		for _, e := range evs {
			if e.at > at {
				break
			}
			switch e.kind {
			case 2:
				pin = e.on
			case 4:
				pol = e.policy
			}
		}
		return pin, pol
	}
	for j, s := range truth {
		if s.State != powerstate.DevSlp || j == 0 || truth[j-1].State == powerstate.DevSlp {
			continue
		}
		// Zero-length states vanish from the timeline (e.g. Slumber entered
		// and left for DevSlp at one instant), so the state before may be
		// any state of a powered, spinning-or-SSD drive; DESO is checked by
		// TestDevSlpPinDESOAndMDAT.
		switch prev := truth[j-1].State; prev {
		case powerstate.Off, powerstate.SpinUp, powerstate.Standby:
			t.Fatalf("DevSlp at %v entered from %v", s.Start, prev)
		}
		pin, pol := pinAt(s.Start)
		if !pin && pol != PolicyMinPower && pol != PolicyMinPowerPartial {
			// The pin may have been released within MDAT or the policy
			// changed: only a later pin event explains it. Accept if the
			// pin was asserted at some point before.
			seen := false
			for _, e := range evs {
				if e.at <= s.Start && e.kind == 2 && e.on {
					seen = true
				}
			}
			if !seen {
				t.Fatalf("DevSlp at %v with the pin never asserted under %s", s.Start, pol)
			}
		}
	}
}

func TestDeterministicFromSeedWhateverTheChunking(t *testing.T) {
	r := rand.New(rand.NewPCG(99, 1))
	p := randomProfile(r)
	p.GCEveryS, p.GCMs, p.GCW = 0.2, 20, 1.0
	evs := randomScript(r, 2*time.Second, false)
	mk := func(seed int64) *Model {
		m, err := New(p, Options{Seed: seed, Policy: PolicyMinPower})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a5, _, _ := run(mk(5), evs, 2*time.Second, 100)
	b5, _, _ := run(mk(5), evs, 2*time.Second, 100)
	c5, _, _ := run(mk(5), evs, 2*time.Second, 37)
	d5, _, _ := run(mk(6), evs, 2*time.Second, 100)
	same, diff := 0, 0
	for k := range a5 {
		if a5[k] != b5[k] {
			t.Fatalf("sample %d differs between identical runs: %v vs %v", k, a5[k], b5[k])
		}
		if math.Abs(a5[k]-c5[k]) > 1e-9 {
			t.Fatalf("sample %d differs with another chunking: %v vs %v", k, a5[k], c5[k])
		}
		if a5[k] == d5[k] {
			same++
		} else {
			diff++
		}
	}
	if diff < len(a5)/2 {
		t.Fatalf("another seed changed only %d of %d samples", diff, len(a5))
	}
}

func TestBrokenDevSlpNeverBelowSlumber(t *testing.T) {
	p, _ := Lookup("broken-devslp", nil)
	for i := range 10 {
		r := rand.New(rand.NewPCG(uint64(i), 3))
		evs := randomScript(r, 3*time.Second, false)
		m, _ := New(p, Options{Seed: int64(i), KeepTruth: true, Policy: PolicyMinPower})
		i5, _, _ := run(m, evs, 3*time.Second, 80)
		// Windows of 1 ms (10 samples): the mean never drops below the
		// Slumber floor by more than the noise allows.
		sig := p.NoiseMA / 1e3
		floor := float64(p.SlumberW) / 5
		for k := 0; k+10 <= len(i5); k += 10 {
			var s float64
			for _, x := range i5[k : k+10] {
				s += x
			}
			if s/10 < floor-6*sig/math.Sqrt(10) {
				t.Fatalf("seed %d: 1 ms mean %v A at %v below the Slumber floor %v A", i, s/10, time.Duration(k)*100*time.Microsecond, floor)
			}
		}
		for _, s := range m.Truth() {
			if s.State == powerstate.DevSlp {
				t.Fatalf("broken drive entered DevSlp at %v", s.Start)
			}
		}
	}
}

// idleAfter issues one small read at 0 and completes it, then advances.
func idleAfter(t *testing.T, p Profile, policy string, until time.Duration) *Model {
	t.Helper()
	m, err := New(p, Options{KeepTruth: true, Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	m.IO(0, workload.OpRead, 512)
	m.IODone(0, workload.OpRead, 512)
	m.Advance(until)
	return m
}

func stateAt(t *testing.T, m *Model, at time.Duration) powerstate.State {
	t.Helper()
	s, ok := m.StateAt(at)
	if !ok {
		t.Fatalf("no state at %v", at)
	}
	return s
}

func TestEntryTimersPerPolicy(t *testing.T) {
	p, _ := Lookup("jmf667h-128-a19", nil)
	p.HipmPartialAfterMs, p.DipmPartialAfterMs, p.DipmSlumberAfterMs, p.DitoMs = 3, 7, 60, 500
	p.DESO = true
	cp := compile(p, Options{})
	q := time.Duration(cp.xferNs(workload.OpRead, 512)) // quiescent from here
	cases := []struct {
		policy string
		at     time.Duration
		want   powerstate.State
	}{
		{PolicyMaxPerformance, 5 * time.Second, powerstate.Idle},
		{PolicyMediumPower, q + 3*ms - 1, powerstate.Idle},
		{PolicyMediumPower, q + 3*ms, powerstate.Partial},
		{PolicyMediumPower, 5 * time.Second, powerstate.Partial},
		{PolicyMedPowerDIPM, q + 3*ms, powerstate.Partial},
		{PolicyMedPowerDIPM, q + 60*ms - 1, powerstate.Partial},
		{PolicyMedPowerDIPM, q + 60*ms, powerstate.Slumber},
		{PolicyMedPowerDIPM, 5 * time.Second, powerstate.Slumber},
		{PolicyMinPowerPartial, q + 500*ms - 1, powerstate.Slumber},
		{PolicyMinPowerPartial, q + 500*ms, powerstate.DevSlp},
		{PolicyMinPower, q + 3*ms, powerstate.Slumber}, // HIPM Slumber beats DIPM Partial
		{PolicyMinPower, q + 3*ms - 1, powerstate.Idle},
		{PolicyMinPower, q + 500*ms, powerstate.DevSlp},
	}
	for _, c := range cases {
		m := idleAfter(t, p, c.policy, 6*time.Second)
		if got := stateAt(t, m, c.at); got != c.want {
			t.Errorf("%s: state at %v = %v, want %v", c.policy, c.at, got, c.want)
		}
	}
}

func TestDevSlpPinDESOAndMDAT(t *testing.T) {
	p, _ := Lookup("ssd340", nil)
	p.GCEveryS = 0
	c := compile(p, Options{})
	// DESO under max_performance: the drive never reaches Slumber, so the
	// pin is not honoured.
	m, _ := New(p, Options{KeepTruth: true})
	m.SetDevSlp(100*ms, true)
	m.Advance(time.Second)
	if s := stateAt(t, m, 500*ms); s != powerstate.Idle {
		t.Fatalf("DESO drive in %v with the pin asserted from idle", s)
	}
	// DESO under DIPM: asserted in Partial, honoured the moment Slumber comes.
	m, _ = New(p, Options{KeepTruth: true, Policy: PolicyMedPowerDIPM})
	m.Advance(20 * ms) // Partial
	m.SetDevSlp(20*ms, true)
	m.Advance(time.Second)
	slumberAt := time.Duration(c.dipmS)
	if s := stateAt(t, m, slumberAt-1); s != powerstate.Partial {
		t.Fatalf("DESO, pin asserted in Partial: %v before the Slumber timer", s)
	}
	if s := stateAt(t, m, slumberAt); s != powerstate.DevSlp {
		t.Fatalf("DESO: %v at the Slumber timer, want devslp", s)
	}
	// Without DESO the pin is honoured from idle.
	p.DESO = false
	m, _ = New(p, Options{KeepTruth: true})
	m.SetDevSlp(100*ms, true)
	m.SetDevSlp(101*ms, false) // a 1 ms pulse: MDAT holds it in DevSlp
	m.Advance(time.Second)
	mdat := time.Duration(c.mdat)
	if s := stateAt(t, m, 100*ms+mdat-1); s != powerstate.DevSlp {
		t.Fatalf("state before MDAT elapsed = %v, want devslp", s)
	}
	if s := stateAt(t, m, 100*ms+mdat); s != powerstate.Wake {
		t.Fatalf("state at MDAT = %v, want wake", s)
	}
	exit := time.Duration(c.devslpExit)
	if s := stateAt(t, m, 100*ms+mdat+exit); s != powerstate.Idle {
		t.Fatalf("state after the exit = %v, want idle", s)
	}
	// DevSlp floor: the true mean over the DevSlp interval.
	p5, _, ok := m.MeanPower(100*ms, 100*ms+mdat)
	if !ok || math.Abs(float64(p5-p.DevSlpW)) > 1e-12 {
		t.Fatalf("DevSlp power %v (ok %v), want %v", p5, ok, p.DevSlpW)
	}
}

func TestIOWakesFromDevSlpAndReturns(t *testing.T) {
	p, _ := Lookup("jmf667h-256-a19", nil)
	p.GCEveryS = 0
	m, _ := New(p, Options{KeepTruth: true, Policy: PolicyMedPowerDIPM})
	m.Advance(200 * ms) // Slumber by DIPM
	m.SetDevSlp(200*ms, true)
	w := m.IO(400*ms, workload.OpWrite, 64<<10)
	if want := time.Duration(p.DevSlpExitMs * 1e6); w != want {
		t.Fatalf("wait from DevSlp = %v, want %v", w, want)
	}
	m.IODone(400*ms+w+time.Millisecond, workload.OpWrite, 64<<10)
	m.Advance(2 * time.Second)
	// The write ran after the wake, at write power.
	c := compile(p, Options{})
	if s := stateAt(t, m, 400*ms+w); s != powerstate.Active {
		t.Fatalf("state when the wake ends = %v, want active", s)
	}
	p5, _, _ := m.MeanPower(400*ms+w, 400*ms+w+time.Microsecond)
	if math.Abs(float64(p5)-c.activeWrite) > 1e-9 {
		t.Fatalf("write power %v, want %v", p5, c.activeWrite)
	}
	// The pin is still asserted: back in DevSlp once Slumber is reached (DESO).
	if s := stateAt(t, m, time.Second); s != powerstate.DevSlp {
		t.Fatalf("state after the I/O with the pin asserted = %v, want devslp", s)
	}
	// The spike at the wake.
	sp, _, _ := m.MeanPower(400*ms, 400*ms+time.Duration(p.WakeSpikeMs*1e6))
	if sp != p.WakeSpikeW {
		t.Fatalf("wake spike %v, want %v", sp, p.WakeSpikeW)
	}
}

func TestHDDSpinUpAndStandby(t *testing.T) {
	p, _ := Lookup("hdd-7200", nil)
	p.StandbyAfterS = 2
	m, _ := New(p, Options{KeepTruth: true, Off: true})
	m.SetPower(100*ms, true)
	m.Advance(12 * time.Second)
	spin := time.Duration(p.SpinupMs * 1e6)
	p5, p12, _ := m.MeanPower(100*ms, 100*ms+spin)
	if p12 != p.SpinupW || math.Abs(float64(p5-(p.ActiveIdleW-p.SpindleW))) > 1e-12 {
		t.Fatalf("spin-up rails %v / %v, want 5 V %v, 12 V %v", p5, p12, p.ActiveIdleW-p.SpindleW, p.SpinupW)
	}
	if s := stateAt(t, m, 100*ms+spin+2*time.Second-1); s != powerstate.Idle {
		t.Fatalf("before the standby timer: %v", s)
	}
	if s := stateAt(t, m, 100*ms+spin+2*time.Second); s != powerstate.Standby {
		t.Fatalf("after the standby timer: %v", s)
	}
	_, p12, _ = m.MeanPower(11500*ms, 12*time.Second)
	if p12 != 0 {
		t.Fatalf("standby draws %v on 12 V", p12)
	}
	if w := m.IO(12*time.Second, workload.OpRead, 4096); w != spin {
		t.Fatalf("I/O from standby waits %v, want the spin-up %v", w, spin)
	}
	_, _, _ = m.MeanPower(0, ms)
	if s, ok := m.StateAt(50 * ms); !ok || s != powerstate.Off {
		t.Fatalf("before power-on: %v", s)
	}
}

func TestPowerOffDrawsNothingAndRefusesIO(t *testing.T) {
	p, _ := Lookup("jmf667h-128-a19", nil)
	m, _ := New(p, Options{KeepTruth: true})
	m.SetPower(100*ms, false)
	if _, _, on := m.issue(200*ms, workload.OpRead, 4096); on {
		t.Fatal("powered-off drive accepted an I/O")
	}
	m.SetPower(300*ms, true)
	m.Advance(time.Second)
	if p5, _, _ := m.MeanPower(100*ms, 300*ms); p5 != 0 {
		t.Fatalf("off draws %v", p5)
	}
	if s := stateAt(t, m, 300*ms+time.Duration(p.ReadyMs*1e6)); s != powerstate.Idle {
		t.Fatalf("after power-on and ready_ms: %v", s)
	}
}

func TestEventsInThePastApplyAtTheCursor(t *testing.T) {
	p, _ := Lookup("jmf667h-128-a19", nil)
	p.NoiseMA = 0
	m, _ := New(p, Options{KeepTruth: true, Policy: PolicyMedPowerDIPM})
	buf := func(n int) ([]units.Volts, []units.Amps, []units.Volts, []units.Amps) {
		return make([]units.Volts, n), make([]units.Amps, n), make([]units.Volts, n), make([]units.Amps, n)
	}
	v5, i5, v12, i12 := buf(1000) // 100 ms
	m.Render(0, 10000, v5, i5, v12, i12)
	m.Render(100*ms, 10000, v5, i5, v12, i12) // rendered up to 200 ms
	w := m.IO(150*ms, workload.OpRead, 4096)  // late: applied at 200 ms
	m.IODone(150*ms, workload.OpRead, 4096)
	if w != time.Duration(p.SlumberExitMs*1e6) {
		t.Fatalf("late I/O wait %v", w)
	}
	m.Advance(210 * ms)
	if s := stateAt(t, m, 199*ms); s != powerstate.Slumber {
		t.Fatalf("rendered history changed: %v at 199 ms", s)
	}
	if s := stateAt(t, m, 200*ms); s != powerstate.Wake {
		t.Fatalf("late I/O not applied at the cursor: %v", s)
	}
	// An event ahead of the cursor is rendered at its own time.
	m.IO(280*ms, workload.OpWrite, 1<<20)
	m.IODone(281*ms, workload.OpWrite, 1<<20)
	m.Render(200*ms, 10000, v5, i5, v12, i12)
	k := 800 // sample at 280 ms
	if got := float64(i5[k-1]) * 5; math.Abs(got-float64(p.SlumberW)) > 1e-9 {
		t.Fatalf("sample before the I/O: %v W", got)
	}
	if got := float64(i5[k+1]) * 5; math.Abs(got-float64(p.WakeSpikeW)) > 1e-9 {
		t.Fatalf("sample just after the I/O at 280 ms: %v W, want the spike %v", got, p.WakeSpikeW)
	}
}

func TestGCBurstsWhileIdle(t *testing.T) {
	p, _ := Lookup("jmf667h-128-a19", nil)
	p.GCEveryS, p.GCMs = 0.5, 50
	m, _ := New(p, Options{KeepTruth: true, Seed: 3})
	m.Advance(20 * time.Second)
	count := func(from time.Duration) (n int, last Segment) {
		for _, s := range m.Truth() {
			if s.GC && s.Start >= from {
				n++
				last = s
				if s.Power() != p.GCW || s.End-s.Start > 50*ms {
					t.Fatalf("GC segment %+v", s)
				}
			}
		}
		return n, last
	}
	// Mean gap 0.5 s + 50 ms: the 16 bursts an idle period allows come
	// within ~9 s, then the drive has nothing left to collect.
	if n, last := count(0); n != gcPerIdle || last.End > 15*time.Second {
		t.Fatalf("%d GC bursts in 20 s idle (last ends %v), want %d", n, last.End, gcPerIdle)
	}
	// An I/O starts a new idle period, and pre-empts a burst in progress.
	m.IO(20*time.Second, workload.OpWrite, 4096)
	m.IODone(20*time.Second, workload.OpWrite, 4096)
	m.Advance(40 * time.Second)
	n, _ := count(20 * time.Second)
	if n != gcPerIdle {
		t.Fatalf("%d GC bursts after the I/O, want %d", n, gcPerIdle)
	}
	var burst Segment
	for _, s := range m.Truth() {
		if s.GC && s.Start > 20*time.Second {
			burst = s
			break
		}
	}
	// Replay the same calls on a twin (same seed), with a read 10 ms into
	// that burst: the burst stops there.
	m2, _ := New(p, Options{KeepTruth: true, Seed: 3})
	m2.IO(20*time.Second, workload.OpWrite, 4096)
	m2.IODone(20*time.Second, workload.OpWrite, 4096)
	at := burst.Start + 10*ms
	m2.IO(at, workload.OpRead, 4096)
	m2.IODone(at+ms, workload.OpRead, 4096)
	m2.Advance(at + 40*ms)
	if p5, _, _ := m2.MeanPower(at-ms, at); p5 != p.GCW {
		t.Fatalf("twin did not run the same burst: %v before the read", p5)
	}
	for _, s := range m2.Truth() {
		if s.GC && s.End > at {
			t.Fatalf("GC continued through host I/O: %+v", s)
		}
	}
}

func TestPolicyChangeWakesLowLink(t *testing.T) {
	p, _ := Lookup("jmf667h-128-a19", nil)
	p.GCEveryS = 0
	m, _ := New(p, Options{KeepTruth: true, Policy: PolicyMedPowerDIPM})
	m.Advance(time.Second)
	if err := m.SetPolicy(time.Second, "bogus"); err == nil {
		t.Fatal("unknown policy accepted")
	}
	if err := m.SetPolicy(time.Second, PolicyMaxPerformance+"\n"); err != nil {
		t.Fatal(err)
	}
	m.Advance(2 * time.Second)
	if s := stateAt(t, m, time.Second); s != powerstate.Wake {
		t.Fatalf("policy change from Slumber: %v", s)
	}
	if s := stateAt(t, m, 1900*ms); s != powerstate.Idle {
		t.Fatalf("under max_performance: %v", s)
	}
}

// FuzzModel drives a model with arbitrary calls (times out of order,
// negative or huge, odd sizes and rates): it must not panic, samples must be
// finite, and the truth must stay contiguous with known states.
func FuzzModel(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Add([]byte{3, 0, 0, 0, 4, 200, 0, 1, 5, 9, 0, 255, 255, 255, 255, 255, 255, 255, 127})
	f.Add([]byte{2, 1, 2, 1, 6, 0, 6, 1, 0, 0, 1, 0, 7, 7, 7})
	f.Add([]byte{0x85, 9, 5, 100, 3, 6, 1, 255, 5, 50, 2, 0, 1, 0, 6, 200, 9})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 2 {
			return
		}
		ps := Builtins()
		p := ps[int(b[0])%len(ps)]
		if b[0]&0x80 != 0 { // with every meter noise component
			p.Noise = everyNoise
			p.Noise.AR1TauMs = 0.1 + float64(b[1])/10
		}
		m, err := New(p, Options{Seed: int64(b[1]), KeepTruth: true, Policy: Policies[int(b[1])%len(Policies)]})
		if err != nil {
			t.Fatal(err)
		}
		v5, v12 := make([]units.Volts, 64), make([]units.Volts, 64)
		i5, i12 := make([]units.Amps, 64), make([]units.Amps, 64)
		var at time.Duration
		for i := 2; i+2 < len(b); i += 3 {
			step := time.Duration(int8(b[i+1])) * time.Duration(b[i+2]) * 100 * time.Microsecond
			if b[i+2] == 255 {
				step = time.Duration(math.MaxInt64 / 4)
			}
			at += step
			switch b[i] % 8 {
			case 0:
				m.IO(at, workload.Op(b[i+2]%5), int(b[i+1])<<uint(b[i+2]%40))
			case 1:
				m.IODone(at, workload.OpRead, 4096)
			case 2:
				m.SetDevSlp(at, b[i+1]%2 == 0)
			case 3:
				m.SetPower(at, b[i+1]%2 == 0)
			case 4:
				m.SetPolicy(at, Policies[int(b[i+1])%len(Policies)])
			case 5, 6:
				rate := units.Hertz(float64(b[i+1]) * 100)
				m.Render(at, rate, v5, i5, v12, i12)
				for k := range i5 {
					if math.IsNaN(float64(i5[k])) || math.IsInf(float64(i5[k]), 0) || math.IsNaN(float64(i12[k])) {
						t.Fatalf("sample %d not finite: %v %v", k, i5[k], i12[k])
					}
				}
			case 7:
				m.Advance(at)
			}
		}
		tr := m.Truth()
		for j, s := range tr {
			if s.End <= s.Start || !slices.Contains(powerstate.Simulated, s.State) || (j > 0 && s.Start != tr[j-1].End) {
				t.Fatalf("truth segment %d: %+v", j, s)
			}
		}
	})
}
