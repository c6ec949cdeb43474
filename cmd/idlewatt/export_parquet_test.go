package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/idlewatt/idlewatt/analysis/synthcap"
)

// export --parquet from the command line writes the four tables, with the
// detected state intervals in state.parquet (rows read back with Arrow's
// reader).
func TestExportParquetStates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "review.iwcap")
	if err := synthcap.Write(path, synthcap.Review(2*time.Minute, 1000, 0)); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "pq")
	if _, errOut, code := run(t, context.Background(), "export", path, "--parquet", out); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, f := range []string{"samples.parquet", "io.parquet", "state.parquet", "summary.parquet"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := file.OpenParquetFile(filepath.Join(out, "state.parquet"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.NumRows() < 4 {
		t.Fatalf("state.parquet has %d rows, want the drives' state intervals", r.NumRows())
	}
	for _, col := range []string{"drive", "state", "start_s", "end_s", "duration_s", "mean_power_w", "energy_j"} {
		if r.MetaData().Schema.ColumnIndexByName(col) < 0 {
			t.Errorf("state.parquet has no column %s", col)
		}
	}
}
