package main

import (
	"context"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

func TestBenchConsistencyChart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	chartPath := filepath.Join(dir, "iops.png")
	o, e, code := run(t, context.Background(), "bench", "--target", filepath.Join(dir, "t.img"), "--size", "8MiB",
		"--pattern", "consistency", "--qd", "4", "--duration", "1500ms", "--chart", chartPath)
	if code != 0 {
		t.Fatalf("bench: exit %d\n%s%s", code, o, e)
	}
	f, err := os.Open(chartPath)
	if err != nil {
		t.Fatalf("no chart: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("chart is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 300 || b.Dy() < 150 {
		t.Errorf("chart is %v", b)
	}
}
