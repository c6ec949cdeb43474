package trace

// `idlewatt trace info` and `trace convert`, and the trace files `trace
// gen` writes: their settings, declared once, and the checks and writes
// behind them.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/internal/textsafe"
)

// formatFlag says a trace's format where detection should not guess.
var formatFlag = settings.Flag{Name: "format", Kind: settings.String, Help: "trace format (default: detect)"}

// InfoFlags are `trace info`'s settings.
var InfoFlags = []settings.Flag{{Name: "json", Kind: settings.Bool, Help: "print JSON"}, formatFlag}

// ConvertFlags are `trace convert`'s settings.
var ConvertFlags = []settings.Flag{
	{Name: "to", Kind: settings.String, Default: "native", Help: "output format: native, fio2, fio3, blkparse, msr"},
	{Name: "out", Kind: settings.String, Help: "output file ('-' for stdout)"},
	outfile.Flag("OUT", ""),
	{Name: "format", Kind: settings.String, Help: "input format (default: detect)"},
	{Name: "redirect", Kind: settings.String, Help: "name every op's file PATH (like fio's replay_redirect)"},
}

// OpenNamed opens a trace file named on the command line, in the format
// --format names (else detected), stopping when ctx is done; a file that
// does not open or read as a trace is bad input.
func OpenNamed(ctx context.Context, g settings.Getter, path string) (*File, error) {
	var format Format
	if s := g.String("format"); s != "" {
		var err error
		if format, err = ParseFormat(s); err != nil {
			return nil, settings.Usagef("--format: %v", err)
		}
	}
	f, err := OpenCtx(ctx, path, format)
	if err != nil {
		return nil, settings.Input(err)
	}
	return f, nil
}

// Info writes what the trace at path holds (Summarize) to w, as text or
// JSON.
func Info(ctx context.Context, g settings.Getter, path string, w io.Writer) error {
	f, err := OpenNamed(ctx, g, path)
	if err != nil {
		return err
	}
	defer f.Close()
	s, err := Summarize(f)
	if err != nil {
		return settings.Input(err)
	}
	if g.Bool("json") {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			File   string `json:"file"`
			Format Format `json:"format"`
			Stats  *Stats `json:"stats"`
		}{path, f.Format, s})
	}
	fmt.Fprintf(w, "%s (%s)\n%s", textsafe.Terminal(path), f.Format, textsafe.Lines(s.Text()))
	return nil
}

// Convert writes the trace in to --out in --to's format, and says on
// stderr how many ops it wrote (and which the format could not carry).
// oo are the output rules; in is an input.
func Convert(ctx context.Context, g settings.Getter, in string, stdout, stderr io.Writer, oo outfile.Options) error {
	to, err := ParseFormat(g.String("to"))
	if err != nil {
		return settings.Usagef("--to: %v", err)
	}
	out := g.String("out")
	if out == "" {
		return settings.Usagef("trace convert: --out OUT is required")
	}
	// Refused before the input is opened: converting a trace onto itself
	// would read what it is overwriting.
	if out != "-" {
		if err := outfile.Check(out, oo); err != nil {
			return settings.Usagef("trace convert: --out %w", err)
		}
	}
	r, err := OpenNamed(ctx, g, in)
	if err != nil {
		return err
	}
	defer r.Close()
	n, dropped, err := WriteFile(stdout, out, to, r, g.String("redirect"), "converted from "+in, oo)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "%d ops written to %s (%s)", n, textsafe.Terminal(out), to)
	if dropped != "" {
		fmt.Fprintf(stderr, "; %s", textsafe.Terminal(dropped))
	}
	fmt.Fprintln(stderr)
	return nil
}

// WriteFile streams r into path ("-" = stdout) in format to, under o's
// rules (internal/outfile): the trace goes to a temporary file renamed into
// place only when the whole input was read, so a bad input or a full disk
// leaves an old file as it was. n counts the ops written; dropped says how
// many the format could not carry, of which types ("" if none). A refused
// output or a bad input is bad usage (settings.ErrUsage).
func WriteFile(stdout io.Writer, path string, to Format, r Reader, redirect, comment string, o outfile.Options) (n int64, dropped string, err error) {
	out := stdout
	if path != "-" {
		f, oerr := outfile.Create(path, o) // not err: the deferred Commit reads the result
		if oerr != nil {
			if errors.Is(oerr, outfile.ErrRefused) {
				return 0, "", settings.Usagef("--out %w", oerr)
			}
			return 0, "", fmt.Errorf("--out %w", oerr)
		}
		defer f.Abort() // no-op after Commit
		out = f
		defer func() {
			if err == nil {
				if cerr := f.Commit(); cerr != nil {
					err = fmt.Errorf("%w", cerr)
				}
			}
		}()
	}
	w, err := NewWriter(out, to)
	if err != nil {
		return 0, "", settings.Usagef("%v", err)
	}
	w.Comment(comment)
	if n, err = Copy(w, r, redirect); err != nil {
		return n, "", settings.Input(err)
	}
	if err := w.Close(); err != nil {
		return n, "", fmt.Errorf("%s: %v", path, err)
	}
	return n, w.SkippedNote(), nil
}
