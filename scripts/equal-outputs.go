//go:build ignore

// equal-outputs runs two idlewatt binaries on the same inputs and reports
// every difference in what they print and write: the check that a
// restructure changed no behaviour (issue 28).
//
//	go run scripts/equal-outputs.go [-j 2] [-only REGEXP] [-extra CAPTURE...] BEFORE AFTER
//
// It runs, with each binary, in a fresh directory of its own:
//   - every row of fixtures/hostile/cases.txt (the hostile-input suite),
//   - report, export --csv and plot of every capture under fixtures/ and of
//     each -extra capture (a demo's capture.iwcap, say),
//   - --help of every command and subcommand,
//
// and compares exit code, stdout, stderr and every file written, with each
// run's own directory spelled $T so that paths compare equal. BEFORE runs
// twice: an output that differs between its own two runs (a wall time, a
// pid, a recording's bytes) is unstable and not compared; the count of
// those is printed. Progress lines are left out of stderr. It prints one
// DIFF line per difference (with the first differing line) and "equal" or
// "N differences" last; it exits 1 when anything differs.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

type job struct {
	name string
	env  []string
	args []string // $H, $F, $T expanded per run
}

type result struct {
	code           int
	stdout, stderr string
	files          map[string][]byte
}

var (
	workers = flag.Int("j", 2, "jobs at once")
	only    = flag.String("only", "", "run only jobs whose name matches this regexp")
	timeout = flag.Duration("timeout", 3*time.Minute, "kill a job after this long")
	extras  multi
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(s string) error { *m = append(*m, s); return nil }

func main() {
	flag.Var(&extras, "extra", "another capture to report, export and plot (repeatable)")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run scripts/equal-outputs.go [-j N] [-only RE] [-extra CAPTURE] BEFORE AFTER")
		os.Exit(2)
	}
	bins := [2]string{abs(flag.Arg(0)), abs(flag.Arg(1))}
	hdir, fdir := abs("fixtures/hostile"), abs("fixtures")
	jobs, err := hostileJobs(filepath.Join(hdir, "cases.txt"))
	if err != nil {
		fail(err)
	}
	caps, _ := filepath.Glob(filepath.Join(fdir, "*", "*.iwcap"))
	for _, e := range extras {
		caps = append(caps, abs(e))
	}
	for _, c := range caps {
		n := strings.TrimSuffix(filepath.Base(c), ".iwcap")
		jobs = append(jobs,
			job{name: "report-" + n, args: []string{"report", c, "--out", "$T/r"}},
			job{name: "report-json-" + n, args: []string{"report", c, "--json", "--out", "$T/j"}},
			job{name: "export-" + n, args: []string{"export", c, "--csv", "$T/x.csv"}},
			job{name: "plot-" + n, args: []string{"plot", c, "--out", "$T/p.png"}},
		)
	}
	for _, path := range commands(bins[0], nil) {
		jobs = append(jobs, job{name: "help-" + strings.Join(path, "-"), args: append(append([]string{}, path...), "--help")})
	}
	if *only != "" {
		re := regexp.MustCompile(*only)
		var keep []job
		for _, j := range jobs {
			if re.MatchString(j.name) {
				keep = append(keep, j)
			}
		}
		jobs = keep
	}
	root, err := os.MkdirTemp("", "equal-outputs-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(root)

	var mu sync.Mutex
	diffs, unstable := 0, 0
	report := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		diffs++
		fmt.Println(s)
	}
	ch := make(chan job)
	var wg sync.WaitGroup
	for w := 0; w < *workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				// BEFORE twice: what differs between its own two runs
				// (wall times, pids, a recording's bytes) is unstable and
				// not held against AFTER.
				var rs [3]result
				for i, bin := range []string{bins[0], bins[1], bins[0]} {
					t := filepath.Join(root, fmt.Sprintf("%d", i), j.name)
					rs[i] = run(bin, j, t, hdir, fdir)
				}
				noise := map[string]bool{}
				for _, d := range compare(rs[0], rs[2]) {
					noise[d.item] = true
					if os.Getenv("EQ_SHOW_UNSTABLE") != "" {
						report(fmt.Sprintf("UNSTABLE %s: %s %s", j.name, d.item, d.what))
					}
				}
				mu.Lock()
				unstable += len(noise)
				mu.Unlock()
				for _, d := range compare(rs[0], rs[1]) {
					if !noise[d.item] {
						report(fmt.Sprintf("DIFF %s: %s %s", j.name, d.item, d.what))
					}
				}
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	fmt.Fprintf(os.Stderr, "%d jobs; %d outputs differ between BEFORE's own two runs and are not compared\n", len(jobs), unstable)
	if diffs == 0 {
		fmt.Println("equal")
		return
	}
	fmt.Printf("%d differences\n", diffs)
	os.Exit(1)
}

func run(bin string, j job, t, hdir, fdir string) result {
	if err := os.MkdirAll(t, 0o755); err != nil {
		fail(err)
	}
	expand := strings.NewReplacer("$H", hdir, "$F", fdir, "$T", t).Replace
	args := make([]string, len(j.args))
	for i, a := range j.args {
		args[i] = expand(a)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = t
	cmd.Env = append(cleanEnv(), "TMPDIR="+t, "TZ=UTC")
	for _, e := range j.env {
		cmd.Env = append(cmd.Env, expand(e))
	}
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	r := result{code: 0, files: map[string][]byte{}}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		r.code = -1
	}
	if ctx.Err() != nil {
		r.code = -2
	}
	// The binary's own path and the run directory differ between the two runs.
	clean := strings.NewReplacer(t, "$T", bin, "$BIN").Replace
	r.stdout, r.stderr = wall(clean(so.String())), wall(progress.ReplaceAllString(clean(se.String()), ""))
	filepath.WalkDir(t, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(t, p)
		if d.Type()&os.ModeSymlink != 0 {
			to, _ := os.Readlink(p)
			r.files[rel] = []byte("link → " + to)
			return nil
		}
		b, _ := os.ReadFile(p)
		r.files[rel] = []byte(clean(string(b)))
		return nil
	})
	return r
}

type diff struct{ item, what string }

func compare(a, b result) []diff {
	var out []diff
	if a.code != b.code {
		out = append(out, diff{"exit", fmt.Sprintf("%d → %d", a.code, b.code)})
	}
	if d := firstDiff(a.stdout, b.stdout); d != "" {
		out = append(out, diff{"stdout", d})
	}
	if d := firstDiff(a.stderr, b.stderr); d != "" {
		out = append(out, diff{"stderr", d})
	}
	var names []string
	for n := range a.files {
		names = append(names, n)
	}
	for n := range b.files {
		if _, ok := a.files[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fa, oka := a.files[n]
		fb, okb := b.files[n]
		switch {
		case !oka:
			out = append(out, diff{"file " + n, "only after"})
		case !okb:
			out = append(out, diff{"file " + n, "only before"})
		case !bytes.Equal(fa, fb):
			out = append(out, diff{"file " + n, firstDiff(string(fa), string(fb))})
		}
	}
	return out
}

// firstDiff is "" for equal texts, else the first differing line of each.
func firstDiff(a, b string) string {
	if a == b {
		return ""
	}
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(la) || i < len(lb); i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return fmt.Sprintf("line %d: %q → %q", i+1, clip(x), clip(y))
		}
	}
	return "differ"
}

func clip(s string) string {
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}

// commands lists every command path below path from the help's
// "Available Commands:" sections.
func commands(bin string, path []string) [][]string {
	out, _ := exec.Command(bin, append(append([]string{}, path...), "--help")...).Output()
	var res [][]string
	if len(path) > 0 {
		res = append(res, path)
	}
	in := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Available Commands:"):
			in = true
		case in && strings.TrimSpace(line) == "":
			in = false
		case in:
			name := strings.Fields(line)[0]
			if name == "help" || name == "completion" {
				continue
			}
			res = append(res, commands(bin, append(append([]string{}, path...), name))...)
		}
	}
	return res
}

// progress is a long command's progress line: when it prints, and what
// it says, depends on the machine's speed.
var progress = regexp.MustCompile(`(?m)^[a-z]+: reading .*% after \d+ s\n`)

// wall spells the wall-clock times a command prints as "#".
func wall(s string) string {
	s = wallSecs.ReplaceAllString(s, "in # s wall")
	return elapsed.ReplaceAllString(s, `"elapsed_s": #`)
}

var (
	wallSecs = regexp.MustCompile(`in [0-9.]+ s wall`)
	elapsed  = regexp.MustCompile(`"elapsed_s": [0-9.e+-]+`)
)

var envWord = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`)

// hostileJobs reads cases.txt (its header gives the format).
func hostileJobs(path string) ([]job, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []job
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.SplitN(line, "|", 4)
		if len(fields) != 4 {
			return nil, fmt.Errorf("%s:%d: want 4 fields", path, n)
		}
		words := splitWords(strings.TrimSpace(fields[3]))
		j := job{name: "hostile-" + strings.TrimSpace(fields[0])}
		for len(words) > 0 && envWord.MatchString(words[0]) {
			j.env, words = append(j.env, words[0]), words[1:]
		}
		j.args = words
		out = append(out, j)
	}
	return out, sc.Err()
}

// splitWords splits on spaces; "double quotes" group words.
func splitWords(s string) []string {
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
	if have {
		out = append(out, cur.String())
	}
	return out
}

func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "IDLEWATT_") {
			out = append(out, kv)
		}
	}
	return out
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		fail(err)
	}
	return a
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "equal-outputs:", err)
	os.Exit(2)
}
