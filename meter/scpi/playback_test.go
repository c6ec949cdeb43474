package scpi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/internal/conntest"
	"github.com/idlewatt/idlewatt/internal/serialport"
	"github.com/idlewatt/idlewatt/internal/testutil"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/scpi"
	"github.com/idlewatt/idlewatt/meter/scpi/scpiemu"
	"github.com/idlewatt/idlewatt/units"
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

// arrayCases are the array-mode conversations TestPlaybackArray plays:
// the N6705's MEAS:ARR:CURR? in ASCII and as FORM REAL blocks, and the
// 2280S's trace buffer armed by :TRAC:CLE, :INIT, *WAI before each fetch.
var arrayCases = []struct {
	name, fam string
	binary    bool
}{{"n6705-ascii", "n6705", false}, {"n6705-real", "n6705", true}, {"k2280s", "k2280s", false}}

// arraySession opens in array mode (32 points 100 µs apart), streams
// three arrays and closes.
func arraySession(t *testing.T, rw io.ReadWriter, binary bool) *arrays {
	t.Helper()
	in, err := scpi.New(rw, scpi.Options{Timeout: replyTimeout, Array: true, ArrayPoints: 32,
		ArrayInterval: 100 * time.Microsecond, ArrayBinary: binary})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &countSink{arrays: arrays{t: t, vs: map[units.Volts]bool{}, float32: true}, want: 3, cancel: cancel}
	streamGuarded(t, ctx, func(ctx context.Context) error { return in.Stream(ctx, meter.StreamConfig{}, s) })
	return &s.arrays
}

// TestPlaybackArray plays recorded array-mode streams
// (fixtures/conn/scpi-array-*.txt, written by -update from the emulator):
// the driver must send the same set-up, interval read-back, voltage
// reading and fetches, read every array, and decode three arrays of 32
// samples at the emulated 12.5 mA and 5 V.
func TestPlaybackArray(t *testing.T) {
	for _, c := range arrayCases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join("..", "..", "fixtures", "conn", "scpi-array-"+c.name+".txt")
			if *testutil.Update {
				emu := startEmu(t, scpiemu.Options{Family: c.fam, Current: 0.0125, Voltage: 5})
				port, err := serialport.Open(emu.Path(), 115200)
				if err != nil {
					t.Fatal(err)
				}
				rec := conntest.Record(port)
				arraySession(t, rec, c.binary)
				port.Close()
				if err := os.WriteFile(path, rec.Script().Marshal(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s, err := conntest.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -update -run TestPlaybackArray ./meter/scpi records it)", err)
			}
			p := conntest.NewPlayback(s)
			a := arraySession(t, p, c.binary)
			if len(a.blocks) != 3 || len(a.other) != 0 {
				t.Fatalf("%d arrays, other gaps %+v; want 3 arrays and no gap but between them", len(a.blocks), a.other)
			}
			for k, b := range a.blocks {
				if b.Len() != 32 {
					t.Errorf("array %d: %d samples, want 32", k, b.Len())
				}
			}
			testutil.Near(t, "mean current (A)", a.sum/float64(a.n), 0.0125, 1e-3)
			if len(a.vs) != 1 || !a.vs[5] {
				t.Errorf("voltages %v, want the one reading taken at open (5 V)", a.vs)
			}
			p.Close()
			if err := p.Verify(); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestPlaybackCatchesChanges: the recorded N6705 session, edited as a
// changed driver or instrument would make it, fails — a query the driver
// no longer sends as recorded (a wrong byte), a driver that writes past
// the script (a query too many), and an answer it never reads (leftover).
func TestPlaybackCatchesChanges(t *testing.T) {
	orig, err := conntest.ReadFile(filepath.Join("..", "..", "fixtures", "conn", "scpi-n6705.txt"))
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(s conntest.Script) conntest.Script) conntest.Script {
		s := make(conntest.Script, len(orig))
		for i, c := range orig {
			s[i] = conntest.Chunk{Dir: c.Dir, Data: bytes.Clone(c.Data)}
		}
		return f(s)
	}
	for _, tc := range []struct {
		name    string
		script  conntest.Script
		session bool // whether the session itself still succeeds
		want    string
	}{
		{"a query on another channel", edit(func(s conntest.Script) conntest.Script {
			s[4].Data = bytes.Replace(s[4].Data, []byte("(@1)"), []byte("(@2)"), 1)
			return s
		}), false, "host byte"},
		{"the last query not in the script", edit(func(s conntest.Script) conntest.Script { return s[:len(s)-2] }),
			false, "unexpected write after the script's"},
		{"an answer never read", edit(func(s conntest.Script) conntest.Script {
			return append(s, conntest.Chunk{Dir: conntest.Device, Data: []byte("+0,\"No error\"\n")})
		}), true, "device bytes left unread"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := conntest.NewPlayback(tc.script)
			defer p.Close()
			in, err := scpi.New(p, scpi.Options{Timeout: replyTimeout})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := session(in); (err == nil) != tc.session {
				t.Errorf("session: %v; want it to fail: %v", err, !tc.session)
			}
			if err := p.Verify(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Verify: %v; want an error naming %q", err, tc.want)
			}
		})
	}
}
