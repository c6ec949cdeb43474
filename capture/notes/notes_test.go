package notes

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func f(x float64) *float64 { return &x }

// Add appends to the notes file beside the capture and leaves the capture
// alone; Read gives the notes back in time order.
func TestAddRead(t *testing.T) {
	dir := t.TempDir()
	capPath := filepath.Join(dir, "run.iwcap")
	if err := os.WriteFile(capPath, []byte("capture bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ns, err := Read(capPath); err != nil || ns != nil {
		t.Fatalf("no notes file: %v, %v", ns, err)
	}
	if _, err := Add(capPath, Note{AtS: 61.5, Text: "fan <b>on</b> & \"loud\""}); err != nil {
		t.Fatal(err)
	}
	all, err := Add(capPath, Note{AtS: 10, ToS: f(12), Text: "first\nsecond line", Source: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].AtS != 10 || *all[0].ToS != 12 || all[1].Text != "fan <b>on</b> & \"loud\"" {
		t.Errorf("notes %+v", all)
	}
	got, err := Read(capPath)
	if err != nil || len(got) != 2 || got[1].AtS != 61.5 {
		t.Errorf("read back %+v, %v", got, err)
	}
	if b, _ := os.ReadFile(capPath); string(b) != "capture bytes" {
		t.Errorf("the capture changed: %q", b)
	}
	if n := strings.Count(string(must(os.ReadFile(PathFor(capPath)))), "\n"); n != 2 {
		t.Errorf("notes file has %d lines, want 2", n)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// Bad notes and bad files are refused with the file and line; a malformed
// file is not replaced.
func TestRefused(t *testing.T) {
	for _, n := range []Note{{AtS: 1}, {AtS: 1, Text: "  "}, {AtS: 5, ToS: f(5), Text: "x"}, {AtS: 5, ToS: f(4), Text: "x"},
		{AtS: 1, Text: "bell\a"}, {AtS: 1, Text: strings.Repeat("x", MaxText+1)}, {AtS: 1, Text: "\xff"}} {
		if err := Check(n); !errors.Is(err, ErrFormat) {
			t.Errorf("%+v: %v, want ErrFormat", n, err)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{`{"text":"no time"}`, "n.jsonl:1: bad annotation: no at_s"},
		{"\n\n{\"at_s\": 1, \"text\": \"ok\"}\n{\"at_s\": \"x\"}", "n.jsonl:4:"},
		{`{"at_s": 1, "text": "x", "colour": "red"}`, `unknown field "colour"`},
		{`{"at_s": 1, "text": "x"} {"at_s": 2}`, "more than one JSON value"},
		{`[1]`, "n.jsonl:1:"},
	} {
		_, err := Parse(strings.NewReader(tc.in), "n.jsonl")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrFormat) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
	dir := t.TempDir()
	capPath := filepath.Join(dir, "c.iwcap")
	bad := []byte("{\"at_s\": oops}\n")
	os.WriteFile(PathFor(capPath), bad, 0o644)
	if _, err := Add(capPath, Note{AtS: 1, Text: "x"}); err == nil {
		t.Error("Add over a malformed notes file succeeded")
	}
	if b, _ := os.ReadFile(PathFor(capPath)); string(b) != string(bad) {
		t.Errorf("the malformed notes file was replaced: %q", b)
	}
	// A symbolic link as the notes file is not written through.
	os.Remove(PathFor(capPath))
	other := filepath.Join(dir, "other")
	os.WriteFile(other, nil, 0o644)
	os.Symlink(other, PathFor(capPath))
	if _, err := Add(capPath, Note{AtS: 1, Text: "x"}); err == nil {
		t.Error("Add wrote through a symbolic link")
	}
	if b, _ := os.ReadFile(other); len(b) != 0 {
		t.Errorf("the link's target was written: %q", b)
	}
}
