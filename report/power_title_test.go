package report

import (
	"testing"

	"github.com/idlewatt/idlewatt/analysis"
)

// power.png is titled with what was measured, never a file name.
func TestPowerTitleNamesTheDrives(t *testing.T) {
	title, sub := PowerTitle([]string{"A", "B"}, analysis.CaptureInfo{Created: "2026-12-01T08:00:00Z", MeterKind: "hub", MeterModel: "x", RateHz: 10000})
	if title != "Power over Time: A and B" || sub != "run of 2026-12-01T08:00:00Z · meter hub x at 10000 S/s" {
		t.Errorf("%q / %q", title, sub)
	}
	if title, _ := PowerTitle([]string{"A", "B", "C"}, analysis.CaptureInfo{}); title != "Power over Time: 3 drives" {
		t.Errorf("%q", title)
	}
	if title, sub := PowerTitle([]string{"A"}, analysis.CaptureInfo{}); title != "Power over Time: A" || sub != "" {
		t.Errorf("%q / %q", title, sub)
	}
}
