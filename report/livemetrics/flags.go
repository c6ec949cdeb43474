package livemetrics

import "github.com/idlewatt/idlewatt/internal/settings"

// Flags are the live metrics' settings on every command that records
// (docs/lab.md): the address to serve and the textfile to rewrite.
var Flags = []settings.Flag{
	{Name: "metrics-addr", Key: "metrics.addr", Kind: settings.String, Help: "serve Prometheus metrics on HOST:PORT (:PORT = 127.0.0.1; off when empty; config metrics.addr)"},
	{Name: "metrics-textfile", Key: "metrics.textfile", Kind: settings.String, Help: "write the metrics for node_exporter's textfile collector to FILE.prom every second (config metrics.textfile)"},
}
