package notes

// `idlewatt annotate`: its settings, declared once, and the note they
// make or the notes they list.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/settings"
)

// Flags are `idlewatt annotate`'s settings.
var Flags = []settings.Flag{
	{Name: "at", Kind: settings.Duration, Help: "the note's time T on the report's timeline, a duration with its unit (12.5s)"},
	{Name: "to", Kind: settings.Duration, Help: "end of the noted interval (after --at)"},
	{Name: "text", Kind: settings.String, Help: "the note (up to 2000 bytes of text)"},
	{Name: "list", Kind: settings.Bool, Help: "print the capture's notes instead"},
	{Name: "json", Kind: settings.Bool, Help: "with --list: as JSON"},
}

// Annotate adds the note the settings ask for to the capture at path, or
// with --list writes its notes to w; it says what it did on w. A note
// beside anything but a capture would never be shown: path must open as
// one.
func Annotate(g settings.Getter, path string, w io.Writer) error {
	r, err := capture.Open(path)
	if err != nil {
		return settings.Input(fmt.Errorf("annotate: %w", err))
	}
	r.Close()
	if g.Bool("list") {
		return list(g, path, w)
	}
	if !g.Set("at") {
		return settings.Usagef("annotate: --at T is required (or --list)")
	}
	at, err := g.Duration("at")
	if err != nil {
		return err
	}
	n := Note{AtS: at.Seconds(), Text: g.String("text"), Created: time.Now().UTC().Format(time.RFC3339), Source: "cli"}
	if g.Set("to") {
		to, err := g.Duration("to")
		if err != nil {
			return err
		}
		if to <= at {
			return settings.Usagef("annotate: --to %g s is not after --at %g s", to.Seconds(), at.Seconds())
		}
		t := to.Seconds()
		n.ToS = &t
	}
	if err := Check(n); err != nil {
		return settings.Usagef("annotate: --text: %v", err)
	}
	all, err := Add(path, n)
	switch {
	case errors.Is(err, ErrFormat):
		return settings.Input(fmt.Errorf("annotate: %w (fix or remove it; the note was not added)", err))
	case errors.Is(err, outfile.ErrRefused):
		return settings.Usagef("annotate: %v", err)
	case err != nil:
		return fmt.Errorf("annotate: %v", err)
	}
	fmt.Fprintf(w, "%s: %s (%d notes)\n", PathFor(path), n.Line(), len(all))
	return nil
}

// list writes the capture's notes, as lines or JSON.
func list(g settings.Getter, path string, w io.Writer) error {
	if g.Set("at") || g.Set("to") || g.Set("text") {
		return settings.Usagef("annotate: --list takes no --at, --to or --text")
	}
	ns, err := Read(path)
	if err != nil {
		return settings.Input(fmt.Errorf("annotate: %w", err))
	}
	if g.Bool("json") {
		if ns == nil {
			ns = []Note{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(ns)
	}
	for _, n := range ns {
		fmt.Fprintln(w, n.Line())
	}
	return nil
}

// Line is the note as one line: `90 s: "text"` or `90–95 s: "text"`.
func (n Note) Line() string {
	at := fmt.Sprintf("%g s", n.AtS)
	if n.ToS != nil {
		at = fmt.Sprintf("%g–%g s", n.AtS, *n.ToS)
	}
	return fmt.Sprintf("%s: %q", at, n.Text)
}
