package scpi_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/internal/conntest"
	"github.com/idlewatt/idlewatt/internal/serialport"
	"github.com/idlewatt/idlewatt/internal/testutil"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/scpi"
	"github.com/idlewatt/idlewatt/meter/scpi/scpiemu"
)

// session is one conversation with an instrument: identify, three
// current readings, a command it does not know (an error from the
// queue), and a clean queue after it.
func session(in *scpi.Instrument) (string, error) {
	fam := in.Family()
	var out []string
	out = append(out, fam.Name)
	cmd := fam.MeasCurr
	if strings.Contains(cmd, "%d") {
		cmd = fmt.Sprintf(cmd, 1)
	}
	for range 3 {
		r, err := in.Query(cmd)
		if err != nil {
			return "", err
		}
		x, err := scpi.ParseReading(r)
		if err != nil {
			return "", err
		}
		out = append(out, fmt.Sprint(x))
	}
	if err := in.Command("BOGUS:CMD"); !errors.Is(err, scpi.ErrInstrument) || !errors.Is(err, meter.ErrRejected) {
		return "", fmt.Errorf("an unknown command: %v, want the instrument's error", err)
	}
	if err := in.CheckErrors(); err != nil {
		return "", fmt.Errorf("queue after the error was read: %v", err)
	}
	return strings.Join(out, " "), nil
}

// TestPlayback plays recorded conversations with every family's emulated
// instrument (fixtures/conn/scpi-*.txt, written by -update from the
// emulator over a pty) to the driver with no emulator: the driver must
// write exactly what it wrote then, byte for byte, and read all it was
// sent. A change to what the driver says shows as a diff of the script.
func TestPlayback(t *testing.T) {
	fams := make([]string, 0, len(scpiemu.IDNs))
	for f := range scpiemu.IDNs {
		fams = append(fams, f)
	}
	sort.Strings(fams)
	for _, fam := range fams {
		t.Run(fam, func(t *testing.T) {
			path := filepath.Join("..", "..", "fixtures", "conn", "scpi-"+fam+".txt")
			if *testutil.Update {
				record(t, fam, path)
			}
			s, err := conntest.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -update ./meter/scpi records it)", err)
			}
			p := conntest.NewPlayback(s)
			in, err := scpi.New(p, scpi.Options{Timeout: replyTimeout})
			if err != nil {
				t.Fatal(err)
			}
			got, err := session(in)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(got, fam+" 0.0125 0.0125 0.0125") {
				t.Errorf("session %q", got)
			}
			p.Close()
			if err := p.Verify(); err != nil {
				t.Error(err)
			}
		})
	}
}

func record(t *testing.T, fam, path string) {
	emu := startEmu(t, scpiemu.Options{Family: fam})
	port, err := serialport.Open(emu.Path(), 115200)
	if err != nil {
		t.Fatal(err)
	}
	defer port.Close()
	rec := conntest.Record(port)
	in, err := scpi.New(rec, scpi.Options{Timeout: replyTimeout})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := session(in); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, rec.Script().Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
}
