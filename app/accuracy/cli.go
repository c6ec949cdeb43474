package accuracy

// `idlewatt accuracy`: its settings, declared once, read and checked here
// into the campaign's (or a rescore's) options, and what it prints.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/internal/textsafe"
)

// Flags are `idlewatt accuracy`'s settings.
var Flags = []settings.Flag{
	{Name: "drives", Kind: settings.Int, Default: 200, Help: "drives to draw"},
	{Name: "seed", Kind: settings.Uint64, Default: uint64(1), Help: "campaign seed"},
	{Name: "out", Kind: settings.String, Help: "output directory (default idlewatt-accuracy-<time>)"},
	{Name: "parallel", Kind: settings.Int, Default: 1, Help: "hubs measured at once"},
	{Name: "replay", Kind: settings.Strings, Help: "rerun only these drives, each SEED:INDEX (repeatable; all must share one seed)"},
	{Name: "short", Kind: settings.Bool, Help: "short phases (the CI campaign's; a short run is not expected to meet the goals)"},
	{Name: "max-cycles", Kind: settings.Int, Help: "DevSlp cycles at most per drive while its entry is not resolved to 0.5 ms (default 192; --short: 2)"},
	{Name: "json", Kind: settings.Bool, Help: "print accuracy.json instead of the table"},
	{Name: "overwrite", Kind: settings.Bool, Help: "replace the campaign files in an existing --out"},
	{Name: "quiet", Kind: settings.Bool, Help: "no progress lines"},
	{Name: "rescore", Kind: settings.String, Help: "score the captures of the campaign in this directory again with this build's analysis (no new runs)"},
	{Name: "pool", Kind: settings.Strings, Help: "tabulate these scored campaigns' (or rescores') drives as one: overall, per family over every seed, per campaign (repeatable or comma-separated; analyses nothing)"},
}

// ReadPool reads and checks a pool's settings (--pool DIR …): only --out,
// --overwrite, --json and --quiet apply.
func ReadPool(g settings.Getter, from []string, defaultOut string) (PoolOptions, error) {
	for _, f := range []string{"drives", "seed", "replay", "short", "max-cycles", "rescore", "parallel"} {
		if g.Changed(f) {
			return PoolOptions{}, settings.Usagef("--pool: --%s does not apply (pooling reads scored campaigns; it runs and analyses nothing)", f)
		}
	}
	if len(from) < 2 {
		return PoolOptions{}, settings.Usagef("--pool: %d campaign directory, want 2 or more", len(from))
	}
	o := PoolOptions{From: from, Out: g.String("out"), Overwrite: g.Bool("overwrite")}
	if o.Out == "" {
		o.Out = defaultOut
	}
	for _, d := range from {
		if _, err := os.Stat(filepath.Join(d, "accuracy.json")); err != nil {
			return o, settings.Usagef("--pool %s: not a campaign's directory: %v", d, err)
		}
		if filepath.Clean(d) == filepath.Clean(o.Out) {
			return o, settings.Usagef("--out %s: a campaign pooled is there; name another directory", o.Out)
		}
	}
	return o, checkOut(o.Out, o.Overwrite)
}

// parallel reads --parallel: 1–64 hubs at once.
func parallel(g settings.Getter) (int, error) {
	par, err := g.Int("parallel")
	if err != nil {
		return 0, err
	}
	if par < 1 || par > 64 {
		return 0, settings.Usagef("%s: %d, want 1–64", g.Where("parallel"), par)
	}
	return par, nil
}

// checkOut refuses an output directory the campaign may not write.
func checkOut(out string, overwrite bool) error {
	if err := CheckOut(out, overwrite); err != nil {
		return settings.Usagef("--out: %v", err)
	}
	if err := outfile.Dir(out); err != nil {
		return settings.Usagef("--out: %v", err)
	}
	return nil
}

// ReadOptions reads and checks a campaign's settings; defaultOut is the
// output directory when --out names none. progress, when set, gets the
// campaign's progress lines and the line that says what runs.
func ReadOptions(g settings.Getter, defaultOut string, progress io.Writer) (Options, error) {
	n, err := g.Int("drives")
	if err != nil {
		return Options{}, err
	}
	if n < 1 || n > 100000 {
		return Options{}, settings.Usagef("%s: %d drives, want 1–100000", g.Where("drives"), n)
	}
	par, err := parallel(g)
	if err != nil {
		return Options{}, err
	}
	seedS := g.String("seed")
	var seed uint64
	if _, err := fmt.Sscan(seedS, &seed); err != nil || strings.HasPrefix(strings.TrimSpace(seedS), "-") {
		return Options{}, settings.Usagef("%s: %q is not a non-negative integer", g.Where("seed"), seedS)
	}
	o := Options{Drives: n, Seed: seed, Parallel: par}
	replays := g.List("replay")
	for i, r := range replays {
		s, idx, err := ParseReplay(r)
		if err != nil {
			return o, settings.Usagef("--replay: %v", err)
		}
		if i > 0 && s != o.Seed {
			return o, settings.Usagef("--replay %s: every replayed drive must share one seed (%d)", r, o.Seed)
		}
		o.Seed = s
		o.Replay = append(o.Replay, idx)
	}
	o.Phases = DefaultPhases()
	if g.Bool("short") {
		o.Phases = ShortPhases()
	}
	if g.Changed("max-cycles") {
		mc, err := g.Int("max-cycles")
		if err != nil {
			return o, err
		}
		if mc < o.Phases.Cycles || mc > 1000 {
			return o, settings.Usagef("%s: %d, want %d (the cycles planned) to 1000", g.Where("max-cycles"), mc, o.Phases.Cycles)
		}
		o.Phases.MaxCycles = mc
	}
	o.Out, o.Overwrite = g.String("out"), g.Bool("overwrite")
	if o.Out == "" {
		o.Out = defaultOut
	}
	if err := checkOut(o.Out, o.Overwrite); err != nil {
		return o, err
	}
	if progress != nil {
		o.Progress = progress
		what := fmt.Sprintf("%d drives (seed %d)", n, o.Seed)
		if len(o.Replay) > 0 {
			what = fmt.Sprintf("replay of %s", strings.Join(replays, ", "))
		}
		fmt.Fprintf(progress, "accuracy: %s, %d hub(s) at once, output in %s\n", what, par, textsafe.Terminal(o.Out))
	}
	return o, nil
}

// ReadRescore reads and checks a rescore's settings (--rescore from):
// the settings that choose drives and phases do not apply.
func ReadRescore(g settings.Getter, from, defaultOut string, progress io.Writer) (RescoreOptions, error) {
	for _, f := range []string{"drives", "seed", "replay", "short", "max-cycles"} {
		if g.Changed(f) {
			return RescoreOptions{}, settings.Usagef("--rescore: --%s does not apply (the campaign in %s says which drives and phases)", f, from)
		}
	}
	if _, err := os.Stat(filepath.Join(from, "accuracy.json")); err != nil {
		return RescoreOptions{}, settings.Usagef("--rescore %s: not a campaign's directory: %v", from, err)
	}
	par, err := parallel(g)
	if err != nil {
		return RescoreOptions{}, err
	}
	o := RescoreOptions{From: from, Out: g.String("out"), Parallel: par, Overwrite: g.Bool("overwrite"), Progress: progress}
	if o.Out == "" {
		o.Out = defaultOut
	}
	if a, b := filepath.Clean(o.Out), filepath.Clean(from); a == b {
		return o, settings.Usagef("--out %s: the campaign rescored is there; name another directory", o.Out)
	}
	return o, checkOut(o.Out, o.Overwrite)
}

// Print writes c's table (or accuracy.json with asJSON); out is where its
// files went.
func (c *Campaign) Print(w io.Writer, out string, asJSON bool) {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(c)
		return
	}
	c.Table(w)
	if len(c.Pooled) > 0 {
		fmt.Fprintf(w, "written to %s (accuracy.md, accuracy.json)\n", textsafe.Terminal(out))
		return
	}
	fmt.Fprintf(w, "written to %s (accuracy.md, accuracy.json, runs/)\n", textsafe.Terminal(out))
}
