package textsafe

import (
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestTerminal(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"JMF667H 128GB (Toshiba A19)": "JMF667H 128GB (Toshiba A19)",
		"naïve ünïcode, 温度 ✓":         "naïve ünïcode, 温度 ✓",
		`C:\drives`:                   `C:\drives`,
		"a\x1b[2Jb":                   `a\x1b[2Jb`,
		"\x1b]0;owned\x07title":       `\x1b]0;owned\x07title`,
		"line\rover":                  `line\rover`,
		"two\nlines\r\n":              `two\nlines\r\n`,
		"tab\there":                   `tab\there`,
		"nul\x00del\x7f":              `nul\x00del\x7f`,
		"c1 \u009b31m":                `c1 \u009b31m`,
		"bidi \u202eevil":             `bidi \u202eevil`,
		"zw\u200bsp\ufeff":            `zw\u200bsp\ufeff`,
		"ls\u2028ps\u2029":            `ls\u2028ps\u2029`,
		"bad \xff\xfe utf8":           `bad \xff\xfe utf8`,
		"":                            "",
	} {
		if got := Terminal(in); got != want {
			t.Errorf("Terminal(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMarkdown(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"JMF667H 128GB (Toshiba A19)":      "JMF667H 128GB (Toshiba A19)",
		"<script>alert(1)</script>":        "&lt;script&gt;alert(1)&lt;/script&gt;",
		`<img src=x onerror="alert('x')">`: "&lt;img src=x onerror=\"alert('x')\"&gt;",
		"a | b":                            `a \| b`,
		"[click](javascript:alert(1))":     `\[click\](javascript:alert(1))`,
		"*bold* _em_ `code` ~~del~~":       "\\*bold\\* \\_em\\_ \\`code\\` \\~\\~del\\~\\~",
		"AT&T":                             "AT&amp;T",
		"row\nbreak":                       `row\\nbreak`,
		"esc\x1b[31m":                      `esc\\x1b\[31m`,
		`back\slash`:                       `back\\slash`,
		"idle:min_power":                   `idle:min\_power`,
	} {
		if got := Markdown(in); got != want {
			t.Errorf("Markdown(%q) = %q, want %q", in, got, want)
		}
	}
}

// unTerminal undoes Terminal for a string that held no backslash (the test's
// own decoder, written from the package doc, not from write).
func unTerminal(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 >= len(s) {
			return "", false
		}
		switch s[i+1] {
		case 'n', 'r', 't':
			b.WriteByte(map[byte]byte{'n': '\n', 'r': '\r', 't': '\t'}[s[i+1]])
			i++
		case 'x':
			v, err := strconv.ParseUint(s[i+2:i+4], 16, 8)
			if err != nil {
				return "", false
			}
			b.WriteByte(byte(v))
			i += 3
		case 'u':
			v, err := strconv.ParseUint(s[i+2:i+6], 16, 32)
			if err != nil {
				return "", false
			}
			b.WriteRune(rune(v))
			i += 5
		default:
			return "", false
		}
	}
	return b.String(), true
}

// unMarkdown is what a CommonMark renderer makes of inline text without
// syntax: backslash escapes of ASCII punctuation and character references
// become the character.
func unMarkdown(s string) string {
	ents := map[string]string{"&amp;": "&", "&lt;": "<", "&gt;": ">"}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && unicode.IsPunct(rune(s[i+1])) || s[i] == '\\' && i+1 < len(s) && strings.IndexByte("`|~<>", s[i+1]) >= 0 {
			b.WriteByte(s[i+1])
			i++
			continue
		}
		if s[i] == '&' {
			for e, c := range ents {
				if strings.HasPrefix(s[i:], e) {
					b.WriteString(c)
					i += len(e) - 1
					goto next
				}
			}
		}
		b.WriteByte(s[i])
	next:
	}
	return b.String()
}

// checkSafe fails when out holds a character a terminal acts on.
func checkSafe(t *testing.T, in, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Fatalf("%q → %q: not UTF-8", in, out)
	}
	for _, r := range out {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
			t.Fatalf("%q → %q: holds %U", in, out, r)
		}
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain", "a\x1b]0;x\x07b", "\r\n\t\x00\x7f", "\u009b\u202e\ufeff", "\xff\xfe",
		"<script>&\"'</script>", "a|b`c*d_e[f]g~h\\i", "温度", "&amp;", "\\x1b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		term, md := Terminal(s), Markdown(s)
		checkSafe(t, s, term)
		checkSafe(t, s, md)
		checkSafe(t, s, strings.ReplaceAll(Lines(s), "\n", ""))
		if clean(s) && term != s {
			t.Fatalf("Terminal changed a clean string: %q → %q", s, term)
		}
		if !strings.Contains(s, `\`) {
			if back, ok := unTerminal(term); !ok || back != s {
				t.Fatalf("Terminal(%q) = %q does not read back (%q, %v)", s, term, back, ok)
			}
		}
		if strings.ContainsAny(md, "<>") {
			t.Fatalf("Markdown(%q) = %q keeps an HTML special character", s, md)
		}
		for i := 0; i < len(md); i++ {
			if md[i] == '\\' {
				i++ // an escape and what it escapes
				continue
			}
			if strings.IndexByte("`*_[]|~", md[i]) >= 0 {
				t.Fatalf("Markdown(%q) = %q: %q at %d is not escaped", s, md, md[i], i)
			}
		}
		if got := unMarkdown(md); got != term {
			t.Fatalf("Markdown(%q) = %q renders as %q, want Terminal's %q", s, md, got, term)
		}
	})
}

func BenchmarkTerminalClean(b *testing.B) {
	s := "JMF667H 128GB (Toshiba A19)"
	b.ReportAllocs()
	for range b.N {
		_ = Terminal(s)
	}
}

func TestLinesAndWriter(t *testing.T) {
	t.Parallel()
	if got, want := Lines("first \x1b[31m\nsecond\r"), "first \\x1b[31m\nsecond\\r"; got != want {
		t.Errorf("Lines = %q, want %q", got, want)
	}
	var b strings.Builder
	w := NewWriter(&b)
	msg := "set policy min_power on \x1b]0;x\x07 温度\n"
	for i := 0; i < len(msg); i++ { // byte by byte: runes split across writes
		if n, err := w.Write([]byte{msg[i]}); n != 1 || err != nil {
			t.Fatalf("Write: %d, %v", n, err)
		}
	}
	if got, want := b.String(), "set policy min_power on \\x1b]0;x\\x07 温度\n"; got != want {
		t.Errorf("Writer wrote %q, want %q", got, want)
	}
}

func TestClip(t *testing.T) {
	if got := Clip("short", 10); got != "short" {
		t.Errorf("Clip(short) = %q", got)
	}
	if got := Clip("abcdefgh", 4); got != "abcd…(4 more bytes)" {
		t.Errorf("Clip = %q", got)
	}
	if got := Clip("aé", 2); got != "a…(2 more bytes)" { // é is 2 bytes: not cut in half
		t.Errorf("Clip across a rune = %q", got)
	}
}
