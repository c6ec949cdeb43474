package nvme

import (
	"bytes"
	"testing"

	"github.com/idlewatt/idlewatt/internal/testutil"
)

func checkIdentify(t *testing.T, id *Identify) {
	t.Helper()
	if len(id.PowerStates) != id.NPSS+1 || id.NPSS >= maxStates {
		t.Fatalf("npss %d, %d states", id.NPSS, len(id.PowerStates))
	}
	for i, p := range id.PowerStates {
		if p.PS != i || p.RRT > 31 || p.MaxPowerScale > 1 || p.IdleScale > 3 || p.ActiveScale > 3 {
			t.Fatalf("ps %d: %+v", i, p)
		}
	}
}

// realStates holds the real tools' outputs (and ones made from real images)
// the fuzz targets start from.
const realStates = "../../fixtures/real/states"

func FuzzReadCLIText(f *testing.F) {
	testutil.SeedFiles(f, realStates, "nvme/*id-ctrl*", "nvme/*ps-lines*", "made/*.id-ctrl*.txt")
	f.Fuzz(func(t *testing.T, b []byte) {
		if id, err := ReadCLIText(bytes.NewReader(b)); err == nil {
			checkIdentify(t, id)
		}
	})
}

func FuzzReadSmartctl(f *testing.F) {
	testutil.SeedFiles(f, realStates, "nvme/*smartctl*")
	f.Fuzz(func(t *testing.T, b []byte) {
		if id, err := ReadSmartctl(bytes.NewReader(b)); err == nil {
			checkIdentify(t, id)
		}
	})
}

func FuzzReadFeatureText(f *testing.F) {
	testutil.SeedFiles(f, realStates, "made/apst*.txt")
	f.Fuzz(func(t *testing.T, b []byte) {
		if a, err := ReadFeatureText(bytes.NewReader(b)); err == nil && len(a.Entries) != apstEntries {
			t.Fatalf("%d entries", len(a.Entries))
		}
	})
}

// FuzzJSONDialects: every dialect's psds decode within the fields' ranges.
func FuzzJSONDialects(f *testing.F) {
	testutil.SeedFiles(f, realStates, "made/*.json")
	f.Add([]byte(`{"vid":5559,"mn":"WDC","npss":0,"apsta":1,"psds":[{"max_power":35,"flags":3,"entry_lat":4000,"exit_lat":40000,"idle_scale":64,"active_work_scale":130}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if id, err := DecodeIdentifyJSON(b); err == nil {
			checkIdentify(t, id)
		}
	})
}

// FuzzSmartctlJSON: smartctl -j decodes within the fields' ranges and is
// never taken for nvme-cli's JSON nor the reverse.
func FuzzSmartctlJSON(f *testing.F) {
	testutil.SeedFiles(f, realStates, "nvme/*smartctl-j*", "made/*.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		if id, err := DecodeSmartctlJSON(b); err == nil {
			checkIdentify(t, id)
		}
		if sniffSmartctlJSON(b) && SniffIdentify(b) != FormatSmartctlJSON {
			t.Fatalf("smartctl JSON sniffed as %q", SniffIdentify(b))
		}
	})
}
