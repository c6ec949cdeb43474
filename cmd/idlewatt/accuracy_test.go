package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAccuracyBadInput(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "accuracy.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"accuracy", "--drives", "0"}, "--drives: 0 drives"},
		{[]string{"accuracy", "--drives", "x"}, "--drives"},
		{[]string{"accuracy", "--seed", "-3"}, "--seed"},
		{[]string{"accuracy", "--parallel", "0"}, "--parallel"},
		{[]string{"accuracy", "--replay", "1"}, "--replay"},
		{[]string{"accuracy", "--replay", "1:2", "--replay", "2:3"}, "share one seed"},
		{[]string{"accuracy", "--out", out}, "accuracy.json: exists"},
		{[]string{"accuracy", "--max-cycles", "3"}, "--max-cycles: 3, want 4"},
		{[]string{"accuracy", "--max-cycles", "1", "--short"}, "--max-cycles: 1, want 2"},
		{[]string{"accuracy", "--max-cycles", "x"}, "--max-cycles"},
	}
	for _, c := range cases {
		_, errOut, code := run(t, context.Background(), c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming %q", c.args, code, errOut, c.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(out, "accuracy.json")); string(b) != "{}" {
		t.Errorf("the existing accuracy.json was touched")
	}
}

// One replayed drive with the short phases, through the command: the
// table on stdout, the files, and exit 1 while goals are missed (0 if the
// estimators ever meet them all on this drive).
func TestAccuracyReplayCommand(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end run on the emulator")
	}
	out := filepath.Join(t.TempDir(), "acc")
	stdout, stderr, code := run(t, context.Background(), "accuracy", "--replay", "9:5", "--short", "--out", out, "--quiet")
	if code != 0 && code != 1 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, s := range []string{"average_w", "DevSlp verdicts: 1 drives", "written to"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("stdout lacks %q:\n%s", s, stdout)
		}
	}
	var c struct {
		Drives   int  `json:"drives"`
		GoalsMet bool `json:"goals_met"`
		Results  []struct {
			Case struct {
				Index int `json:"index"`
			} `json:"case"`
		} `json:"results"`
	}
	b, err := os.ReadFile(filepath.Join(out, "accuracy.json"))
	if err != nil || json.Unmarshal(b, &c) != nil || c.Drives != 1 || len(c.Results) != 1 || c.Results[0].Case.Index != 5 {
		t.Fatalf("accuracy.json: %v %+v", err, c)
	}
	if (code == 0) != c.GoalsMet {
		t.Errorf("exit %d but goals_met %v", code, c.GoalsMet)
	}
	if _, err := os.Stat(filepath.Join(out, "accuracy.md")); err != nil {
		t.Error(err)
	}
}
