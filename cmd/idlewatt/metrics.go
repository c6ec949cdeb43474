package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/app/rig"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/report/livemetrics"
)

// openMetrics reads --metrics-addr and --metrics-textfile into the
// recording's observer (livemetrics.Observer), opening the listener before
// recording so an address in use fails first. The caller closes it.
func openMetrics(cmd *cobra.Command, oo outfile.Options, writes func(path string) bool) (*livemetrics.Observer, error) {
	o := &livemetrics.Observer{Textfile: optString(cmd, "metrics-textfile", "metrics.textfile"), Log: cmd.ErrOrStderr()}
	if o.Textfile != "" {
		if err := outfile.Check(o.Textfile, oo); err != nil {
			return nil, usageErr("%s: %w", where(cmd, "metrics-textfile", "metrics.textfile"), err)
		}
		// The textfile is rewritten every second: one of the command's own
		// outputs (record --out c.iwcap --metrics-textfile c.iwcap, or
		// measure's OUT/capture.iwcap) was replaced by the metrics, exit 0.
		if writes != nil && writes(o.Textfile) {
			return nil, usageErr("%s: %s is also an output of this command (the metrics would replace it); name another file",
				where(cmd, "metrics-textfile", "metrics.textfile"), o.Textfile)
		}
	}
	if addr := optString(cmd, "metrics-addr", "metrics.addr"); addr != "" {
		l, err := livemetrics.Listen(addr)
		if err != nil {
			return nil, usageErr("%s: %v", where(cmd, "metrics-addr", "metrics.addr"), err)
		}
		o.Listener = l
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: metrics on http://%s/metrics\n", cmd.CommandPath(), l.Addr())
	}
	return o, nil
}

// metricsVerdicts counts a run's DevSlp verdicts and leaves the final
// figures in the textfile.
func metricsVerdicts(o *livemetrics.Observer, res *rig.Result) {
	m := o.Metrics()
	if m == nil {
		return
	}
	for p, v := range res.DevSlp {
		if port, err := strconv.Atoi(p); err == nil {
			o.Verdict(port, string(v.Outcome))
		}
	}
	o.Flush(m.LastStats())
}

// samePath reports whether a and b name the same file: the same absolute
// path, or the same inode when both exist.
func samePath(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	if err1 == nil && err2 == nil && aa == bb {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}
