package textsafe

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Terminal returns s with every control, format and separator character
// shown as an escape (see the package doc). s comes back unchanged (and
// unallocated) when it holds none.
func Terminal(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	write(&b, s, false)
	return b.String()
}

// Lines is Terminal for text of several lines (a message that errors.Join
// put together): each line's characters are escaped, the line breaks ("\n")
// between them kept.
func Lines(s string) string {
	if clean(strings.ReplaceAll(s, "\n", " ")) {
		return s
	}
	parts := strings.Split(s, "\n")
	for i, p := range parts {
		parts[i] = Terminal(p)
	}
	return strings.Join(parts, "\n")
}

// Writer escapes what is written through it as Lines does, for a stream of
// log lines from a library (what a run sets and restores, its progress
// lines). A character split across two writes is held until it is whole.
type Writer struct {
	w    io.Writer
	part []byte // an incomplete UTF-8 sequence at the end of the last write
}

// NewWriter returns a Writer onto w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write escapes p and writes it; it reports len(p) written when the
// escaped bytes were.
func (x *Writer) Write(p []byte) (int, error) {
	b := append(x.part, p...)
	x.part = nil
	// Hold back an incomplete sequence at the end (at most 3 bytes).
	for k := 1; k <= 3 && k <= len(b); k++ {
		c := b[len(b)-k]
		if c < utf8.RuneSelf {
			break
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-k:]) {
				x.part = append([]byte(nil), b[len(b)-k:]...)
				b = b[:len(b)-k]
			}
			break
		}
	}
	if _, err := io.WriteString(x.w, Lines(string(b))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Markdown returns s as inline Markdown text that renders as s reads, with
// Terminal's escapes for the characters a terminal would act on.
func Markdown(s string) string {
	if clean(s) && !strings.ContainsAny(s, mdSpecial) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	write(&b, s, true)
	return b.String()
}

// mdSpecial are the ASCII characters Markdown escapes: HTML's three that
// matter in text (quotes matter only inside an attribute, and Markdown
// text is never one) and Markdown's inline syntax.
const mdSpecial = "&<>\\`*_[]|~"

// clean reports whether s is valid UTF-8 with nothing Terminal escapes.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f {
			return false
		}
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 || escaped(r) {
				return false
			}
			i += n - 1
		}
	}
	return true
}

// escaped says whether Terminal escapes the (valid, non-ASCII or ASCII
// control) rune r.
func escaped(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Cf, r)
}

func write(b *strings.Builder, s string, md bool) {
	bs := `\`
	if md {
		bs = `\\` // the escape's backslash, itself escaped so that it shows
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(b, "%sx%02x", bs, s[i])
		case r == '\n':
			b.WriteString(bs + "n")
		case r == '\r':
			b.WriteString(bs + "r")
		case r == '\t':
			b.WriteString(bs + "t")
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(b, "%sx%02x", bs, r)
		case escaped(r):
			fmt.Fprintf(b, "%su%04x", bs, r)
		case md && r < utf8.RuneSelf && strings.IndexByte(mdSpecial, byte(r)) >= 0:
			switch r {
			case '&':
				b.WriteString("&amp;")
			case '<':
				b.WriteString("&lt;")
			case '>':
				b.WriteString("&gt;")
			default:
				b.WriteByte('\\')
				b.WriteRune(r)
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
}

// Clip returns s cut to at most n bytes (at a rune boundary) with "…" and
// the length left out appended, for quoting a user's value in a message
// without repeating all of it.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return fmt.Sprintf("%s…(%d more bytes)", s[:i], len(s)-i)
}
