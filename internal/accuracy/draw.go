package accuracy

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/idlewatt/idlewatt/states/drivesim"
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
	Policy       string           `json:"policy"`
	EmulatorSeed int64            `json:"emulator_seed"` // the hub's; the drive model's noise seed is ×100 + port
	WorkloadSeed int64            `json:"workload_seed"`
	Profile      drivesim.Profile `json:"profile"`
}

// Replay is the --replay argument that reruns this drive alone.
func (c Case) Replay() string { return fmt.Sprintf("%d:%d", c.Seed, c.Index) }

// DrawCase draws drive index of the campaign with seed. The profile comes
// from its own generator, PCG(seed, index); the hub's policy and seeds from
// PCG(seed, 2^63 + hub), so a drive replays exactly, alone or with its hub.
func DrawCase(seed uint64, index int) Case {
	hub := index / HubSize
	hr := rand.New(rand.NewPCG(seed, 1<<63|uint64(hub)))
	c := Case{Seed: seed, Index: index, Hub: hub, Port: index%HubSize + 1}
	c.Policy = Policies[hr.IntN(len(Policies))]
	c.EmulatorSeed = int64(hr.Uint64() >> 24) // ×100 + port stays inside int64
	c.WorkloadSeed = int64(hr.Uint64() >> 24)
	pr := rand.New(rand.NewPCG(seed, uint64(index)))
	c.Profile = drivesim.Draw(pr, fmt.Sprintf("rand-%d-%d", seed, index))
	return c
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
