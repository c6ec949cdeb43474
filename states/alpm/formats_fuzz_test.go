package alpm

import (
	"bytes"
	"testing"

	"github.com/idlewatt/idlewatt/internal/testutil"
)

// realStates holds the real tools' outputs (and ones made from real images)
// the fuzz targets start from.
const realStates = "../../fixtures/real/states"

func FuzzReadHdparm(f *testing.F) {
	testutil.SeedFiles(f, realStates, "sata/*hdparm*", "made/*hdparm*")
	f.Fuzz(func(t *testing.T, b []byte) {
		ds, err := ReadHdparm(bytes.NewReader(b))
		if err != nil {
			return
		}
		if len(ds) != 1 || ds[0].Identify == nil {
			t.Fatalf("%d drives", len(ds))
		}
		if lp := ds[0].LogPage; lp != nil && (lp.MDATms > 31 || lp.DETOms > 255) {
			t.Fatalf("log page %+v", lp)
		}
	})
}

func FuzzReadCrystalDiskInfo(f *testing.F) {
	testutil.SeedFiles(f, realStates, "sata/*crystal*")
	f.Fuzz(func(t *testing.T, b []byte) {
		ds, err := ReadCrystalDiskInfo(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, d := range ds {
			if d.Identify == nil && d.Skipped == "" {
				t.Fatal("a drive with neither IDENTIFY nor a reason")
			}
		}
	})
}

func FuzzReadSmartctlATA(f *testing.F) {
	testutil.SeedFiles(f, realStates, "sata/*smartctl*")
	f.Fuzz(func(t *testing.T, b []byte) {
		if ds, err := ReadSmartctlATA(bytes.NewReader(b)); err == nil && (len(ds) != 1 || ds[0].Identify.Known("hipm")) {
			t.Fatal("smartctl gave HIPM")
		}
	})
}

func FuzzParseIdentifyFile(f *testing.F) {
	testutil.SeedFiles(f, realStates, "sata/*", "made/sata*")
	f.Fuzz(func(t *testing.T, b []byte) {
		ds, _, err := ParseIdentifyFile(b)
		if err == nil && len(ds) == 0 {
			t.Fatal("no drive and no error")
		}
	})
}
