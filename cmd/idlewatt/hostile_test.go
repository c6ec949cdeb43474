package main

// The hostile-input suite (issue 13 item 9): fixtures/hostile/cases.txt
// lists command lines a hostile or careless user might type, each with the
// exit code and a piece of the message it must give. TestHostile runs every
// row through the real idlewatt binary (built once, see idlewattBin) and checks
// the exit code, the message, and that nothing panicked. The file's header
// says how to add a row; docs/reliability.md points here.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// -hostile.bin runs the suite against another build (to count what an
// older idlewatt gets wrong): go test ./cmd/idlewatt -run TestHostile -args -hostile.bin PATH
var (
	hostileBin     = flag.String("hostile.bin", "", "run TestHostile against this idlewatt binary instead of building one")
	hostileTimeout = flag.Duration("hostile.timeout", 2*time.Minute, "TestHostile: kill a case after this long (a failure)")
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// idlewattBin builds cmd/idlewatt once per test run (only when a test needs it)
// and returns its path.
func idlewattBin(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "idlewatt-bin-"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "idlewatt")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// hostileCase is one row of cases.txt.
type hostileCase struct {
	line       int
	name       string
	code       int
	want       string
	env, args  []string
	rawArgs    string
	rawMessage string
}

var caseName = regexp.MustCompile(`^[a-z0-9-]+$`)

// readHostileCases parses cases.txt (format in its header).
func readHostileCases(path string) ([]hostileCase, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []hostileCase
	names := map[string]int{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.SplitN(line, "|", 4)
		if len(fields) != 4 {
			return nil, fmt.Errorf("%s:%d: want 4 fields separated by |, got %d", path, n, len(fields))
		}
		c := hostileCase{line: n, name: strings.TrimSpace(fields[0]), want: strings.TrimSpace(fields[2]),
			rawArgs: strings.TrimSpace(fields[3]), rawMessage: fields[2]}
		if !caseName.MatchString(c.name) {
			return nil, fmt.Errorf("%s:%d: case name %q: want [a-z0-9-]+", path, n, c.name)
		}
		if prev, dup := names[c.name]; dup {
			return nil, fmt.Errorf("%s:%d: case %s already on line %d", path, n, c.name, prev)
		}
		names[c.name] = n
		if c.code, err = strconv.Atoi(strings.TrimSpace(fields[1])); err != nil || c.code < 0 || c.code > 3 {
			return nil, fmt.Errorf("%s:%d: exit code %q: want 0, 1, 2 or 3", path, n, fields[1])
		}
		words, err := splitWords(c.rawArgs)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		for len(words) > 0 && regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`).MatchString(words[0]) {
			c.env, words = append(c.env, words[0]), words[1:]
		}
		if len(words) == 0 {
			return nil, fmt.Errorf("%s:%d: no arguments", path, n)
		}
		c.args = words
		out = append(out, c)
	}
	return out, sc.Err()
}

// splitWords splits on spaces; "double quotes" group words.
func splitWords(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	in, have := false, false
	for _, r := range s {
		switch {
		case r == '"':
			in, have = !in, true
		case r == ' ' && !in:
			if have {
				out = append(out, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteRune(r)
			have = true
		}
	}
	if in {
		return nil, fmt.Errorf("unbalanced quote in %q", s)
	}
	if have {
		out = append(out, cur.String())
	}
	return out, nil
}

// panicSigns are what a panic or an unguarded crash prints.
var panicSigns = []string{"panic:", "goroutine ", "internal error", "[signal "}

func TestHostile(t *testing.T) {
	t.Parallel()
	cases, err := readHostileCases("../../fixtures/hostile/cases.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 50 {
		t.Fatalf("only %d hostile cases: the file was cut", len(cases))
	}
	t.Logf("%d hostile cases", len(cases))
	bin := *hostileBin
	if bin == "" {
		bin = idlewattBin(t)
	}
	hdir, _ := filepath.Abs("../../fixtures/hostile")
	fdir, _ := filepath.Abs("../../fixtures")
	// Every case runs beside files it must not change (victim.txt, the
	// links to it, the inputs themselves): after the last case each of them
	// is as it was, and nothing was added.
	before := fixtureState(t, fdir)
	t.Cleanup(func() {
		after := fixtureState(t, fdir)
		for p, h := range before {
			if after[p] != h {
				t.Errorf("fixtures/%s changed during the hostile cases (was %s, now %q)", p, h, after[p])
			}
		}
		for p := range after {
			if _, ok := before[p]; !ok {
				t.Errorf("fixtures/%s appeared during the hostile cases", p)
			}
		}
	})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tdir := t.TempDir()
			expand := func(s string) string {
				return strings.NewReplacer("$H", hdir, "$F", fdir, "$T", tdir).Replace(s)
			}
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = expand(a)
			}
			ctx, cancel := context.WithTimeout(context.Background(), *hostileTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, args...)
			cmd.Dir = tdir
			cmd.Env = append(cleanEnv(), "TMPDIR="+tdir)
			for _, e := range c.env {
				cmd.Env = append(cmd.Env, expand(e))
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if ctx.Err() != nil {
				t.Fatalf("cases.txt:%d %s: still running after %v (killed)", c.line, c.name, *hostileTimeout)
			}
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatalf("line %d: %v", c.line, err)
			}
			all := stdout.String() + stderr.String()
			where := fmt.Sprintf("cases.txt:%d %s: idlewatt %s", c.line, c.name, c.rawArgs)
			for _, s := range panicSigns {
				if strings.Contains(all, s) {
					t.Errorf("%s: output has %q (a panic?):\n%s", where, s, all)
				}
			}
			if code != c.code {
				t.Errorf("%s: exit %d, want %d\n%s", where, code, c.code, all)
			}
			if w := expand(c.want); w != "" && !strings.Contains(all, w) {
				t.Errorf("%s: output lacks %q:\n%s", where, w, all)
			}
			if c.code != 0 && !strings.HasPrefix(afterNotes(stderr.String()), "idlewatt") {
				t.Errorf("%s: exit %d without an idlewatt: message: %q", where, code, stderr.String())
			}
			if strings.Contains(stderr.String(), "idlewatt: idlewatt ") {
				t.Errorf("%s: the message names idlewatt twice: %q", where, stderr.String())
			}
		})
	}
}

// afterNotes is stderr past the capture notes a command prints before its
// error ("report: note: capture damaged …", docs/cli.md "Damaged
// captures"): the first line of the message proper.
func afterNotes(s string) string {
	for {
		line, rest, ok := strings.Cut(s, "\n")
		if !ok || !regexp.MustCompile(`^[a-z]+: note: `).MatchString(line) {
			return s
		}
		s = rest
	}
}

// fixtureState maps every path under dir (relative) to its content hash,
// or for a symbolic link to its target, without following links.
func fixtureState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&os.ModeSymlink != 0:
			to, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "link → " + to
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fmt.Sprintf("sha256 %x", sha256.Sum256(b))
		case d.IsDir():
			out[rel] = "dir"
		default:
			out[rel] = d.Type().String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// cleanEnv is the test's environment without IDLEWATT_* variables (a
// developer's own settings must not change a case).
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "IDLEWATT_") {
			out = append(out, kv)
		}
	}
	return out
}

func TestReadHostileCasesFormat(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "c.txt")
	os.WriteFile(p, []byte("# comment\n\na-b | 2 | say \"x\" | A_B=1 report \"two words\" $T/x\n"), 0o644)
	cs, err := readHostileCases(p)
	if err != nil || len(cs) != 1 {
		t.Fatalf("%v %v", cs, err)
	}
	c := cs[0]
	if c.name != "a-b" || c.code != 2 || c.want != `say "x"` || len(c.env) != 1 || c.env[0] != "A_B=1" ||
		len(c.args) != 3 || c.args[1] != "two words" {
		t.Errorf("parsed %+v", c)
	}
	for _, bad := range []string{"x | 2 | m", "X | 2 | m | a", "x | 9 | m | a", "x | 2 | m | \"a", "x | 2 | m | A=1"} {
		os.WriteFile(p, []byte(bad+"\n"), 0o644)
		if _, err := readHostileCases(p); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
