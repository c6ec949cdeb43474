package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/internal/outfile"
)

// The files WriteFiles writes into its directory.
const (
	FileJSON    = "report.json"
	FileMD      = "report.md"
	FileCSV     = "summary.csv"
	FilePower   = "power.png"
	FileIdle    = "active-idle.png"
	FileAverage = "average.png"
	FileHist    = "power-hist.png"
	FileCDF     = "power-cdf.png"
)

// Files are the names WriteFiles may write (charts only when they have
// data), for checking a directory before the work starts.
var Files = []string{FileJSON, FileMD, FileCSV, FilePower, FileIdle, FileAverage, FileHist, FileCDF, FileStates}

// WriteOptions say how WriteFilesWith writes.
type WriteOptions struct {
	// Out says what may be replaced (internal/outfile): existing files only
	// with Out.Overwrite, never through a symbolic link or over an input.
	// The capture the report is of is always an input.
	Out outfile.Options
	// MarkdownAppendix is appended to report.md (the interface-state
	// section app/rig adds), so report.md is written once, whole.
	MarkdownAppendix []byte
	// Stop, if set, is asked before each file is built and before any is
	// put in place; its error (a signal) is returned and nothing is left
	// under a final name.
	Stop func() error
}

// Output is one file of a report: its name in the report directory and its
// bytes.
type Output struct {
	Name string
	Data []byte
}

// WriteFiles writes report.json, report.md and summary.csv into dir
// (created if needed) and, when the report has samples, the charts
// power.png, active-idle.png, average.png, power-hist.png and power-cdf.png.
// It refuses to replace an existing file; see WriteFilesWith.
func WriteFiles(r *analysis.Report, dir string) error { return WriteFilesWith(r, dir, WriteOptions{}) }

// WriteFilesWith writes what WriteFiles writes under o: Build, then
// WriteOutputs, so that no file is under its name before every file is
// built and written.
func WriteFilesWith(r *analysis.Report, dir string, o WriteOptions) error {
	outs, err := Build(r, o) // a chart that failed to render: the others are written, and err says which
	if outs == nil {
		return err
	}
	fo := o.Out
	if r.Capture.Path != "" {
		fo.Inputs = append(fo.Inputs[:len(fo.Inputs):len(fo.Inputs)], r.Capture.Path)
	}
	return errors.Join(WriteOutputs(dir, outs, fo, o.Stop), err)
}

// Build renders every file of the report in memory: report.json, report.md,
// summary.csv, states.json (with state detection) and the charts that have
// data (of at most MaxChartDrives drives: then r.Notes gains the note that
// says so, before report.json and report.md are built). A chart that fails
// to render is left out and its error joined to the result, as before; a
// Stop error ends the build.
func Build(r *analysis.Report, o WriteOptions) ([]Output, error) {
	noteChartDrives(r)
	stop := func() error {
		if o.Stop != nil {
			return o.Stop()
		}
		return nil
	}
	if err := stop(); err != nil {
		return nil, err
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, r); err != nil {
		return nil, err
	}
	var md bytes.Buffer
	WriteMarkdown(&md, r)
	md.Write(o.MarkdownAppendix)
	var cs bytes.Buffer
	if err := WriteCSV(&cs, r); err != nil {
		return nil, err
	}
	outs := []Output{{FileJSON, js.Bytes()}, {FileMD, md.Bytes()}, {FileCSV, cs.Bytes()}}
	if r.States != nil {
		var st bytes.Buffer
		if err := WriteStatesJSON(&st, r); err != nil {
			return nil, err
		}
		outs = append(outs, Output{FileStates, st.Bytes()})
	}
	charts, err := buildCharts(r, o.Stop)
	if serr := stop(); serr != nil {
		return nil, serr
	}
	return append(outs, charts...), err
}

// WriteOutputs writes outs into dir (created if needed) through temporary
// files, and renames them into place only once every one is written and
// stop (if set) has no objection: a failure or a signal leaves no file under
// its name and old files as they were.
func WriteOutputs(dir string, outs []Output, o outfile.Options, stop func() error) (err error) {
	_, statErr := os.Lstat(dir)
	if err := outfile.Dir(dir); err != nil {
		return err
	}
	var files []*outfile.File
	defer func() {
		for _, f := range files {
			f.Abort() // no-op after Commit
		}
		if err != nil && os.IsNotExist(statErr) {
			os.Remove(dir) // made here, and empty again: nothing is left
		}
	}()
	for _, out := range outs {
		if stop != nil {
			if err := stop(); err != nil {
				return err
			}
		}
		f, err := outfile.Create(filepath.Join(dir, out.Name), o)
		if err != nil {
			return err
		}
		files = append(files, f)
		if _, err := f.Write(out.Data); err != nil {
			return err
		}
	}
	if stop != nil {
		if err := stop(); err != nil {
			return err
		}
	}
	for _, f := range files {
		if err := f.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// FileMeasure is a measuring run's results (app/rig.Result), written
// by WriteJSONFile.
const FileMeasure = "measure.json"

// FileIdleRun is an idle run's results (app/rig.IdleResult), written by
// WriteJSONFile.
const FileIdleRun = "idle.json"

// WriteJSONFile writes v as indented JSON with a final newline to path,
// through internal/outfile under o (a temporary file renamed into place,
// refusing an existing file without o.Overwrite): measure.json, idle.json.
func WriteJSONFile(path string, v any, o outfile.Options) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return outfile.WriteFile(path, append(b, '\n'), o)
}

// WriteJSON writes report.json's content.
func WriteJSON(w io.Writer, r *analysis.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func g[Q ~float64](x Q) string { return strconv.FormatFloat(float64(x), 'g', -1, 64) }

// csvFloat formats a CSV value: 6 decimals, empty when not measured (NaN).
func csvFloat[Q ~float64](x Q) string {
	if math.IsNaN(float64(x)) {
		return ""
	}
	return strconv.FormatFloat(float64(x), 'f', 6, 64)
}

// csvPtr is csvFloat of *u, empty for nil (no interval stated).
func csvPtr[Q ~float64](u *Q) string {
	if u == nil {
		return ""
	}
	return csvFloat(*u)
}
