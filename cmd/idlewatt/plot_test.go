package main

import (
	"context"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plot's print flags: the image is --width × --dpi pixels wide; bad sizes,
// resolutions and units, and a PNG too big to hold in memory, are usage
// errors naming the flag, and no image is written.
func TestPlotSizeDPIUnitLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path, _ := flushedCapture(t, dir, 4, func(f int) uint64 { return uint64(f) * 1000 })
	out := filepath.Join(dir, "p.png")
	if _, errOut, code := run(t, context.Background(), "plot", path, "--out", out, "--width", "4", "--height", "2.5", "--dpi", "150", "--log", "--unit", "mW"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 600 || b.Dy() != 375 {
		t.Errorf("image %v, want 600 × 375 (4 × 2.5 in at 150 dpi)", b)
	}
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"--dpi", "5"}, "--dpi"},
		{[]string{"--dpi", "2400"}, "--dpi"}, // the chart would silently fall back to 96
		{[]string{"--width", "-1"}, "--width"},
		{[]string{"--height", "1000"}, "--height"},
		{[]string{"--unit", "kW"}, "--unit"},
		{[]string{"--width", "100", "--height", "100", "--dpi", "1200"}, "megapixels"},
		{[]string{"--width", "40", "--dpi", "1200"}, "megapixels"},
	} {
		args := append([]string{"plot", path, "--out", filepath.Join(dir, "bad.png")}, c.args...)
		_, errOut, code := run(t, context.Background(), args...)
		if code != 2 || !strings.Contains(errOut, c.flag) {
			t.Errorf("%v: exit %d, %q; want 2 naming %s", c.args, code, errOut, c.flag)
		}
		if _, err := os.Stat(filepath.Join(dir, "bad.png")); err == nil {
			t.Errorf("%v: wrote an image", c.args)
		}
	}
}
