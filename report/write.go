package report

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
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
}

// WriteFiles writes report.json, report.md and summary.csv into dir
// (created if needed) and, when the report has samples, the charts
// power.png, active-idle.png, average.png, power-hist.png and power-cdf.png.
// It refuses to replace an existing file; see WriteFilesWith.
func WriteFiles(r *analysis.Report, dir string) error { return WriteFilesWith(r, dir, WriteOptions{}) }

// WriteFilesWith writes what WriteFiles writes under o. Every file goes
// through a temporary file renamed into place.
func WriteFilesWith(r *analysis.Report, dir string, o WriteOptions) error {
	if err := outfile.Dir(dir); err != nil {
		return err
	}
	fo := o.Out
	if r.Capture.Path != "" {
		fo.Inputs = append(fo.Inputs[:len(fo.Inputs):len(fo.Inputs)], r.Capture.Path)
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, r); err != nil {
		return err
	}
	var md bytes.Buffer
	WriteMarkdown(&md, r)
	md.Write(o.MarkdownAppendix)
	var cs bytes.Buffer
	if err := WriteCSV(&cs, r); err != nil {
		return err
	}
	files := []struct {
		name string
		b    []byte
	}{{FileJSON, js.Bytes()}, {FileMD, md.Bytes()}, {FileCSV, cs.Bytes()}}
	if r.States != nil {
		var st bytes.Buffer
		if err := WriteStatesJSON(&st, r); err != nil {
			return err
		}
		files = append(files, struct {
			name string
			b    []byte
		}{FileStates, st.Bytes()})
	}
	for _, f := range files {
		if err := outfile.WriteFile(filepath.Join(dir, f.name), f.b, fo); err != nil {
			return err
		}
	}
	return writeCharts(r, dir, fo)
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

func g(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// csvFloat formats a CSV value: 6 decimals, empty when not measured (NaN).
func csvFloat(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	return strconv.FormatFloat(x, 'f', 6, 64)
}
