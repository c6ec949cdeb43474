package pqexport

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	pq "github.com/parquet-go/parquet-go"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/meter"
)

// SampleRow is one drive at one sample index. A row with GapSamples > 0
// marks indices [SampleIndex, SampleIndex+GapSamples) missing on every
// channel; its values are null. A rail the drive lacks, or a sample one rail
// lacks, is null too; PowerW is null unless every rail of the drive is
// present (as analysis counts a drive sample).
type SampleRow struct {
	TimeS       float64  `parquet:"time_s"` // sample_index / rate_hz: the meter's clock
	SampleIndex int64    `parquet:"sample_index"`
	Port        int32    `parquet:"port"`
	GapSamples  int64    `parquet:"gap_samples"`
	V5          *float64 `parquet:"rail5_v,optional"`
	A5          *float64 `parquet:"rail5_a,optional"`
	W5          *float64 `parquet:"rail5_w,optional"`
	V12         *float64 `parquet:"rail12_v,optional"`
	A12         *float64 `parquet:"rail12_a,optional"`
	W12         *float64 `parquet:"rail12_w,optional"`
	V33         *float64 `parquet:"rail3v3_v,optional"`
	A33         *float64 `parquet:"rail3v3_a,optional"`
	W33         *float64 `parquet:"rail3v3_w,optional"`
	PowerW      *float64 `parquet:"power_w,optional"`
}

// IORow is one completed I/O.
type IORow struct {
	Port       int32  `parquet:"port"`
	Op         string `parquet:"op,dict"`
	OffsetB    int64  `parquet:"offset_bytes"`
	SizeB      int32  `parquet:"size_bytes"`
	IssueNS    int64  `parquet:"issue_ns"` // host CLOCK_MONOTONIC
	CompleteNS int64  `parquet:"complete_ns"`
	Failed     bool   `parquet:"failed"`
}

// StateRow is one detected state interval of one drive (analysis's
// StateReport.Intervals: the intervals states.json counts and averages).
type StateRow struct {
	RunID     string  `parquet:"run_id"`
	Drive     string  `parquet:"drive"`
	Port      int32   `parquet:"port"`
	State     string  `parquet:"state,dict"` // active | background | idle | partial | slumber | devslp | off
	StartS    float64 `parquet:"start_s"`    // from the host time of sample index 0 (aligned clock)
	EndS      float64 `parquet:"end_s"`
	DurationS float64 `parquet:"duration_s"`
	StartNS   int64   `parquet:"start_ns"` // host CLOCK_MONOTONIC, as io.parquet's issue_ns
	EndNS     int64   `parquet:"end_ns"`
	Samples   int64   `parquet:"samples_count"`
	MeanW     float64 `parquet:"mean_power_w"`
	EnergyJ   float64 `parquet:"energy_j"`
}

// SummaryRow is one drive of one run: metadata and report.json's figures.
type SummaryRow struct {
	RunID         string   `parquet:"run_id"` // the capture's base name
	Capture       string   `parquet:"capture"`
	Created       string   `parquet:"created"` // RFC 3339
	Host          string   `parquet:"host"`
	Tool          string   `parquet:"tool"` // "idlewatt vX"
	MeterKind     string   `parquet:"meter_kind"`
	MeterModel    string   `parquet:"meter_model"`
	MeterFirmware string   `parquet:"meter_firmware"`
	MeterSerial   string   `parquet:"meter_serial"`
	Drive         string   `parquet:"drive"`
	DriveModel    string   `parquet:"drive_model"`
	DriveFirmware string   `parquet:"drive_firmware"`
	Port          int32    `parquet:"port"`
	Profile       string   `parquet:"profile"`
	Target        string   `parquet:"target"`
	Policy        string   `parquet:"policy"` // last ALPM policy the run set on the drive's port (or all ports)
	RateHz        float64  `parquet:"rate_hz"`
	ActiveIdleW   float64  `parquet:"active_idle_w"`
	AverageW      float64  `parquet:"average_w"`
	PeakW         float64  `parquet:"peak_w"`
	MinW          float64  `parquet:"min_w"`
	P50W          float64  `parquet:"p50_w"`
	P95W          float64  `parquet:"p95_w"`
	P99W          float64  `parquet:"p99_w"`
	EnergyJ       float64  `parquet:"energy_j"`
	DurationS     float64  `parquet:"duration_s"`
	ResActive     float64  `parquet:"residency_active"`
	ResIdle       float64  `parquet:"residency_idle"`
	ResPartial    float64  `parquet:"residency_partial"`
	ResSlumber    float64  `parquet:"residency_slumber"`
	ResDevSlp     float64  `parquet:"residency_devslp"`
	ActiveIdleU95 *float64 `parquet:"active_idle_u95_w,optional"` // 95 % expanded uncertainty; null when not estimable
	AverageU95    *float64 `parquet:"average_u95_w,optional"`
	EnergyU95     *float64 `parquet:"energy_u95_j,optional"`
	DevSlpOutcome string   `parquet:"devslp_outcome"` // pass | fail | inconclusive | not_supported; empty without cycles
	DevSlpEntered bool     `parquet:"devslp_entered"`
	DevSlpW       float64  `parquet:"devslp_power_w"`
	DevSlpEntryMS float64  `parquet:"devslp_entry_ms"`
	DevSlpExitMS  float64  `parquet:"devslp_exit_ms"`
	DevSlpCycles  int32    `parquet:"devslp_cycles"`
	Samples       int64    `parquet:"samples_count"`
	Dropped       int64    `parquet:"samples_dropped"`
	CRCErrors     int64    `parquet:"crc_errors"`
}

// RowGroupRows is the rows per row group.
const RowGroupRows = 1 << 20

// Options control Write.
type Options struct {
	Overwrite bool // replace an existing DIR's files
	Host      string
	// Stop, if set, is asked at every row group and record batch; its
	// error (a signal) ends the export, and nothing is left under a final
	// name (a directory Write created is removed).
	Stop func() error
}

// Files are the files Write makes in DIR.
var Files = []string{"samples.parquet", "io.parquet", "state.parquet", "summary.parquet"}

// Write exports the capture at path, with its report rep, into dir. dir must
// not exist (it is created) unless o.Overwrite; files are written through
// temporary files renamed into place, never through a symbolic link.
func Write(path string, rep *analysis.Report, dir string, o Options) (err error) {
	stop := func() error {
		if o.Stop != nil {
			return o.Stop()
		}
		return nil
	}
	if err := stop(); err != nil {
		return err
	}
	created := true
	if err := os.Mkdir(dir, 0o755); err != nil {
		if !errors.Is(err, os.ErrExist) || !o.Overwrite {
			if errors.Is(err, os.ErrExist) {
				return fmt.Errorf("%s exists: %w (--overwrite replaces its Parquet files)", dir, outfile.ErrRefused)
			}
			return err
		}
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
			return fmt.Errorf("%s is not a directory: %w", dir, outfile.ErrRefused)
		}
		created = false
	}
	// The four files are written to temporary files and renamed into
	// place together at the end: a failure or a signal half way leaves none
	// of them (and no directory Write made).
	var files []*outfile.File
	defer func() {
		for _, f := range files {
			f.Abort() // no-op after Commit
		}
		if err != nil && created {
			os.Remove(dir) // only if empty: nothing of anyone else's goes
		}
	}()
	oo := outfile.Options{Overwrite: o.Overwrite, Inputs: []string{path}}
	stage := func(name string, fill func(io.Writer) error) error {
		f, err := outfile.Create(filepath.Join(dir, name), oo)
		if err != nil {
			return err
		}
		files = append(files, f)
		if err := fill(f); err != nil {
			return fmt.Errorf("%s: %w", f.Name(), err)
		}
		return nil
	}
	r, err := capture.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	h := r.Header()
	if err := stage("samples.parquet", func(w io.Writer) error { return writeSamples(w, r, &h, stop) }); err != nil {
		return err
	}
	r2, err := capture.Open(path)
	if err != nil {
		return err
	}
	defer r2.Close()
	r2.SkipSamples(true)
	policy := map[int]string{}
	if err := stage("io.parquet", func(w io.Writer) error { return writeIO(w, r2, policy, stop) }); err != nil {
		return err
	}
	if err := stage("state.parquet", func(w io.Writer) error { return writeStates(w, path, rep) }); err != nil {
		return err
	}
	if err := stage("summary.parquet", func(w io.Writer) error {
		return writeSummary(w, path, &h, rep, policy, o.Host)
	}); err != nil {
		return err
	}
	if err := stop(); err != nil {
		return err
	}
	for _, f := range files {
		if err := f.Commit(); err != nil {
			return err
		}
	}
	return nil
}

func writerOpts() []pq.WriterOption {
	return []pq.WriterOption{pq.Compression(&pq.Zstd), pq.MaxRowsPerRowGroup(RowGroupRows)}
}

// writeSamples writes one row per drive per sample index.
func writeSamples(w io.Writer, r *capture.Reader, h *capture.Header, stop func() error) error {
	pw := pq.NewGenericWriter[SampleRow](w, writerOpts()...)
	var ports []int
	at := map[int]int{}
	for _, c := range h.Channels {
		if _, ok := at[c.Port]; !ok {
			at[c.Port] = len(ports)
			ports = append(ports, c.Port)
		}
	}
	rows := capture.NewRows(r)
	buf := make([]SampleRow, 0, 4096)
	vals := make([]float64, 0, 4096*9)
	flush := func() error {
		if _, err := pw.Write(buf); err != nil {
			return err
		}
		buf, vals = buf[:0], vals[:0]
		return nil
	}
	ptr := func(x float64) *float64 {
		vals = append(vals, x)
		return &vals[len(vals)-1]
	}
	for {
		row, err := rows.Next()
		if err == io.EOF || errors.Is(err, capture.ErrTruncated) {
			break
		}
		if err != nil {
			return err
		}
		if len(buf)+len(ports) > cap(buf) || len(vals)+9*len(ports) > cap(vals) {
			if err := stop(); err != nil {
				return err
			}
			if err := flush(); err != nil {
				return err
			}
		}
		t := float64(row.Index) / float64(h.RateHz)
		for _, port := range ports {
			sr := SampleRow{TimeS: t, SampleIndex: int64(row.Index), Port: int32(port), GapSamples: int64(row.Gap)}
			if row.Gap == 0 {
				all, any := true, false
				var sum float64
				for c, ch := range h.Channels {
					if ch.Port != port {
						continue
					}
					if !row.Present[c] {
						all = false
						continue
					}
					v, i := float64(row.V[c]), float64(row.I[c])
					p := v * i
					sum += p
					any = true
					switch ch.Rail {
					case meter.Rail5V:
						sr.V5, sr.A5, sr.W5 = ptr(v), ptr(i), ptr(p)
					case meter.Rail12V:
						sr.V12, sr.A12, sr.W12 = ptr(v), ptr(i), ptr(p)
					case meter.Rail3V3:
						sr.V33, sr.A33, sr.W33 = ptr(v), ptr(i), ptr(p)
					}
				}
				if all && any {
					sr.PowerW = ptr(sum)
				}
			}
			buf = append(buf, sr)
		}
	}
	if err := flush(); err != nil {
		return err
	}
	return pw.Close()
}

func writeIO(w io.Writer, r *capture.Reader, policy map[int]string, stop func() error) error {
	pw := pq.NewGenericWriter[IORow](w, writerOpts()...)
	var buf []IORow
	for {
		if err := stop(); err != nil {
			return err
		}
		rec, err := r.Next()
		if err != nil {
			break
		}
		switch rec.Kind {
		case capture.KindIO:
			for _, e := range rec.IO {
				buf = append(buf, IORow{Port: int32(e.Port), Op: e.Op.String(), OffsetB: e.Offset, SizeB: e.Size,
					IssueNS: int64(e.Issue), CompleteNS: int64(e.Complete), Failed: e.Err})
			}
			if len(buf) >= 4096 {
				if _, err := pw.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		case capture.KindState:
			if rec.State.Kind == capture.StatePolicy {
				policy[rec.State.Port] = rec.State.Value
			}
		}
	}
	if _, err := pw.Write(buf); err != nil {
		return err
	}
	return pw.Close()
}

// writeStates writes one row per detected state interval per drive; a
// report without state detection gives an empty table (schema only).
func writeStates(w io.Writer, path string, rep *analysis.Report) error {
	pw := pq.NewGenericWriter[StateRow](w, writerOpts()...)
	base := filepath.Base(path)
	names := map[int]string{}
	for _, d := range rep.Drives {
		names[d.Port] = d.Name
	}
	var buf []StateRow
	for i := range rep.States {
		st := &rep.States[i]
		name := names[st.Port]
		if name == "" {
			name = st.Name
		}
		for _, iv := range st.Intervals() {
			buf = append(buf, StateRow{RunID: base, Drive: name, Port: int32(st.Port), State: iv.State,
				StartS: iv.StartS, EndS: iv.EndS, DurationS: iv.DurationS(), StartNS: int64(iv.StartNs), EndNS: int64(iv.EndNs),
				Samples: int64(iv.Samples), MeanW: float64(iv.MeanW), EnergyJ: float64(iv.EnergyJ)})
			if len(buf) >= 4096 {
				if _, err := pw.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
	}
	if _, err := pw.Write(buf); err != nil {
		return err
	}
	return pw.Close()
}

func writeSummary(w io.Writer, path string, h *capture.Header, rep *analysis.Report, policy map[int]string, host string) error {
	pw := pq.NewGenericWriter[SummaryRow](w, writerOpts()...)
	drives := map[int]capture.DriveInfo{}
	for _, d := range h.Drives {
		drives[d.Port] = d
	}
	base := filepath.Base(path)
	var rows []SummaryRow
	for _, d := range rep.Drives {
		di := drives[d.Port]
		pol := policy[d.Port]
		if pol == "" {
			pol = policy[0]
		}
		rows = append(rows, SummaryRow{
			RunID: base, Capture: path, Created: h.Created, Host: host, Tool: h.Tool,
			MeterKind: h.Meter.Kind, MeterModel: h.Meter.Model, MeterFirmware: h.Meter.Firmware, MeterSerial: h.Meter.Serial,
			Drive: d.Name, DriveModel: di.Model, DriveFirmware: di.Firmware, Port: int32(d.Port), Profile: firstNonEmpty(d.Profile, di.Profile), Target: di.Target, Policy: pol,
			RateHz: float64(h.RateHz), ActiveIdleW: d.ActiveIdleW, AverageW: d.AverageW, PeakW: d.PeakW, MinW: d.MinW,
			P50W: d.P50W, P95W: d.P95W, P99W: d.P99W, EnergyJ: d.EnergyJ, DurationS: d.DurationS,
			ResActive: d.Residency.Active, ResIdle: d.Residency.Idle, ResPartial: d.Residency.Partial,
			ResSlumber: d.Residency.Slumber, ResDevSlp: d.Residency.DevSlp,
			DevSlpEntered: d.DevSlp.Entered, DevSlpW: float64(d.DevSlp.PowerW), DevSlpEntryMS: float64(d.DevSlp.EntryMs), DevSlpExitMS: float64(d.DevSlp.ExitMs),
			DevSlpOutcome: string(d.DevSlp.Outcome), ActiveIdleU95: d.ActiveIdleU95W, AverageU95: d.AverageU95W, EnergyU95: d.EnergyU95J,
			DevSlpCycles: int32(d.DevSlp.Cycles), Samples: int64(d.Samples.Count), Dropped: int64(d.Samples.Dropped), CRCErrors: int64(d.Samples.CRCErrors),
		})
	}
	if _, err := pw.Write(rows); err != nil {
		return err
	}
	return pw.Close()
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
