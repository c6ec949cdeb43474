package main

// Outputs never clobber (issue 13, deliverable 1): every command that writes
// a file refuses an existing path without --overwrite, never writes through
// a symbolic link, never over one of its inputs, and a run directory that
// holds a run is refused. Each case checks exit 2, the message, and that
// every file the case guards is byte for byte what it was.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// outFixture holds the inputs the cases need and a file that must survive.
type outFixture struct {
	dir                   string
	trace, stream, capt   string // a native trace, a hub byte stream, a capture
	reportDir, reportJSON string
	victim, link          string // a precious file and a symlink to it
	dangling              string // a symlink to nothing
}

func newOutFixture(t *testing.T) *outFixture {
	t.Helper()
	dir := t.TempDir()
	f := &outFixture{
		dir: dir, trace: filepath.Join(dir, "ev.trace"), stream: filepath.Join(dir, "hub.bin"),
		capt: filepath.Join(dir, "cap.iwcap"), reportDir: filepath.Join(dir, "rep"),
		victim: filepath.Join(dir, "victim.conf"), link: filepath.Join(dir, "link"), dangling: filepath.Join(dir, "dangling"),
	}
	f.reportJSON = filepath.Join(f.reportDir, "report.json")
	mustRun(t, "trace", "gen", "iometer", "--pattern", "randwrite4k", "--ops", "500", "--span", "4MiB", "--out", f.trace)
	mustRun(t, "hub", "emulate", "--fast", "--ports", "1", "--rate", "1000", "--duration", "1s", "--out", f.stream)
	mustRun(t, "record", "--meter", "hub", "--port", f.stream, "--out", f.capt)
	mustRun(t, "report", f.capt, "--out", f.reportDir)
	if err := os.WriteFile(f.victim, []byte("root:x:0:0:precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(f.victim, f.link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "nothing-here"), f.dangling); err != nil {
		t.Fatal(err)
	}
	return f
}

func mustRun(t *testing.T, args ...string) {
	t.Helper()
	if _, e, code := run(t, context.Background(), args...); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, lastLines(e, 3))
	}
}

// existing makes dir/name holding some bytes and returns its path.
func existing(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte("an earlier "+name+", keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// refusal is one command that must refuse.
type refusal struct {
	name   string
	args   []string
	guard  []string // files that must be byte-identical afterwards
	absent []string // paths that must not exist afterwards
	want   []string // substrings of the message
}

// checkRefusals runs every case and returns how many files changed.
func checkRefusals(t *testing.T, cases []refusal) (changed int) {
	t.Helper()
	for _, c := range cases {
		sums := map[string][32]byte{}
		for _, g := range c.guard {
			sums[g] = fileSum(t, g)
		}
		_, errOut, code := runFull(t, c.args...)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2: %s", c.name, code, lastLines(errOut, 2))
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%s: message lacks %q: %s", c.name, w, lastLines(errOut, 2))
			}
		}
		for _, g := range c.guard {
			if fileSum(t, g) != sums[g] {
				t.Errorf("%s: %s changed", c.name, g)
				changed++
			}
		}
		for _, a := range c.absent {
			if _, err := os.Lstat(a); err == nil {
				t.Errorf("%s: %s was created", c.name, a)
				changed++
			}
		}
		t.Logf("%s: %s", c.name, strings.TrimSpace(lastLines(errOut, 1)))
	}
	return changed
}

// noTempFiles fails if a temporary output file is left under dir.
func noTempFiles(t *testing.T, dir string) {
	t.Helper()
	for _, p := range tree(t, dir) {
		if strings.Contains(p, ".idlewatt-tmp-") {
			t.Errorf("temporary file left behind: %s", p)
		}
	}
}

func TestOutputsNeverClobber(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("records and reports a short capture")
	}
	f := newOutFixture(t)
	d := f.dir
	// A hard link to the trace: the same file under another name.
	hard := filepath.Join(d, "hard.trace")
	if err := os.Link(f.trace, hard); err != nil {
		t.Fatal(err)
	}
	// A second name for the trace through a symlink.
	alias := filepath.Join(d, "alias.trace")
	if err := os.Symlink(f.trace, alias); err != nil {
		t.Fatal(err)
	}
	oldFio := existing(t, d, "old.fio3")
	oldGen := existing(t, d, "old.trace")
	oldPNG := existing(t, d, "old.png")
	oldBin := existing(t, d, "old.bin")
	oldCSV := existing(t, d, "old.csv")
	oldCap := existing(t, d, "old.iwcap")
	repMDLink := filepath.Join(d, "rep2", "report.md")
	os.MkdirAll(filepath.Dir(repMDLink), 0o755)
	os.Symlink(f.victim, repMDLink)
	cmpOld := existing(t, d, "cmp/compare.md")
	cmpHard := filepath.Join(d, "cmp2", "compare.csv")
	os.MkdirAll(filepath.Dir(cmpHard), 0o755)
	if err := os.Link(f.reportJSON, cmpHard); err != nil {
		t.Fatal(err)
	}
	run1 := filepath.Join(d, "run1")
	run1Cap := existing(t, run1, "capture.iwcap")
	simDir := filepath.Join(d, "simsys")
	simOld := existing(t, simDir, "notes.txt")
	truthDir := filepath.Join(d, "truth")
	truthOld := existing(t, truthDir, "truth-p1.jsonl")
	target := filepath.Join(d, "target.img") // must never be created by a refused run
	conf := filepath.Join(d, "m.yaml")
	if err := os.WriteFile(conf, []byte(`meter: {kind: emulator, rate_hz: 1000}
drives: [{name: a, port: 1, profile: jmf667h-128-a19, size_bytes: 16777216}]
idle: 200ms
workload: {trace: none}
devslp: {cycles: 0}
`), 0o644); err != nil {
		t.Fatal(err)
	}

	exists := []string{"exists", "--overwrite"}
	symlink := []string{"symbolic link"}
	input := []string{"input"}
	cases := []refusal{
		// trace convert
		{"convert onto its input", []string{"trace", "convert", f.trace, "--to", "native", "--out", f.trace},
			[]string{f.trace}, nil, append(input, f.trace)},
		{"convert onto its input, --overwrite", []string{"trace", "convert", f.trace, "--to", "native", "--out", f.trace, "--overwrite"},
			[]string{f.trace}, nil, input},
		{"convert onto a hard link of its input", []string{"trace", "convert", f.trace, "--to", "fio3", "--out", hard, "--overwrite"},
			[]string{f.trace}, nil, append(input, hard)},
		{"convert through a symlink to its input", []string{"trace", "convert", alias, "--to", "native", "--out", f.trace, "--overwrite"},
			[]string{f.trace}, nil, input},
		{"convert through a symlink to another file", []string{"trace", "convert", f.trace, "--to", "fio3", "--out", f.link, "--overwrite"},
			[]string{f.victim}, nil, append(symlink, f.link)},
		{"convert through a dangling symlink", []string{"trace", "convert", f.trace, "--to", "fio3", "--out", f.dangling},
			nil, []string{filepath.Join(d, "nothing-here")}, symlink},
		{"convert over an existing file", []string{"trace", "convert", f.trace, "--to", "fio3", "--out", oldFio},
			[]string{oldFio}, nil, append(exists, oldFio)},
		// trace gen
		{"gen pcmark7 over an existing file", []string{"trace", "gen", "pcmark7", "--duration-scale", "0.01", "--out", oldGen},
			[]string{oldGen}, nil, exists},
		{"gen iometer through a symlink", []string{"trace", "gen", "iometer", "--ops", "10", "--out", f.link, "--overwrite"},
			[]string{f.victim}, nil, symlink},
		// plot
		{"plot over an existing image", []string{"plot", f.capt, "--out", oldPNG},
			[]string{oldPNG, f.capt}, nil, append(exists, oldPNG)},
		{"plot through a symlink", []string{"plot", f.capt, "--out", filepath.Join(d, "plot-link.png"), "--overwrite"},
			[]string{f.victim}, nil, symlink},
		// hub emulate --fast
		{"emulate --fast over an existing file", []string{"hub", "emulate", "--fast", "--duration", "100ms", "--out", oldBin},
			[]string{oldBin}, nil, exists},
		{"emulate --fast through a symlink", []string{"hub", "emulate", "--fast", "--duration", "100ms", "--out", f.link, "--overwrite"},
			[]string{f.victim}, nil, symlink},
		{"emulate --truth-dir over truth files", []string{"hub", "emulate", "--fast", "--duration", "100ms", "--out", filepath.Join(d, "new.bin"),
			"--profile", "jmf667h-128-a19", "--truth-dir", truthDir},
			[]string{truthOld}, []string{filepath.Join(d, "new.bin")}, append(exists, "truth-p1.jsonl")},
		// replay and bench
		{"replay --events onto its trace", []string{"replay", "--trace", f.trace, "--target", target, "--timing", "afap", "--events", f.trace},
			[]string{f.trace}, []string{target}, append(input, "--events")},
		{"replay --events through a symlink", []string{"replay", "--trace", f.trace, "--target", target, "--timing", "afap", "--events", f.link, "--overwrite"},
			[]string{f.victim}, []string{target}, symlink},
		{"replay --events over an existing file", []string{"replay", "--trace", f.trace, "--target", target, "--timing", "afap", "--events", oldCSV},
			[]string{oldCSV}, []string{target}, exists},
		{"bench --events over an existing file", []string{"bench", "--target", target, "--pattern", "randwrite4k", "--duration", "100ms", "--events", oldCSV},
			[]string{oldCSV}, []string{target}, exists},
		{"bench --chart through a symlink", []string{"bench", "--target", target, "--pattern", "randwrite4k", "--duration", "100ms", "--chart", filepath.Join(d, "plot-link.png")},
			[]string{f.victim}, []string{target}, symlink},
		// export
		{"export over an existing file", []string{"export", f.capt, "--csv", oldCSV},
			[]string{oldCSV}, nil, exists},
		{"export onto its capture", []string{"export", f.capt, "--csv", f.capt, "--overwrite"},
			[]string{f.capt}, nil, input},
		{"export through a symlink", []string{"export", f.capt, "--csv", f.link, "--overwrite"},
			[]string{f.victim}, nil, symlink},
		// record
		{"record onto its recorded stream", []string{"record", "--meter", "hub", "--port", f.stream, "--out", f.stream, "--overwrite"},
			[]string{f.stream}, nil, input},
		{"record over an existing capture", []string{"record", "--meter", "hub", "--port", f.stream, "--out", oldCap},
			[]string{oldCap}, nil, exists},
		{"record through a symlink", []string{"record", "--meter", "hub", "--port", f.stream, "--out", f.link, "--overwrite"},
			[]string{f.victim}, nil, symlink},
		// report and compare
		{"report over an earlier report", []string{"report", f.capt, "--out", f.reportDir},
			[]string{f.reportJSON, filepath.Join(f.reportDir, "report.md")}, nil, append(exists, "report.json")},
		{"report through a symlinked report.md", []string{"report", f.capt, "--out", filepath.Dir(repMDLink), "--overwrite"},
			[]string{f.victim}, []string{filepath.Join(d, "rep2", "report.json")}, symlink},
		{"report into a symlinked directory", []string{"report", f.capt, "--out", filepath.Join(d, "rep-link"), "--overwrite"},
			[]string{f.reportJSON}, nil, symlink},
		{"compare over an earlier comparison", []string{"compare", f.reportJSON, "--out", filepath.Dir(cmpOld)},
			[]string{cmpOld}, []string{filepath.Join(d, "cmp", "compare.csv")}, exists},
		{"compare onto a hard link of its input", []string{"compare", f.reportJSON, "--out", filepath.Dir(cmpHard), "--overwrite"},
			[]string{f.reportJSON}, nil, input},
		// run directories
		{"measure into a run directory", []string{"measure", "--config", conf, "--out", run1, "--quiet"},
			[]string{run1Cap}, []string{filepath.Join(run1, "report.json")}, []string{run1, "not empty", "new directory", "--overwrite"}},
		{"demo into a run directory", []string{"demo", "--out", run1, "--quiet"},
			[]string{run1Cap}, []string{filepath.Join(run1, "report.json")}, []string{"not empty", "--overwrite"}},
		{"idle into a run directory", []string{"idle", "--config", conf, "--out", run1, "--quiet", "--measure", "200ms", "--settle", "0s"},
			[]string{run1Cap}, []string{filepath.Join(run1, "idle.json")}, []string{"not empty", "--overwrite"}},
		{"devslp verify into a run directory", []string{"devslp", "verify", "--config", conf, "--out", run1, "--quiet", "--cycles", "1"},
			[]string{run1Cap}, []string{filepath.Join(run1, "measure.json")}, []string{"not empty", "--overwrite"}},
		{"measure into a symlinked directory", []string{"measure", "--config", conf, "--out", filepath.Join(d, "run-link"), "--quiet", "--overwrite"},
			[]string{run1Cap}, []string{filepath.Join(run1, "report.json")}, symlink},
		{"states simulate into a directory with files", []string{"states", "simulate", simDir},
			[]string{simOld}, []string{filepath.Join(simDir, "devices")}, []string{"not empty", "--overwrite"}},
	}
	os.Symlink(f.victim, filepath.Join(d, "plot-link.png"))
	os.Symlink(f.reportDir, filepath.Join(d, "rep-link"))
	os.Symlink(run1, filepath.Join(d, "run-link"))

	changed := checkRefusals(t, cases)
	noTempFiles(t, d)
	t.Logf("files changed without consent: %d in %d refusal cases", changed, len(cases))

	// The flag is what allows replacing: the same commands with
	// --overwrite replace the old files (through a rename: new inode).
	before, _ := os.Stat(oldFio)
	mustRun(t, "trace", "convert", f.trace, "--to", "fio3", "--out", oldFio, "--overwrite")
	mustRun(t, "trace", "gen", "pcmark7", "--duration-scale", "0.01", "--out", oldGen, "--overwrite")
	mustRun(t, "plot", f.capt, "--out", oldPNG, "--overwrite")
	mustRun(t, "hub", "emulate", "--fast", "--duration", "100ms", "--out", oldBin, "--overwrite")
	mustRun(t, "export", f.capt, "--csv", oldCSV, "--overwrite")
	mustRun(t, "record", "--meter", "hub", "--port", f.stream, "--out", oldCap, "--overwrite")
	mustRun(t, "report", f.capt, "--out", f.reportDir, "--overwrite")
	after, _ := os.Stat(oldFio)
	if os.SameFile(before, after) {
		t.Error("--overwrite rewrote the old inode instead of renaming a new file over it")
	}
	for _, p := range []string{oldFio, oldGen, oldPNG, oldBin, oldCSV, oldCap} {
		if b, _ := os.ReadFile(p); strings.Contains(string(b), "keep me") {
			t.Errorf("%s: --overwrite did not replace it", p)
		}
	}
	noTempFiles(t, d)
}

// TestSecondMeasureRefused reproduces the case: a second measure
// into the directory of a first run refuses (exit 2) and leaves its capture
// as it was; --overwrite writes the new run into it.
func TestSecondMeasureRefused(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs two short measurements")
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(conf, []byte(`meter: {kind: emulator, rate_hz: 1000}
drives: [{name: a, port: 1, profile: jmf667h-128-a19, size_bytes: 16777216}]
idle: 200ms
workload: {trace: none}
devslp: {cycles: 0}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run1")
	mustRun(t, "measure", "--config", conf, "--out", out, "--quiet")
	capPath := filepath.Join(out, "capture.iwcap")
	sums := map[string][32]byte{}
	for _, n := range []string{"capture.iwcap", "report.json", "measure.json", "truth-p1.jsonl"} {
		sums[n] = fileSum(t, filepath.Join(out, n))
	}
	_, errOut, code := runFull(t, "measure", "--config", conf, "--out", out, "--quiet")
	if code != 2 {
		t.Fatalf("second measure: exit %d, want 2: %s", code, lastLines(errOut, 2))
	}
	for _, w := range []string{out, "not empty", "new directory", "--overwrite"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("message lacks %q: %s", w, lastLines(errOut, 1))
		}
	}
	for n, s := range sums {
		if fileSum(t, filepath.Join(out, n)) != s {
			t.Errorf("the refused run changed %s", n)
		}
	}
	// A longer idle phase, so the new run's capture cannot equal the old
	// one (the emulator is deterministic; inode numbers are reused).
	conf2 := filepath.Join(dir, "c2.yaml")
	b, _ := os.ReadFile(conf)
	if err := os.WriteFile(conf2, []byte(strings.Replace(string(b), "idle: 200ms", "idle: 400ms", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "measure", "--config", conf2, "--out", out, "--quiet", "--overwrite")
	if fileSum(t, capPath) == sums["capture.iwcap"] {
		t.Error("measure --overwrite did not write a new capture")
	}
	noTempFiles(t, dir)
}

// TestOutputMode: outputs are 0644 (before the umask), PNG charts included
// (they were 0600, from os.CreateTemp).
func TestOutputMode(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("records a short capture")
	}
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	f := newOutFixture(t)
	png := filepath.Join(f.dir, "p.png")
	mustRun(t, "plot", f.capt, "--out", png)
	for _, p := range []string{png, f.trace, f.stream, f.capt, f.reportJSON, filepath.Join(f.reportDir, "power.png")} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, want 0644", filepath.Base(p), fi.Mode().Perm())
		}
	}
}

// TestFailedConversionKeepsOldFile: a conversion that fails half way (a
// syntax error after 20000 good ops, well past the first 64 KiB written)
// leaves the file it was to replace byte for byte as it was, even with
// --overwrite, and no temporary file.
func TestFailedConversionKeepsOldFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.trace")
	mustRun(t, "trace", "gen", "iometer", "--pattern", "randread4k", "--ops", "20000", "--span", "64MiB", "--out", bad)
	fb, err := os.OpenFile(bad, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fb.WriteString("this is not an op\n")
	fb.Close()
	old := existing(t, dir, "old.fio3")
	sum := fileSum(t, old)
	_, errOut, code := runFull(t, "trace", "convert", bad, "--to", "fio3", "--out", old, "--overwrite")
	if code != 2 {
		t.Fatalf("exit %d, want 2 (bad input): %s", code, lastLines(errOut, 2))
	}
	if fileSum(t, old) != sum {
		t.Error("a failed conversion changed the file it was to replace")
	}
	noTempFiles(t, dir)
}

// TestIdleAndVerifyLeaveNoScratch: idle and devslp verify on the emulator
// remove the simulated drives' scratch images when they end.
func TestIdleAndVerifyLeaveNoScratch(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs two short measurements")
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(conf, []byte(`meter: {kind: emulator, rate_hz: 1000}
drives: [{name: a, port: 1, profile: jmf667h-128-a19, size_bytes: 16777216}]
devslp: {cycles: 1, settle: 300ms, hold: 100ms, return: 200ms, policy: med_power_with_dipm}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"idle", "--config", conf, "--out", filepath.Join(dir, "idle"), "--quiet", "--policies", "max_performance", "--settle", "0s", "--measure", "300ms"},
		{"devslp", "verify", "--config", conf, "--out", filepath.Join(dir, "verify"), "--quiet", "--cycles", "1"},
	} {
		_, e, code := run(t, context.Background(), args...)
		if code > 1 { // a DevSlp verdict may fail (exit 1); the point is what is left
			t.Fatalf("%v: exit %d: %s", args, code, lastLines(e, 2))
		}
		got := tree(t, args[slicesIndex(args, "--out")+1])
		if len(got) == 0 {
			t.Fatalf("%v wrote nothing", args)
		}
		for _, p := range got {
			if strings.HasSuffix(p, ".img") || strings.Contains(p, ".idlewatt-tmp-") {
				t.Errorf("%v left %s", args[:2], p)
			}
		}
	}
}

func slicesIndex(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// TestEmulatorSymlinkNeverReplacesAFile: hub emulate --symlink PATH renames
// a link to its pty into PATH and removes it at the end, so PATH must not
// be a file; an old link is replaced only with --overwrite.
func TestEmulatorSymlinkNeverReplacesAFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := existing(t, dir, "notes.txt")
	oldLink := filepath.Join(dir, "tty")
	if err := os.Symlink("/dev/pts/nothing", oldLink); err != nil {
		t.Fatal(err)
	}
	sum := fileSum(t, file)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"hub", "emulate", "--symlink", file}, "not a symbolic link"},
		{[]string{"hub", "emulate", "--symlink", file, "--overwrite"}, "not a symbolic link"},
		{[]string{"hub", "emulate", "--symlink", oldLink}, "--overwrite"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, errOut, code := run(t, ctx, c.args...)
		cancel()
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, want 2 and %q: %s", c.args, code, c.want, lastLines(errOut, 1))
		}
	}
	if fileSum(t, file) != sum {
		t.Error("the file named by --symlink changed")
	}
	if got, err := os.Readlink(oldLink); err != nil || got != "/dev/pts/nothing" {
		t.Errorf("the old link was replaced: %q %v", got, err)
	}
}
