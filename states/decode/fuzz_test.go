package decode

import (
	"os"
	"path/filepath"
	"testing"
)

func seeds(f *testing.F) {
	for _, g := range []string{real + "/nvme/*", real + "/sata/*", real + "/made/*"} {
		files, _ := filepath.Glob(g)
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
}

// FuzzBytes: no input panics; what decodes prints.
func FuzzBytes(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Bytes(b)
		if err != nil {
			return
		}
		r.File = "fuzz"
		var sink discard
		if err := r.WriteText(&sink); err != nil {
			t.Fatal(err)
		}
		if r.NVMe != nil && len(r.NVMe.PowerStates) != r.NVMe.NPSS+1 {
			t.Fatalf("npss %d, %d states", r.NVMe.NPSS, len(r.NVMe.PowerStates))
		}
		if r.APST != nil && len(r.APST.Entries) != 32 {
			t.Fatalf("%d APST entries", len(r.APST.Entries))
		}
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
