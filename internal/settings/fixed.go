package settings

import (
	"strconv"
	"strings"
	"time"
)

// Fixed is a Getter of fixed values by flag name, for tests and callers
// without a command line: a flag absent from the map is unset and reads as
// its zero value, except those given in Defaults. Every flag is one the
// "command" has; a set one counts as given on the command line.
type Fixed struct {
	Values   map[string]string
	Defaults map[string]string
}

func (f Fixed) get(flag string) string {
	if v, ok := f.Values[flag]; ok {
		return v
	}
	return f.Defaults[flag]
}

func (f Fixed) String(flag string) string { return f.get(flag) }
func (f Fixed) Bool(flag string) bool     { b, _ := strconv.ParseBool(f.get(flag)); return b }
func (f Fixed) Int(flag string) (int, error) {
	s := f.get(flag)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, Usagef("%s: %q is not an integer", f.Where(flag), s)
	}
	return n, nil
}
func (f Fixed) Float(flag string) (float64, error) {
	s := f.get(flag)
	if s == "" {
		return 0, nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, Usagef("%s: %q is not a number", f.Where(flag), s)
	}
	return x, nil
}
func (f Fixed) Duration(flag string) (time.Duration, error) {
	s := f.get(flag)
	if s == "" {
		return 0, nil
	}
	d, err := ParseDuration(s)
	if err != nil {
		return 0, Usagef("%s: %v", f.Where(flag), err)
	}
	return d, nil
}
func (f Fixed) List(flag string) []string {
	if s := f.get(flag); s != "" {
		return strings.Split(s, ",")
	}
	return nil
}
func (f Fixed) Ints(flag string) []int {
	var out []int
	for _, s := range f.List(flag) {
		n, _ := strconv.Atoi(s)
		out = append(out, n)
	}
	return out
}
func (f Fixed) Set(flag string) bool     { _, ok := f.Values[flag]; return ok }
func (f Fixed) Changed(flag string) bool { return f.Set(flag) }
func (f Fixed) Has(flag string) bool     { return true }
func (f Fixed) Where(flag string) string { return "--" + flag }
