package gen

// `idlewatt trace gen pcmark7` and `trace gen iometer`: their settings
// (config keys under gen.), declared once, read into a generator and the
// comment its trace file opens with.

import (
	"fmt"
	"strings"

	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/workload/trace"
)

var outFlags = []settings.Flag{
	{Name: "out", Kind: settings.String, Help: "output file ('-' for stdout)"},
	outfile.Flag("the --out file", ""),
}

// PCMark7Flags are `trace gen pcmark7`'s settings.
var PCMark7Flags = append([]settings.Flag{
	{Name: "app", Key: "gen.app", Kind: settings.String, Default: "all", Help: "application: " + strings.Join(AppNames(), ", ")},
	{Name: "seed", Key: "gen.seed", Kind: settings.Int, Default: 1, Help: "random seed"},
	{Name: "duration-scale", Key: "gen.duration_scale", Kind: settings.Float, Default: 1.0, Help: "multiply the number of bursts (0.1 = a tenth as long)"},
	{Name: "span", Key: "gen.span", Kind: settings.String, Default: "16GiB", Help: "LBA span in bytes (suffixes KiB, MiB, GiB, KB, MB, GB)"},
}, outFlags...)

// IometerFlags are `trace gen iometer`'s settings.
var IometerFlags = append([]settings.Flag{
	{Name: "pattern", Kind: settings.String, Default: "randread4k", Help: "pattern: " + strings.Join(Patterns, ", ") + ", or fio's rw names (randread, read128k, …)"},
	{Name: "ops", Kind: settings.Int, Default: 100000, Help: "number of ops"},
	{Name: "seed", Key: "gen.seed", Kind: settings.Int, Default: 1, Help: "random seed"},
	{Name: "span", Key: "gen.span", Kind: settings.String, Default: "16GiB", Help: "LBA span in bytes"},
}, outFlags...)

// ReadPCMark7 is the generator PCMark7Flags ask for, and its comment.
func ReadPCMark7(g settings.Getter) (trace.Reader, string, error) {
	app := g.String("app")
	seed, err := g.Int("seed")
	if err != nil {
		return nil, "", err
	}
	scale, err := g.Float("duration-scale")
	if err != nil {
		return nil, "", err
	}
	span, err := settings.Bytes(g, "span")
	if err != nil {
		return nil, "", err
	}
	r, err := PCMark7(app, int64(seed), span, scale)
	if err != nil {
		return nil, "", settings.Usagef("%v", err)
	}
	return r, fmt.Sprintf("generator: pcmark7 app=%s seed=%d span=%d duration-scale=%g", app, seed, span, scale), nil
}

// ReadIometer is the generator IometerFlags ask for, and its comment.
func ReadIometer(g settings.Getter) (trace.Reader, string, error) {
	pat := g.String("pattern")
	seed, err := g.Int("seed")
	if err != nil {
		return nil, "", err
	}
	n, err := g.Int("ops")
	if err != nil {
		return nil, "", err
	}
	if n <= 0 {
		return nil, "", settings.Usagef("--ops: want a positive count")
	}
	span, err := settings.Bytes(g, "span")
	if err != nil {
		return nil, "", err
	}
	r, err := Pattern(pat, int64(seed), span, int64(n))
	if err != nil {
		return nil, "", settings.Usagef("%v", err)
	}
	return r, fmt.Sprintf("generator: iometer pattern=%s seed=%d span=%d ops=%d (replay with --timing afap --qd N)", pat, seed, span, n), nil
}
