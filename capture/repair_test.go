package capture_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/outfile"
)

// countCapture reads a clean capture whole: its channel samples and its host state notes.
func countCapture(t *testing.T, path string) (samples uint64, notes []string, acc capture.Account) {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return samples, notes, r.Account()
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err) // only clean captures are read here
		}
		switch rec.Kind {
		case capture.KindSamples:
			samples += uint64(rec.Block.Len())
		case capture.KindState:
			if rec.State.Kind == capture.StateNote {
				notes = append(notes, rec.State.Value)
			}
		}
	}
}

// TestRepair: a damaged capture becomes a clean one holding every sample
// Salvage counted, with the damage recorded as notes; an intact one is
// copied whole without notes; each early failure names its stage and
// leaves nothing behind.
func TestRepair(t *testing.T) {
	dir := t.TempDir()
	in := "../fixtures/hostile/six-seconds-damaged.iwcap"
	out := filepath.Join(dir, "fixed.iwcap")
	res, err := capture.Repair(context.Background(), in, out, outfile.Options{Inputs: []string{in}})
	if err != nil {
		t.Fatal(err)
	}
	got, notes, acc := countCapture(t, out)
	if got != res.Samples || got == 0 || acc.DamageRegions != 0 {
		t.Errorf("repaired: %d samples read back (%d damage regions), Repair says %d", got, acc.DamageRegions, res.Samples)
	}
	if res.Account.DamageRegions == 0 || len(notes) == 0 || !strings.HasPrefix(notes[0], "repaired from six-seconds-damaged.iwcap: ") {
		t.Errorf("input account %+v, notes %q: want the damage found and noted", res.Account, notes)
	}

	intact := "../fixtures/hostile/six-seconds.iwcap"
	whole, _, _ := countCapture(t, intact)
	res, err = capture.Repair(context.Background(), intact, filepath.Join(dir, "copy.iwcap"), outfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, notes, _ := countCapture(t, filepath.Join(dir, "copy.iwcap")); res.Samples != whole || len(notes) != 0 {
		t.Errorf("intact input: %d of %d samples, notes %q", res.Samples, whole, notes)
	}

	if _, err := capture.Repair(context.Background(), filepath.Join(dir, "missing.iwcap"), filepath.Join(dir, "x.iwcap"), outfile.Options{}); !errors.Is(err, capture.ErrRepairInput) {
		t.Errorf("missing input: %v, want ErrRepairInput", err)
	}
	_, err = capture.Repair(context.Background(), intact, out, outfile.Options{}) // out exists, no Overwrite
	if !errors.Is(err, capture.ErrRepairCreate) || !errors.Is(err, outfile.ErrRefused) {
		t.Errorf("existing output: %v, want ErrRepairCreate and outfile.ErrRefused", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.iwcap")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed repair left its output: %v", err)
	}
}
