package hexdump

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func FuzzParse(f *testing.F) {
	for _, g := range []string{"*.xxd*", "*.hexdump-C", "*.od-*", "apst.get-feature.txt"} {
		files, _ := filepath.Glob(filepath.Join("../../fixtures/real/states/made", g))
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Parse(bytes.NewReader(b))
		if err != nil {
			return
		}
		if len(d.Bytes) == 0 || len(d.Bytes) > MaxBytes {
			t.Fatalf("%d bytes", len(d.Bytes))
		}
	})
}
