package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMaxCyclesBadInput: devslp.max_cycles below the cycles, a negative
// --max-cycles and a negative devslp.entry_u95 are bad input (exit 2),
// named, before anything is recorded.
func TestMaxCyclesBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	conf := func(name, devslp string) string {
		p := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(p, []byte("meter: {kind: emulator, rate_hz: 1000}\n"+
			"drives: [{name: a, port: 1, profile: jmf667h-128-a19, size_bytes: 16777216}]\n"+
			"workload: {trace: none}\ndevslp: "+devslp+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name, devslp string
		flags        []string
		want         string
	}{
		{"fewer", "{cycles: 4, max_cycles: 2}", nil, "devslp.max_cycles"},
		{"flag-fewer", "{cycles: 4}", []string{"--max-cycles", "3"}, "devslp.max_cycles"},
		{"negative-flag", "{cycles: 4}", []string{"--max-cycles", "-1"}, "--max-cycles"},
		{"not-a-number", "{cycles: 4}", []string{"--max-cycles", "many"}, "max-cycles"},
		{"negative-u95", "{cycles: 4, max_cycles: 8, entry_u95: -1ms}", nil, "devslp.entry_u95"},
	} {
		out := filepath.Join(dir, "out-"+c.name)
		args := append([]string{"devslp", "verify", "--config", conf(c.name, c.devslp), "--out", out, "--quiet"}, c.flags...)
		code, e := runMsg(t, args...)
		t.Logf("%s: %s", c.name, strings.TrimSpace(e))
		if code != 2 || !strings.Contains(e, c.want) {
			t.Errorf("%s: exit %d, %q; want 2 naming %s", c.name, code, strings.TrimSpace(e), c.want)
		}
		if _, err := os.Stat(filepath.Join(out, "capture.iwcap")); err == nil {
			t.Errorf("%s: a capture was recorded for bad input", c.name)
		}
	}
}
