package emuhub

import (
	"testing"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
	nvmesim "github.com/idlewatt/idlewatt/states/nvme/sim"
)

func TestOptions(t *testing.T) {
	sata := meter.ConstantDrive{V5: 5, I5: 0.3, V12: 12, I12: 0.1}
	nv := NVMeDrive(nvmesim.Profiles()[0], 100000, 7)
	base := hubemu.Options{Seed: 42, DriftPPM: 3, Protocol: 0}

	o := Options(base, []meter.SimDrive{sata, nil, sata})
	if o.Ports != 3 || len(o.Drives) != 3 || o.Rail3V3 {
		t.Fatalf("SATA only: Ports %d, %d drives, Rail3V3 %v; want 3, 3, false", o.Ports, len(o.Drives), o.Rail3V3)
	}
	if o.Drives[0] != sata || o.Drives[1] != Empty || o.Drives[2] != sata {
		t.Errorf("drives %v; want the SATA drive, Empty, the SATA drive", o.Drives)
	}
	if o.Seed != 42 || o.DriftPPM != 3 {
		t.Errorf("Seed %d, DriftPPM %g: the caller's options were not passed through", o.Seed, o.DriftPPM)
	}

	o = Options(base, []meter.SimDrive{nil, nv})
	if !o.Rail3V3 || o.Drives[1] != meter.SimDrive(nv) {
		t.Errorf("an NVMe drive on port 2: Rail3V3 %v, port 2 holds %T; want a 3.3 V rail and the drive", o.Rail3V3, o.Drives[1])
	}
	base.Rail3V3 = true
	if o = Options(base, []meter.SimDrive{sata}); !o.Rail3V3 {
		t.Error("Rail3V3 asked for by the caller was dropped")
	}
}

// TestNewHasTheRails opens the hub New starts with the hub driver: a 3.3 V
// rail (protocol 3) only when a port holds an NVMe drive.
func TestNewHasTheRails(t *testing.T) {
	nv := NVMeDrive(nvmesim.Profiles()[0], 100000, 7)
	for _, tc := range []struct {
		name  string
		ports []meter.SimDrive
		rails int // per port
	}{
		{"sata", []meter.SimDrive{nil, nil}, 2},
		{"nvme", []meter.SimDrive{nil, nv}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := New(hubemu.Options{}, tc.ports)
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			h, err := hub.Open(e.Path(), hub.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			per := map[int]int{}
			for _, c := range h.Info().Channels {
				per[c.Port]++
			}
			if len(per) != len(tc.ports) {
				t.Fatalf("channels on %d ports, want %d: %v", len(per), len(tc.ports), h.Info().Channels)
			}
			for p, n := range per {
				if n != tc.rails {
					t.Errorf("port %d: %d rails, want %d", p, n, tc.rails)
				}
			}
		})
	}
}
