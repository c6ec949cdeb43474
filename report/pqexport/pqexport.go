package pqexport

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	pq "github.com/parquet-go/parquet-go"
	zstdcodec "github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/outfile"
)

// SampleRow is one drive at one sample index. A row with GapSamples > 0
// marks indices [SampleIndex, SampleIndex+GapSamples) missing on every
// channel; its values are null. A rail the drive lacks, or a sample one rail
// lacks, is null too; PowerW is null unless every rail of the drive is
// present (as analysis counts a drive sample).
//
// The readings are float32 (Parquet FLOAT): a capture stores every volt and
// ampere reading as a float32 (capture-format.md, encodings 0–2), so V and A
// are the capture's readings bit for bit; PowerW (the sum of a drive's V × A
// over its channels in header order) is computed in double and rounded to
// float32, within 2⁻²⁴ relative of the double (docs/lab.md says why that is
// far below a meter's resolution). TimeS stays double: at 10 kS/s a float32
// count of seconds no longer tells consecutive samples apart after 1024 s.
//
// A rail's watts have no column (schema SamplesSchema; v1 had rail5_w,
// rail12_w and rail3v3_w): they are V × A rounded to float32, which a
// reader's FLOAT multiplication (DuckDB's rail5_v * rail5_a, Arrow's
// multiply, float32 in Go) gives bit for bit — the product of two float32s
// is exact in double, and both round that once. Stored, they were a third
// copy of the current's noise in a noisy capture (docs/lab.md). PowerW
// stays: it is what queries ask for, and it is not always the rails' sum (a
// channel on no named rail, two channels on one rail).
type SampleRow struct {
	RunID       string   `parquet:"run_id,dict"`  // capture.RunID: differs between runs
	TimeS       float64  `parquet:"time_s,split"` // sample_index / rate_hz: the meter's clock
	SampleIndex int64    `parquet:"sample_index,delta"`
	Port        int32    `parquet:"port,delta"`
	GapSamples  int64    `parquet:"gap_samples,delta"`
	V5          *float32 `parquet:"rail5_v,optional,dict"`
	A5          *float32 `parquet:"rail5_a,optional,dict"`
	V12         *float32 `parquet:"rail12_v,optional,dict"`
	A12         *float32 `parquet:"rail12_a,optional,dict"`
	V33         *float32 `parquet:"rail3v3_v,optional,dict"`
	A33         *float32 `parquet:"rail3v3_a,optional,dict"`
	PowerW      *float32 `parquet:"power_w,optional,dict"`
}

// IORow is one completed I/O.
type IORow struct {
	RunID      string `parquet:"run_id,dict"`
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
	RunID     string  `parquet:"run_id,dict"`
	Drive     string  `parquet:"drive,dict"`
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
	RunID         string   `parquet:"run_id"` // capture.RunID: differs between runs
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
	ActiveIdleU95 *float64 `parquet:"active_idle_u95_w,optional,dict"` // 95 % expanded uncertainty; null when not estimable
	AverageU95    *float64 `parquet:"average_u95_w,optional,dict"`
	EnergyU95     *float64 `parquet:"energy_u95_j,optional,dict"`
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

// RowGroupRows is the most rows in a row group: of io, state and summary,
// and of one drive in samples.parquet (fewer there with more than 4 drives).
const RowGroupRows = 1 << 20

// Options control Write.
type Options struct {
	Overwrite bool // replace an existing DIR's files
	Host      string
	// Stop, if set, is asked at every batch of rows and records; its
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
	created, err := makeDir(dir, o.Overwrite)
	if err != nil {
		return err
	}
	oo := outfile.Options{Overwrite: o.Overwrite, Inputs: []string{path}}
	r, err := capture.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	h := r.Header()
	run := capture.RunID(h)
	r2, err := capture.Open(path)
	if err != nil {
		return err
	}
	defer r2.Close()
	r2.SkipSamples(true)
	// samples.parquet is nearly all the work; the other tables are written
	// meanwhile on the other core (they read the capture's I/O and state
	// records, or the report). Each file is committed only if all succeed.
	files := make([]*outfile.File, 0, len(Files))
	defer func() {
		for _, f := range files {
			f.Abort() // no-op after Commit
		}
		if err != nil && created {
			os.Remove(dir) // only if empty: nothing of anyone else's goes
		}
	}()
	for _, name := range Files {
		f, err := outfile.Create(filepath.Join(dir, name), oo)
		if err != nil {
			return err
		}
		files = append(files, f)
	}
	fs, fi, fst, fsum := files[0], files[1], files[2], files[3] // Files' order
	done := make(chan error, 1)
	policy := map[int]string{}
	go func() {
		if err := writeIO(fi, r2, run, policy, stop); err != nil {
			done <- fmt.Errorf("io.parquet: %w", err)
			return
		}
		if err := writeStates(fst, run, rep); err != nil {
			done <- fmt.Errorf("state.parquet: %w", err)
			return
		}
		done <- nil
	}()
	serr := writeSamples(fs, r, &h, run, stop)
	if err := <-done; err != nil {
		return err
	}
	if serr != nil {
		return fmt.Errorf("samples.parquet: %w", serr)
	}
	if err := writeSummary(fsum, path, run, &h, rep, policy, o.Host); err != nil {
		return fmt.Errorf("summary.parquet: %w", err)
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

// makeDir creates dir, or with overwrite accepts an existing directory
// (never a symbolic link or a file); created says which, so a failed
// export removes only a directory it made.
func makeDir(dir string, overwrite bool) (created bool, err error) {
	if err := os.Mkdir(dir, 0o755); err != nil {
		if !errors.Is(err, os.ErrExist) || !overwrite {
			if errors.Is(err, os.ErrExist) {
				return false, fmt.Errorf("%s exists: %w (--overwrite replaces its Parquet files)", dir, outfile.ErrRefused)
			}
			return false, err
		}
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
			return false, fmt.Errorf("%s is not a directory: %w", dir, outfile.ErrRefused)
		}
		return false, nil
	}
	return true, nil
}

// zstdFast is ZSTD at its fastest level: with dictionary and delta
// encodings doing most of the work, the default level's extra search buys
// little (measured in docs/lab.md) and cost most of the export's time.
var zstdFast = zstdcodec.Codec{Level: zstdcodec.SpeedFastest}

func writerOpts() []pq.WriterOption {
	return []pq.WriterOption{pq.Compression(&zstdFast), pq.MaxRowsPerRowGroup(RowGroupRows)}
}

func writeIO(w io.Writer, r *capture.Reader, run string, policy map[int]string, stop func() error) error {
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
				buf = append(buf, IORow{RunID: run, Port: int32(e.Port), Op: e.Op.String(), OffsetB: e.Offset, SizeB: e.Size,
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
func writeStates(w io.Writer, run string, rep *analysis.Report) error {
	pw := pq.NewGenericWriter[StateRow](w, writerOpts()...)
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
			buf = append(buf, StateRow{RunID: run, Drive: name, Port: int32(st.Port), State: iv.State,
				StartS: float64(iv.StartS), EndS: float64(iv.EndS), DurationS: float64(iv.DurationS()), StartNS: int64(iv.StartNs), EndNS: int64(iv.EndNs),
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

func writeSummary(w io.Writer, path, run string, h *capture.Header, rep *analysis.Report, policy map[int]string, host string) error {
	pw := pq.NewGenericWriter[SummaryRow](w, writerOpts()...)
	drives := map[int]capture.DriveInfo{}
	for _, d := range h.Drives {
		drives[d.Port] = d
	}
	var rows []SummaryRow
	for _, d := range rep.Drives {
		di := drives[d.Port]
		pol := policy[d.Port]
		if pol == "" {
			pol = policy[0]
		}
		rows = append(rows, SummaryRow{
			RunID: run, Capture: path, Created: h.Created, Host: host, Tool: h.Tool,
			MeterKind: h.Meter.Kind, MeterModel: h.Meter.Model, MeterFirmware: h.Meter.Firmware, MeterSerial: h.Meter.Serial,
			Drive: d.Name, DriveModel: di.Model, DriveFirmware: di.Firmware, Port: int32(d.Port), Profile: firstNonEmpty(d.Profile, di.Profile), Target: di.Target, Policy: pol,
			RateHz: float64(h.RateHz), ActiveIdleW: float64(d.ActiveIdleW), AverageW: float64(d.AverageW), PeakW: float64(d.PeakW), MinW: float64(d.MinW),
			P50W: float64(d.P50W), P95W: float64(d.P95W), P99W: float64(d.P99W), EnergyJ: float64(d.EnergyJ), DurationS: float64(d.DurationS),
			ResActive: d.Residency.Active, ResIdle: d.Residency.Idle, ResPartial: d.Residency.Partial,
			ResSlumber: d.Residency.Slumber, ResDevSlp: d.Residency.DevSlp,
			DevSlpEntered: d.DevSlp.Entered, DevSlpW: float64(d.DevSlp.PowerW), DevSlpEntryMS: float64(d.DevSlp.EntryMs), DevSlpExitMS: float64(d.DevSlp.ExitMs),
			DevSlpOutcome: string(d.DevSlp.Outcome), ActiveIdleU95: (*float64)(d.ActiveIdleU95W), AverageU95: (*float64)(d.AverageU95W), EnergyU95: (*float64)(d.EnergyU95J),
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
