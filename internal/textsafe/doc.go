// Package textsafe makes strings that come from users, files and devices —
// drive names, notes, phase names, file names, a meter's identity — safe to
// show, in one place, so that every output escapes them the same way
// (issue 26 item 6).
//
// # Terminal
//
// Terminal shows every character that a terminal would act on instead of
// print as an escape: C0 controls and DEL as \n, \r, \t or \x1b; C1
// controls (U+0080–U+009F, which some terminals take as CSI and OSC) as
// \u009b; Unicode format characters (bidirectional overrides such as
// U+202E, zero-width characters, U+FEFF) and the line and paragraph
// separators U+2028 and U+2029 as \u202e; bytes that are not UTF-8 as
// \xff. A drive name holding "\x1b]0;owned\x07" then changes no window
// title and "a\rb" overwrites nothing. A backslash stays as it is (names
// such as `C:\drives` read as written), so the escapes are for a reader,
// not a decoder.
//
// # Markdown
//
// Markdown is Terminal's escaping plus what Markdown and the HTML inside
// it would interpret: &, <, >, " and ' as character references (&lt;script&gt;
// is text, never an element), and \ ` * _ [ ] | ~ behind a backslash (no
// emphasis, link, code span or extra table cell). A control character's
// escape keeps its backslash visible (\\x1b renders as \x1b). The result
// is inline text for a paragraph, a list item, a heading or a table cell:
// a line break never ends the row.
//
// # Where it sits
//
// A leaf (rank 0) that imports nothing of the project; report and
// cmd/idlewatt import it.
package textsafe
