package main

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/rig"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/report/livemetrics"
)

// addMetricsFlags adds the live-metrics flags of record (docs/lab.md).
func addMetricsFlags(f *pflag.FlagSet) {
	f.String("metrics-addr", "", "serve Prometheus metrics on HOST:PORT (:PORT = 127.0.0.1; off when empty; config metrics.addr)")
	f.String("metrics-textfile", "", "write the metrics for node_exporter's textfile collector to FILE.prom every second (config metrics.textfile)")
}

// liveMetrics is the --metrics-addr listener, opened before recording so an
// address in use fails first, and the textfile path.
type liveMetrics struct {
	l        net.Listener
	textfile string
	stop     func()
	stderr   io.Writer // the command's, for a failed textfile update
}

func openMetrics(cmd *cobra.Command, oo outfile.Options) (*liveMetrics, error) {
	lm := &liveMetrics{textfile: optString(cmd, "metrics-textfile", "metrics.textfile"), stderr: cmd.ErrOrStderr()}
	if lm.textfile != "" {
		if err := outfile.Check(lm.textfile, oo); err != nil {
			return nil, usageErr("%s: %w", where(cmd, "metrics-textfile", "metrics.textfile"), err)
		}
	}
	if addr := optString(cmd, "metrics-addr", "metrics.addr"); addr != "" {
		l, err := livemetrics.Listen(addr)
		if err != nil {
			return nil, usageErr("%s: %v", where(cmd, "metrics-addr", "metrics.addr"), err)
		}
		lm.l = l
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: metrics on http://%s/metrics\n", cmd.CommandPath(), l.Addr())
	}
	return lm, nil
}

// start makes the metrics of the recording with header h and serves them;
// nil when neither flag was given.
func (lm *liveMetrics) start(h capture.Header) *metricsSink {
	if lm.l == nil && lm.textfile == "" {
		return nil
	}
	m := livemetrics.New(h)
	if lm.l != nil {
		lm.stop = m.Serve(lm.l)
	}
	return &metricsSink{m: m, textfile: lm.textfile, stderr: lm.stderr}
}

func (lm *liveMetrics) close() {
	if lm.stop != nil {
		lm.stop()
	} else if lm.l != nil {
		lm.l.Close()
	}
}

// metricsSink feeds the live metrics; its methods do nothing on nil.
type metricsSink struct {
	m         *livemetrics.Metrics
	textfile  string
	stderr    io.Writer
	failed    bool
	lastWrite time.Time // of the textfile, rewritten at most once a second
}

func (s *metricsSink) samples(b *meter.Block) {
	if s != nil {
		s.m.Samples(b)
	}
}

func (s *metricsSink) gap(g meter.Gap) {
	if s != nil {
		s.m.Gap(g)
	}
}

// stats takes the link counters (every capture/record.MarkInterval, and
// at the end) and refreshes the textfile once a second; final forces it.
func (s *metricsSink) stats(st meter.Stats, final bool) {
	if s == nil {
		return
	}
	s.m.Stats(st)
	if !final && time.Since(s.lastWrite) < time.Second {
		return
	}
	s.lastWrite = time.Now()
	if s.textfile != "" && !s.failed {
		if err := s.m.WriteTextfile(s.textfile); err != nil {
			s.failed = true // once: a metrics file must not stop a recording
			fmt.Fprintf(s.stderr, "idlewatt: metrics textfile %s: %v (no more updates)\n", s.textfile, err)
		}
	}
}

// metricsObserver feeds a measure run's records to the live metrics
// (rig.Observer): samples, gaps, link stats, phases as the state gauge, DevSlp
// cycles; verdicts come from the run's result.
type metricsObserver struct {
	lm *liveMetrics
	s  *metricsSink // set by Start, before the rig streams
}

func (o *metricsObserver) Start(h capture.Header) { o.s = o.lm.start(h) }
func (o *metricsObserver) Samples(b *meter.Block) { o.s.samples(b) }
func (o *metricsObserver) Gap(g meter.Gap)        { o.s.gap(g) }
func (o *metricsObserver) Stats(st meter.Stats)   { o.s.stats(st, false) }
func (o *metricsObserver) State(e capture.StateEvent) {
	if o.s == nil || e.Kind != capture.StatePhase {
		return
	}
	// One series per phase kind, not per cycle: "devslp-cycle:3" is the
	// state "devslp-cycle" (its number is in idlewatt_devslp_cycles_total).
	if strings.HasPrefix(e.Value, "devslp-cycle:") {
		o.s.m.State(e.Port, "devslp-cycle")
		o.s.m.DevSlpCycle(e.Port)
		return
	}
	o.s.m.State(e.Port, e.Value)
}

// verdicts counts the run's DevSlp verdicts and leaves the final figures in
// the textfile.
func (o *metricsObserver) verdicts(res *rig.Result) {
	if o.s == nil {
		return
	}
	for p, v := range res.DevSlp {
		if port, err := strconv.Atoi(p); err == nil {
			o.s.m.DevSlpVerdict(port, string(v.Outcome))
		}
	}
	o.s.stats(o.s.m.LastStats(), true)
}
