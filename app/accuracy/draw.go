package accuracy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/idlewatt/idlewatt/app/rig"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/states/drivesim"
	"github.com/idlewatt/idlewatt/units"
)

// HubSize is how many drives share one emulated hub: drives 4h … 4h+3 sit
// on hub h, drive i on port i mod 4 + 1.
const HubSize = 4

// Policies are the ALPM policies a hub's run is drawn from.
var Policies = []string{"max_performance", "medium_power", "med_power_with_dipm", "min_power_with_partial", "min_power"}

// Case is one drive of a campaign: everything needed to run it again.
type Case struct {
	Seed  uint64 `json:"seed"`
	Index int    `json:"index"` // drive index in the campaign, from 0
	Hub   int    `json:"hub"`
	Port  int    `json:"port"`
	// Policy is the ALPM policy of the run's idle and workload phases (the
	// DevSlp cycles run under med_power_with_dipm); one per hub, because a
	// hub's drives share the run.
	Policy       string `json:"policy"`
	EmulatorSeed int64  `json:"emulator_seed"` // the hub's; the drive model's noise seed is ×100 + port
	WorkloadSeed int64  `json:"workload_seed"`
	// Family is the drive's meter noise family (drivesim.Families); its
	// parameters are Profile.Noise and Profile.NoiseMA.
	Family string `json:"noise_family"`
	// Meter is the hub's current sensors, shared by its drives.
	Meter Sensor `json:"meter"`
	// Calibration is what the meter states of its own accuracy (the drift
	// family: its gain and offset errors are drawn within it).
	Calibration *Calibration `json:"stated_calibration,omitempty"`
	// Profile is the drive model, shown to nothing but the emulator and the
	// truth: the rig gets it as DriveConfig.Sim, named HiddenProfile.
	Profile drivesim.Profile `json:"profile"`
}

// Sensor is an emulated hub's current sensors.
type Sensor struct {
	Format  string  `json:"format"`    // "16-bit" (INA226-class) or "20-bit packed" (INA228-class)
	LSB5VA  float64 `json:"lsb_5v_a"`  // nominal current LSB of the 5 V sensors; each channel is trimmed within ±0.5 %, as the capture header states
	LSB12VA float64 `json:"lsb_12v_a"` // of the 12 V sensors
}

// Calibration is a meter's stated accuracy.
type Calibration struct {
	GainPct  float64 `json:"gain_pct"`  // ± gain error
	OffsetUA float64 `json:"offset_ua"` // ± offset error, drift included
}

// HiddenProfile is the profile name the campaign's drives carry in the
// rig's configuration and the capture header: no profile has it, so the
// analysis cannot look the drive up and must learn it from the samples.
const HiddenProfile = "hidden"

// Replay is the --replay argument that reruns this drive alone.
func (c Case) Replay() string { return fmt.Sprintf("%d:%d", c.Seed, c.Index) }

// DrawCase draws drive index of the campaign with seed. The profile comes
// from its own generator, PCG(seed, index); the hub's policy and seeds from
// PCG(seed, 2^63 + hub), so a drive replays exactly, alone or with its hub.
// The noise family is balanced: each block of 8 drives (8b … 8b+7) has
// every family once, in the order of a permutation from PCG(seed, 3·2^62 +
// b); the family's parameters come from PCG(seed, 2^62 + index), the
// hub's sensors from PCG(seed, 2^61 + hub) (hubSensor).
func DrawCase(seed uint64, index int) Case {
	hub := index / HubSize
	hr := rand.New(rand.NewPCG(seed, 1<<63|uint64(hub)))
	c := Case{Seed: seed, Index: index, Hub: hub, Port: index%HubSize + 1}
	c.Policy = Policies[hr.IntN(len(Policies))]
	c.EmulatorSeed = int64(hr.Uint64() >> 24) // ×100 + port stays inside int64
	c.WorkloadSeed = int64(hr.Uint64() >> 24)
	c.Profile = drawProfile(seed, index)
	c.Family = noiseFamily(seed, index)
	c.Meter = hubSensor(seed, hub)
	nr := rand.New(rand.NewPCG(seed, 1<<62|uint64(index)))
	if err := drivesim.DrawNoise(nr, c.Family, &c.Profile, c.Meter.LSB5VA); err != nil {
		panic(err) // a known family with a sensor: cannot happen
	}
	if c.Family == drivesim.FamilyDrift {
		c.Calibration = &Calibration{GainPct: drivesim.SpaceCalGainPct, OffsetUA: drivesim.SpaceCalOffsetUA}
	}
	return c
}

func drawProfile(seed uint64, index int) drivesim.Profile {
	return drivesim.Draw(rand.New(rand.NewPCG(seed, uint64(index))), fmt.Sprintf("rand-%d-%d", seed, index))
}

// noiseFamily is drive index's noise family.
func noiseFamily(seed uint64, index int) string {
	n := len(drivesim.Families)
	b := index / n
	perm := rand.New(rand.NewPCG(seed, 3<<62|uint64(b))).Perm(n)
	return drivesim.Families[perm[index%n]]
}

// hubSensor draws hub's current sensors. A hub with a drive of the
// quantised family (among drives 4·hub … 4·hub+3) has INA226-class 16-bit
// sensors of a coarse LSB, log-uniform from max(25 µA, its drives' peak
// 5 V current ÷ 32 767) to 50 µA; any other hub INA228-class packed 20-bit
// ones, from max(1 µA, peak ÷ 524 287) to 16 µA. The 12 V sensors keep
// their nominal 100 µA (16-bit) or 10 µA (20-bit).
func hubSensor(seed uint64, hub int) Sensor {
	quant, peak := false, 0.0
	for i := hub * HubSize; i < (hub+1)*HubSize; i++ {
		peak = max(peak, peak5A(drawProfile(seed, i)))
		quant = quant || noiseFamily(seed, i) == drivesim.FamilyQuantised
	}
	peak += 0.02 // the noise on top
	r := rand.New(rand.NewPCG(seed, 1<<61|uint64(hub)))
	logu := func(lo, hi float64) float64 {
		return math.Round(math.Exp(math.Log(lo)+(math.Log(hi)-math.Log(lo))*r.Float64())*1e9) / 1e9 // whole nA
	}
	if quant {
		return Sensor{Format: "16-bit", LSB5VA: logu(max(25e-6, math.Ceil(peak/32767*1e9)/1e9), 50e-6), LSB12VA: 100e-6}
	}
	return Sensor{Format: "20-bit packed", LSB5VA: logu(max(1e-6, math.Ceil(peak/524287*1e9)/1e9), 16e-6), LSB12VA: 10e-6}
}

// peak5A is the highest current a drive draws on 5 V (A).
func peak5A(p drivesim.Profile) float64 {
	on5 := func(w units.Watts) float64 {
		if p.HDD() {
			return float64(w - p.SpindleW)
		}
		return float64(w)
	}
	w := max(on5(p.ActiveIdleW), on5(p.WakeSpikeW), on5(p.GCW), on5(p.PeakWriteW))
	return w / 5
}

// emulator is the hub's rig.EmulatorConfig for its sensors.
func (s Sensor) emulator(seed int64) rig.EmulatorConfig {
	e := rig.EmulatorConfig{Seed: seed}
	if s.Format == "16-bit" {
		e.Formats = hub.FormatBit16
		e.CurrentLSB[0], e.CurrentLSB[1] = units.Amps(s.LSB5VA), units.Amps(s.LSB12VA)
	} else {
		e.WideLSB[0], e.WideLSB[1] = units.Amps(s.LSB5VA), units.Amps(s.LSB12VA)
	}
	return e
}

// ParseReplay parses SEED:INDEX (both decimal, INDEX from 0).
func ParseReplay(s string) (seed uint64, index int, err error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return 0, 0, fmt.Errorf("%q: want SEED:INDEX, e.g. 1:17", s)
	}
	seed, err = strconv.ParseUint(a, 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("%q: seed %q is not a non-negative integer", s, a)
	}
	i, err := strconv.ParseInt(b, 10, 32)
	if err != nil || i < 0 {
		return 0, 0, fmt.Errorf("%q: index %q is not a drive index (0, 1, …)", s, b)
	}
	return seed, int(i), nil
}
