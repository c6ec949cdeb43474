package settings

import (
	"fmt"
	"regexp"

	"github.com/idlewatt/idlewatt/internal/suggest"
)

// unknownFlag is pflag's message for a flag the command does not have.
var unknownFlag = regexp.MustCompile(`^unknown (?:shorthand )?flag: '?-{1,2}([^' =]+)`)

// FlagSuggestion is " (did you mean --overwrite?)" for a mistyped flag
// (msg is the flag parser's error) that is close to one of names (the
// command's, inherited and global), as config keys get; "" otherwise.
func FlagSuggestion(msg string, names []string) string {
	m := unknownFlag.FindStringSubmatch(msg)
	if m == nil || len(m[1]) < 2 {
		return ""
	}
	best := suggest.Nearest(m[1], names, func(best string) int { return max(2, len(best)/3) })
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean --%s?)", best)
}

// strconvMsg is what the flag parser passes on from strconv for a
// malformed number.
var strconvMsg = regexp.MustCompile(`strconv\.Parse(Int|Uint|Float|Bool): parsing "[^"]*": (invalid syntax|value out of range)`)

// PlainFlagError says "not an integer" where the flag parser says
// "strconv.ParseInt: parsing "x": invalid syntax".
func PlainFlagError(msg string) string {
	return strconvMsg.ReplaceAllStringFunc(msg, func(m string) string {
		sub := strconvMsg.FindStringSubmatch(m)
		if sub[2] == "value out of range" {
			return "out of range"
		}
		return map[string]string{"Int": "not an integer", "Uint": "not a whole number ≥ 0", "Float": "not a number",
			"Bool": "not a boolean (true or false)"}[sub[1]]
	})
}
