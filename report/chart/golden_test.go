package chart

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/idlewatt/idlewatt/internal/testutil"
)

// gonum.org/v1/plot/cmpimg would be the natural comparer, but it imports
// rsc.io/pdf, which is not in this module's go.sum; this is the same check
// for PNG (decode, compare pixels with a small tolerance) in a few lines.

// go test ./report/chart -update rewrites testdata/*_golden.png from the
// current code (testutil.Update).

// checkGolden renders f as PNG and compares it with testdata/name_golden.png.
// On a mismatch the new image is left in testdata/name_got.png to look at.
func checkGolden(t *testing.T, name string, f *Figure) {
	t.Helper()
	var buf bytes.Buffer
	if err := f.Write(&buf, "png"); err != nil {
		t.Fatalf("%s: render: %v", name, err)
	}
	golden := filepath.Join("testdata", name+"_golden.png")
	got := filepath.Join("testdata", name+"_got.png")
	if *testutil.Update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Remove(got)
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%s: %v (run go test -update to create it)", name, err)
	}
	if ok, why := samePNG(buf.Bytes(), want); !ok {
		_ = os.WriteFile(got, buf.Bytes(), 0o644)
		t.Errorf("%s: differs from %s: %s; new image in %s (go test -update to accept)", name, golden, why, got)
		return
	}
	os.Remove(got)
}

// samePNG reports whether two PNGs show the same picture: same size, and no
// pixel channel off by more than 24/255 except on at most 0.1 % of pixels.
// The slack absorbs anti-aliasing differences from fused multiply-add on
// other architectures; a moved line, label or colour still fails.
func samePNG(a, b []byte) (bool, string) {
	ia, err := png.Decode(bytes.NewReader(a))
	if err != nil {
		return false, "got: " + err.Error()
	}
	ib, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return false, "golden: " + err.Error()
	}
	if ia.Bounds() != ib.Bounds() {
		return false, "size " + ia.Bounds().String() + " vs " + ib.Bounds().String()
	}
	r := ia.Bounds()
	bad := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if !near(ia, ib, x, y) {
				bad++
			}
		}
	}
	if limit := r.Dx() * r.Dy() / 1000; bad > limit {
		return false, itoa(bad) + " pixels differ (limit " + itoa(limit) + ")"
	}
	return true, ""
}

func near(a, b image.Image, x, y int) bool {
	r1, g1, b1, a1 := a.At(x, y).RGBA()
	r2, g2, b2, a2 := b.At(x, y).RGBA()
	d := func(u, v uint32) bool {
		if u > v {
			u, v = v, u
		}
		return v-u <= 24*257
	}
	return d(r1, r2) && d(g1, g2) && d(b1, b2) && d(a1, a2)
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}
