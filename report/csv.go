package report

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"

	"github.com/idlewatt/idlewatt/analysis"
)

// CSVHeader is summary.csv's header row.
var CSVHeader = []string{"drive", "port", "phase", "duration_s", "active_idle_w", "average_w", "peak_w",
	"peak_1ms_w", "peak_10ms_w", "peak_100ms_w", "peak_1s_w", "p50_w", "p95_w", "p99_w", "energy_j",
	"busy_s", "settle_s", "idle_s", "io_ops", "io_bytes", "samples",
	"active_idle_u95_w", "average_u95_w", "energy_u95_j", "burst_share", "burst_energy_j"}

// WriteCSV writes summary.csv: one row per drive for the whole capture
// (phase "all") and one per drive × phase.
func WriteCSV(w io.Writer, r *analysis.Report) error {
	cw := csv.NewWriter(w)
	cw.Write(CSVHeader)
	f := csvFloat
	fu := func(u *float64) string {
		if u == nil {
			return ""
		}
		return f(*u)
	}
	for _, d := range r.Drives {
		row := func(phase string, dur, ai, avg, pk float64, pw analysis.PeakWindows, p50, p95, p99, e float64, s analysis.Segments, io analysis.IOTotals, n uint64, uai, uavg, ue *float64, b analysis.Bursts) {
			cw.Write([]string{d.Name, strconv.Itoa(d.Port), phase, f(dur), f(ai), f(avg), f(pk), f(pw.W1ms), f(pw.W10ms), f(pw.W100ms), f(pw.W1s),
				f(p50), f(p95), f(p99), f(e), f(s.BusyS), f(s.SettleS), f(s.IdleS), strconv.FormatUint(io.Ops, 10), strconv.FormatUint(io.Bytes, 10), strconv.FormatUint(n, 10),
				fu(uai), fu(uavg), fu(ue), f(b.Share), f(b.EnergyJ)})
		}
		row("all", d.DurationS, d.ActiveIdleW, d.AverageW, d.PeakW, d.PeakWindows, d.P50W, d.P95W, d.P99W, d.EnergyJ, d.Segments, d.IO, d.Samples.Count,
			d.ActiveIdleU95W, d.AverageU95W, d.EnergyU95J, d.Bursts)
		for _, ph := range d.Phases {
			row(strings.TrimSpace(ph.Name), ph.DurationS, ph.ActiveIdleW, ph.AverageW, ph.PeakW, ph.PeakWindows, ph.P50W, ph.P95W, ph.P99W, ph.EnergyJ, ph.Segments, ph.IO, ph.Samples,
				ph.ActiveIdleU95W, ph.AverageU95W, ph.EnergyU95J, ph.Bursts)
		}
	}
	cw.Flush()
	return cw.Error()
}
