package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestHubInfoFullScale (issue 29): `hub info` on a protocol 2 hub states
// the agreed sample format and each channel's full scale in it; the largest
// is the max_current_a that --json (meter.Info, computed by the hub
// driver) reports. It printed LSB × 32767 whatever the format: 262 mA for
// a 20-bit hub that recorded 517 mA.
func TestHubInfoFullScale(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("live pty test")
	}
	port := startEmulate(t, "hub", "emulate", "--ports", "2")
	out, e, code := run(t, context.Background(), "hub", "info", "--port", port)
	if code != 0 {
		t.Fatalf("hub info: exit %d: %s", code, e)
	}
	if !strings.Contains(out, "samples:   20-bit packed (full scale 524287 counts)") {
		t.Fatalf("no 20-bit format line:\n%s", out)
	}
	js, e, code := run(t, context.Background(), "hub", "info", "--port", port, "--json")
	if code != 0 {
		t.Fatalf("hub info --json: exit %d: %s", code, e)
	}
	var info struct {
		MaxCurrentA float64 `json:"max_current_a"`
	}
	if err := json.Unmarshal([]byte(js), &info); err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`full scale ([0-9.]+) (m?A)\n`)
	var largest float64
	n := 0
	for _, m := range line.FindAllStringSubmatch(out, -1) {
		v, _ := strconv.ParseFloat(m[1], 64)
		if m[2] == "mA" {
			v /= 1000
		}
		largest = max(largest, v)
		n++
	}
	if n != 4 {
		t.Fatalf("%d channel lines, want 4:\n%s", n, out)
	}
	if d := largest - info.MaxCurrentA; d > 0.001*info.MaxCurrentA || d < -0.001*info.MaxCurrentA {
		t.Errorf("largest full scale %.4g A in the table, max_current_a %.4g A", largest, info.MaxCurrentA)
	}
	if info.MaxCurrentA < 1 {
		t.Errorf("max_current_a %.4g A: a 20-bit full scale of an 8 µA LSB is about 4 A", info.MaxCurrentA)
	}
}
