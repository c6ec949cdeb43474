package report

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/units"
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
	w1, j1, s1 := csvFloat[units.Watts], csvFloat[units.Joules], csvFloat[units.Seconds]
	wu, ju := csvPtr[units.Watts], csvPtr[units.Joules]
	for _, d := range r.Drives {
		row := func(phase string, dur units.Seconds, ai, avg, pk units.Watts, pw analysis.PeakWindows, p50, p95, p99 units.Watts, e units.Joules, s analysis.Segments, io analysis.IOTotals, n uint64, uai, uavg *units.Watts, ue *units.Joules, b analysis.Bursts) {
			cw.Write([]string{d.Name, strconv.Itoa(d.Port), phase, s1(dur), w1(ai), w1(avg), w1(pk), w1(pw.W1ms), w1(pw.W10ms), w1(pw.W100ms), w1(pw.W1s),
				w1(p50), w1(p95), w1(p99), j1(e), s1(s.BusyS), s1(s.SettleS), s1(s.IdleS), strconv.FormatUint(io.Ops, 10), strconv.FormatUint(io.Bytes, 10), strconv.FormatUint(n, 10),
				wu(uai), wu(uavg), ju(ue), csvFloat(b.Share), j1(b.EnergyJ)})
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
