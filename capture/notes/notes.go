package notes

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/idlewatt/idlewatt/internal/outfile"
)

// Suffix is added to a capture's path to name its notes file.
const Suffix = ".notes.jsonl"

// Limits on a notes file: a note's text, a line, the notes in a file.
const (
	MaxText  = 2000
	maxLine  = 16 << 10
	MaxNotes = 10000
)

// ErrFormat is a malformed notes file or note (errors.Is).
var ErrFormat = errors.New("bad annotation")

// Note is one annotation.
type Note struct {
	AtS float64 `json:"at_s"`
	// ToS ends an interval note; nil for a note at one time.
	ToS     *float64 `json:"to_s,omitempty"`
	Text    string   `json:"text"`
	Created string   `json:"created,omitempty"` // RFC 3339, for humans
	Source  string   `json:"source,omitempty"`  // "cli", "live view"
}

// PathFor is the notes file of the capture at path.
func PathFor(capturePath string) string { return capturePath + Suffix }

// Check reports what is wrong with n, if anything.
func Check(n Note) error {
	const maxT = 1e9 // s: about 30 years, as far as any timeline goes
	if math.IsNaN(n.AtS) || math.IsInf(n.AtS, 0) || math.Abs(n.AtS) > maxT {
		return fmt.Errorf("%w: at_s %v is not a time in seconds", ErrFormat, n.AtS)
	}
	if n.ToS != nil {
		if to := *n.ToS; math.IsNaN(to) || math.IsInf(to, 0) || math.Abs(to) > maxT || !(to > n.AtS) {
			return fmt.Errorf("%w: to_s %v is not after at_s %v", ErrFormat, to, n.AtS)
		}
	}
	if strings.TrimSpace(n.Text) == "" {
		return fmt.Errorf("%w: the text is empty", ErrFormat)
	}
	if len(n.Text) > MaxText {
		return fmt.Errorf("%w: the text is %d bytes, at most %d", ErrFormat, len(n.Text), MaxText)
	}
	if !utf8.ValidString(n.Text) {
		return fmt.Errorf("%w: the text is not UTF-8", ErrFormat)
	}
	for i, r := range n.Text {
		if r != '\t' && r != '\n' && (unicode.IsControl(r) || r == '\u2028' || r == '\u2029') {
			return fmt.Errorf("%w: the text has control character %U at byte %d", ErrFormat, r, i)
		}
	}
	for _, s := range []string{n.Created, n.Source} {
		if len(s) > 100 || !utf8.ValidString(s) || strings.IndexFunc(s, unicode.IsControl) >= 0 {
			return fmt.Errorf("%w: created/source %q is not a short line of text", ErrFormat, s)
		}
	}
	return nil
}

// Parse reads a notes file; name is used in errors ("FILE:LINE: …").
// The notes come back in time order (then file order).
func Parse(r io.Reader, name string) ([]Note, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	var out []Note
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if len(out) >= MaxNotes {
			return nil, fmt.Errorf("%s:%d: %w: more than %d notes", name, line, ErrFormat, MaxNotes)
		}
		var n Note
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&n); err != nil {
			return nil, fmt.Errorf("%s:%d: %w: %v", name, line, ErrFormat, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("%s:%d: %w: more than one JSON value on the line", name, line, ErrFormat)
		}
		if !bytes.Contains(b, []byte(`"at_s"`)) {
			return nil, fmt.Errorf("%s:%d: %w: no at_s", name, line, ErrFormat)
		}
		if err := Check(n); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		out = append(out, n)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%s: %w: a line is longer than %d bytes", name, ErrFormat, maxLine)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].AtS < out[j].AtS })
	return out, nil
}

// Read reads the notes of the capture at capturePath: none (and no error)
// when it has no notes file.
func Read(capturePath string) ([]Note, error) {
	path := PathFor(capturePath)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f, path)
}

// Add appends n to the notes of the capture at capturePath (creating the
// notes file), rewriting only the notes file, atomically. It returns the
// capture's notes with n.
func Add(capturePath string, n Note) ([]Note, error) {
	if err := Check(n); err != nil {
		return nil, err
	}
	path := PathFor(capturePath)
	var old []byte
	if _, err := os.Lstat(path); err == nil {
		// Read what is there first: a malformed file is reported, not
		// replaced by one holding only the new note.
		if err := outfile.Check(path, outfile.Options{Overwrite: true, Inputs: []string{capturePath}}); err != nil {
			return nil, err
		}
		if old, err = os.ReadFile(path); err != nil {
			return nil, err
		}
		if _, err := Parse(bytes.NewReader(old), path); err != nil {
			return nil, err
		}
	}
	line, err := json.Marshal(n)
	if err != nil {
		return nil, err
	}
	buf := append([]byte(nil), old...)
	if len(buf) > 0 && buf[len(buf)-1] != '\n' {
		buf = append(buf, '\n')
	}
	buf = append(append(buf, line...), '\n')
	all, err := Parse(bytes.NewReader(buf), path)
	if err != nil {
		return nil, err
	}
	if err := outfile.WriteFile(path, buf, outfile.Options{Overwrite: true, Inputs: []string{capturePath}}); err != nil {
		return nil, err
	}
	return all, nil
}
