package alpm

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func realSeeds(f *testing.F, globs ...string) {
	for _, g := range globs {
		files, _ := filepath.Glob(filepath.Join("../../fixtures/real/states", g))
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
}

func FuzzReadHdparm(f *testing.F) {
	realSeeds(f, "sata/*hdparm*", "made/*hdparm*")
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
	realSeeds(f, "sata/*crystal*")
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
	realSeeds(f, "sata/*smartctl*")
	f.Fuzz(func(t *testing.T, b []byte) {
		if ds, err := ReadSmartctlATA(bytes.NewReader(b)); err == nil && (len(ds) != 1 || ds[0].Identify.Known("hipm")) {
			t.Fatal("smartctl gave HIPM")
		}
	})
}

func FuzzParseIdentifyFile(f *testing.F) {
	realSeeds(f, "sata/*", "made/sata*")
	f.Fuzz(func(t *testing.T, b []byte) {
		ds, _, err := ParseIdentifyFile(b)
		if err == nil && len(ds) == 0 {
			t.Fatal("no drive and no error")
		}
	})
}
