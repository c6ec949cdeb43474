package report

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/capture/notes"
)

// A drive name is the user's (--drive-name, drives[].name) or a capture's:
// "a\nb" split every table row it was in, "|" added a cell.
func TestMarkdownNameCells(t *testing.T) {
	r := smallReport(t)
	r.Drives[0].Name = "SSD\nline two | pipe"
	var b bytes.Buffer
	WriteMarkdown(&b, r)
	md := b.String()
	if !strings.Contains(md, `| SSD\\nline two \| pipe |`) {
		t.Errorf("the name is not one escaped cell:\n%s", md)
	}
	for i, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "line two") {
			t.Errorf("line %d begins with the name's second line: %q", i+1, l)
		}
	}
}

// Annotations are listed with their text made inert; a report of an
// interval says so first.
func TestMarkdownAnnotationsAndInterval(t *testing.T) {
	to := 42.0
	r := &analysis.Report{Interval: &analysis.IntervalReport{FromS: 10, ToS: 20},
		Annotations: []notes.Note{{AtS: 12.5, Text: "fan <script>x</script> [link](http://e) | *b*\nnext"}, {AtS: 40, ToS: &to, Text: "door", Source: "cli"}}}
	var b strings.Builder
	WriteMarkdown(&b, r)
	md := b.String()
	if !strings.Contains(md, "**This report covers only 10–20 s of the capture**") || strings.Index(md, "covers only") > strings.Index(md, "## Summary") {
		t.Errorf("no interval line before the summary:\n%s", md)
	}
	want := `| 12.5 | – | fan &lt;script&gt;x&lt;/script&gt; \[link\](http://e) \| \*b\*\\nnext |  |` // internal/textsafe: the line break shown as \n, the link inert
	if !strings.Contains(md, want) {
		t.Errorf("annotation row missing or not escaped; want %q in:\n%s", want, md)
	}
	if !strings.Contains(md, "| 40 | 42 | door | cli |") {
		t.Errorf("interval annotation row missing:\n%s", md)
	}
}

// TestMarkdownEscapesHTML: a drive name, a phase, a note or a capture's
// file name with HTML in it is text in report.md, never an element (a
// report.md viewed in a browser ran "<script>" and "<img onerror>").
func TestMarkdownEscapesHTML(t *testing.T) {
	r := smallReport(t)
	r.Drives[0].Name = "<script>alert(1)</script>"
	r.Capture.Path = "runs/<img src=x onerror=alert(2)>.iwcap"
	r.Capture.MeterModel = "hub\x1b]0;owned\x07"
	r.Notes = append(r.Notes, `drive "<img src=x onerror=alert(3)>": [link](javascript:alert(4))`)
	if len(r.Drives[0].Phases) > 0 {
		r.Drives[0].Phases[0].Name = "<b>phase</b>"
	}
	var b bytes.Buffer
	WriteMarkdown(&b, r)
	md := b.String()
	for _, bad := range []string{"<script", "<img", "<b>", "[link](", "\x1b"} {
		if strings.Contains(md, bad) {
			t.Errorf("report.md holds %q raw:\n%s", bad, md)
		}
	}
	for _, want := range []string{"| &lt;script&gt;alert(1)&lt;/script&gt; |", "Capture runs/&lt;img src=x onerror=alert(2)&gt;.iwcap",
		"hub\\\\x1b\\]0;owned\\\\x07", "- drive \"&lt;img src=x onerror=alert(3)&gt;\": \\[link\\](javascript:alert(4))"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
}

// smallReport reads fixtures/reports/small/report.json afresh, for a test
// to edit.
func smallReport(t *testing.T) *analysis.Report {
	t.Helper()
	f, err := os.Open("../fixtures/reports/small/report.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := analysis.ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
