package nvme_test

import (
	"fmt"

	"github.com/idlewatt/idlewatt/states/nvme"
)

// The table the kernel programs for a drive whose PS3 and PS4 are
// non-operational, under the default nvme_core parameters and a device
// latency tolerance of 100000 µs, then of 5500 µs.
func ExamplePlanAPST() {
	id := &nvme.Identify{APSTA: true, NPSS: 4, PowerStates: []nvme.PowerState{
		{PS: 0}, {PS: 1}, {PS: 2},
		{PS: 3, NonOperational: true, EntryLatencyUs: 2000, ExitLatencyUs: 2000},
		{PS: 4, NonOperational: true, EntryLatencyUs: 15000, ExitLatencyUs: 15000},
	}}
	for _, tol := range []uint64{100000, 5500} {
		p := nvme.PlanAPST(id, tol, 0, nvme.ModuleParams{})
		fmt.Printf("tolerance %d µs:", tol)
		for _, s := range nvme.Reached(p.Entries, 0) {
			fmt.Printf(" → PS%d after %d ms", s.ITPS, s.ITPTms)
		}
		fmt.Println()
		fmt.Println("  PS4:", p.States[4].Reason)
	}
	// Output:
	// tolerance 100000 µs: → PS3 after 100 ms → PS4 after 2000 ms
	//   PS4: target after 2000 ms idle (entry+exit 30000 µs)
	// tolerance 5500 µs: → PS3 after 100 ms
	//   PS4: exit latency 15000 µs > latency tolerance 5500 µs
}
