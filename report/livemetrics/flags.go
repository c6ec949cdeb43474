package livemetrics

import (
	"fmt"
	"io"

	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/settings"
)

// Flags are the live metrics' settings on every command that records
// (docs/lab.md): the address to serve and the textfile to rewrite.
var Flags = []settings.Flag{
	{Name: "metrics-addr", Key: "metrics.addr", Kind: settings.String, Help: "serve Prometheus metrics on HOST:PORT (:PORT = 127.0.0.1; off when empty; config metrics.addr)"},
	{Name: "metrics-textfile", Key: "metrics.textfile", Kind: settings.String, Help: "write the metrics for node_exporter's textfile collector to FILE.prom every second (config metrics.textfile)"},
}

// Open reads Flags into an Observer for a recording, its listener open
// before anything is recorded so an address in use fails first. oo are the
// command's output rules; writes says whether a path is one of the
// command's own outputs, which the textfile, rewritten every second, must
// not be (record --out c.iwcap --metrics-textfile c.iwcap replaced the
// capture by the metrics, exit 0). The URL served is said on log, as who
// ("idlewatt record"). Close it.
func Open(g settings.Getter, oo outfile.Options, writes func(path string) bool, log io.Writer, who string) (*Observer, error) {
	o := &Observer{Textfile: g.String("metrics-textfile"), Log: log}
	if o.Textfile != "" {
		if err := outfile.Check(o.Textfile, oo); err != nil {
			return nil, settings.Usagef("%s: %w", g.Where("metrics-textfile"), err)
		}
		if writes != nil && writes(o.Textfile) {
			return nil, settings.Usagef("%s: %s is also an output of this command (the metrics would replace it); name another file",
				g.Where("metrics-textfile"), o.Textfile)
		}
	}
	if addr := g.String("metrics-addr"); addr != "" {
		l, err := Listen(addr)
		if err != nil {
			return nil, settings.Usagef("%s: %v", g.Where("metrics-addr"), err)
		}
		o.Listener = l
		fmt.Fprintf(log, "%s: metrics on http://%s/metrics\n", who, l.Addr())
	}
	return o, nil
}
