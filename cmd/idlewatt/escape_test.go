package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/idlewatt/idlewatt/analysis/synthcap"
)

// hostileName is a drive name that would retitle the terminal window (OSC),
// clear the screen (CSI), overwrite its line (CR) and start a fake one (LF),
// and run a script in a Markdown viewer.
const hostileName = "evil\x1b]0;owned\x07\x1b[2J\rFAKE\nnote: all good <script>alert(1)</script><img src=x onerror=alert(2)>"

// writeNamedCapture writes a short synthetic capture whose drive on port 1
// is called name.
func writeNamedCapture(t *testing.T, path, name string) {
	t.Helper()
	s := synthcap.Scenario{RateHz: 1000, Duration: 2 * time.Second, Seed: 1,
		Drives: []synthcap.Drive{{Port: 1, Name: name, IdleW: 0.4, BusyW: 2}}}
	if err := synthcap.Write(path, s); err != nil {
		t.Fatal(err)
	}
}

// rawControls returns the control and format characters in s other than
// the line breaks that end its lines.
func rawControls(s string) []rune {
	var out []rune
	for _, r := range s {
		if r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r)) {
			out = append(out, r)
		}
	}
	return out
}

// TestUserStringsEscaped: a drive name with ESC/OSC sequences, CR, LF and
// HTML reaches the terminal with its control characters shown (\x1b, \r,
// \n), on one line, and report.md with its HTML as text — the headline
// table too, not only the notes.
func TestUserStringsEscaped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	capt := filepath.Join(dir, "c.iwcap")
	writeNamedCapture(t, capt, hostileName)
	out, errOut, code := run(t, context.Background(), "report", capt, "--out", filepath.Join(dir, "r"), "--no-html")
	if code != 0 {
		t.Fatalf("report: exit %d\n%s%s", code, out, errOut)
	}
	all := out + errOut
	if c := rawControls(all); len(c) > 0 {
		t.Errorf("the terminal got raw control characters %q:\n%q", c, all)
	}
	if strings.Contains(all, "\nFAKE") || strings.Contains(all, "\nnote: all good") {
		t.Errorf("the name started a line of its own:\n%s", all)
	}
	if !strings.Contains(out, `evil\x1b]0;owned\x07\x1b[2J\rFAKE\nnote: all good`) {
		t.Errorf("the headline does not show the name escaped:\n%s", out)
	}
	md, err := os.ReadFile(filepath.Join(dir, "r", "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<script", "<img", "\x1b", "\r"} {
		if strings.Contains(string(md), bad) {
			t.Errorf("report.md holds %q raw", bad)
		}
	}
	if !strings.Contains(string(md), "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;") {
		t.Errorf("report.md does not show the name's HTML as text:\n%.2000s", md)
	}
	// The same name through plot's and export's notes and the error path.
	_, errOut, _ = run(t, context.Background(), "plot", capt, "--out", filepath.Join(dir, "p.png"))
	if c := rawControls(errOut); len(c) > 0 {
		t.Errorf("plot's stderr got raw control characters %q", c)
	}
	if _, e, code := run(t, context.Background(), "report", filepath.Join(dir, "no\x1b[2Jsuch.iwcap")); code != 2 || len(rawControls(e)) > 0 {
		t.Errorf("an error naming a file with ESC in its name: exit %d, %q", code, e)
	}
}
