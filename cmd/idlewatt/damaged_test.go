package main

// Damaged and nonsensical captures through every command that reads one
// (issue 13, deliverables 3 and 5): one account, one exit code.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/units"
)

// flushedCapture writes one drive (5 V at 0.1 A, 12 V at 0.05 A: 1.1 W) at
// 1 kHz in flushes of 1000 samples per rail, as a live recording is laid
// out; each flush is two samples chunks and (after the first) two summary
// chunks. It returns the path and the chunk offsets.
func flushedCapture(t *testing.T, dir string, flushes int, starts func(f int) uint64) (string, []int64) {
	t.Helper()
	path := filepath.Join(dir, "c.iwcap")
	h := capture.Header{Created: "2026-01-01T00:00:00Z", Meter: meter.Info{Kind: "test"}, RateHz: 1000, StartHost: 1e12, Tool: "test",
		Channels: []meter.Channel{{Port: 1, Rail: meter.Rail5V}, {Port: 1, Rail: meter.Rail12V}},
		Drives:   []capture.DriveInfo{{Port: 1, Name: "d"}}}
	w, err := capture.Create(path, h, capture.Options{FlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for f := range flushes {
		for ch, vi := range [][2]float64{{5, 0.1}, {12, 0.05}} {
			b := &meter.Block{Channel: ch, Start: starts(f), V: make([]units.Volts, 1000), I: make([]units.Amps, 1000)}
			for k := range b.V {
				b.V[k], b.I[k] = units.Volts(vi[0]), units.Amps(vi[1])
			}
			if err := w.Samples(b); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	var offs []int64
	for off := int64(16); off < int64(len(b)); off += int64(16 + binary.LittleEndian.Uint32(b[off+4:]) + 4) {
		offs = append(offs, off)
	}
	return path, offs
}

func reportJSON(t *testing.T, dir string) analysis.Report {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r analysis.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestDamagedCaptureOneAccount: chunk 11 (a samples chunk) of a 142-chunk capture damaged —
// one flipped bit (mended) and two (the chunk is lost) — read by report,
// plot, export and repair: all exit 0 and print the same account.
func TestDamagedCaptureOneAccount(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		bits      int
		energyJ   float64
		dropped   uint64
		wantNotes string
	}{
		{"one flipped bit", 1, 35 * 1.1, 0, "mended"},
		{"two flipped bits", 2, 34 * 1.1, 1000, "media damage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path, offs := flushedCapture(t, dir, 35, func(f int) uint64 { return uint64(f) * 1000 })
			if len(offs) < 140 {
				t.Fatalf("%d chunks, want at least 140", len(offs))
			}
			b, _ := os.ReadFile(path)
			hit := 11 // the first samples chunk from chunk 11 on
			for hit < len(offs) && b[offs[hit]+2] != 0x10 {
				hit++
			}
			for k := range tc.bits {
				b[offs[hit]+100+int64(k)*333] ^= 0x04
			}
			os.WriteFile(path, b, 0o644)

			out, errOut, code := run(t, ctx, "report", path, "--out", filepath.Join(dir, "rep"))
			if code != 0 {
				t.Fatalf("report: exit %d: %s", code, errOut)
			}
			r := reportJSON(t, filepath.Join(dir, "rep"))
			d := r.Drives[0]
			if math.Abs(float64(d.EnergyJ)-tc.energyJ) > 1e-6*tc.energyJ || d.Samples.Dropped != tc.dropped {
				t.Errorf("energy %.6f J (want %.6f), dropped %d (want %d)", d.EnergyJ, tc.energyJ, d.Samples.Dropped, tc.dropped)
			}
			var line string
			for _, n := range r.Notes {
				if strings.Contains(n, tc.wantNotes) {
					line = n
				}
				if strings.Contains(n, "did not finish") {
					t.Errorf("damage reported as an unclean stop: %s", n)
				}
			}
			if line == "" || !strings.Contains(out, "note: "+line) {
				t.Fatalf("report notes %q lack %q (terminal:\n%s)", r.Notes, tc.wantNotes, out)
			}
			in := r.Capture.Integrity
			t.Logf("kept fraction %.5f, integrity %+v", in.KeptFraction, in)
			if tc.bits == 1 && (in.CorrectedBits != 1 || in.KeptFraction != 1) || tc.bits == 2 && (in.DamagedRegions != 1 || in.SamplesLost != 1000 || !in.SamplesLostExact) {
				t.Errorf("integrity %+v", in)
			}

			_, errOut, code = run(t, ctx, "plot", path, "--out", filepath.Join(dir, "p.png"))
			if code != 0 || !strings.Contains(errOut, "plot: note: "+line) {
				t.Errorf("plot: exit %d, stderr lacks the report's note:\n%s", code, errOut)
			}
			_, errOut, code = run(t, ctx, "export", path, "--csv", filepath.Join(dir, "e.csv"))
			if code != 0 || !strings.Contains(errOut, "export: note: "+line) {
				t.Errorf("export: exit %d, stderr lacks the report's note:\n%s", code, errOut)
			}
			csv, _ := os.ReadFile(filepath.Join(dir, "e.csv"))
			// One rail lost a chunk: its cells are empty in those rows.
			if rows, empty := bytes.Count(csv, []byte("\n"))-1, bytes.Count(csv, []byte(",,,")); rows != 35000 || empty != int(tc.dropped) {
				t.Errorf("export: %d rows (want 35000), %d with a rail's cells empty (want %d)", rows, empty, tc.dropped)
			}

			before, _ := os.ReadFile(path)
			fixed := filepath.Join(dir, "fixed.iwcap")
			out, errOut, code = run(t, ctx, "repair", path, "--out", fixed)
			if code != 0 || !strings.Contains(errOut, "repair: note: "+line) {
				t.Fatalf("repair: exit %d: %s %s", code, out, errOut)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
				t.Error("repair changed its input")
			}
			if _, errOut, code = run(t, ctx, "repair", path, "--out", fixed); code != 2 {
				t.Errorf("repair over an existing file: exit %d: %s", code, errOut)
			}
			if _, errOut, code = run(t, ctx, "repair", path, "--out", path, "--overwrite"); code != 2 {
				t.Errorf("repair over its input: exit %d: %s", code, errOut)
			}
			victim := filepath.Join(dir, "victim.txt")
			os.WriteFile(victim, []byte("keep me"), 0o644)
			link := filepath.Join(dir, "link.iwcap")
			os.Symlink(victim, link)
			if _, errOut, code = run(t, ctx, "repair", path, "--out", link, "--overwrite"); code != 2 {
				t.Errorf("repair through a symlink: exit %d: %s", code, errOut)
			}
			if v, _ := os.ReadFile(victim); string(v) != "keep me" {
				t.Error("repair wrote through a symlink")
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
				t.Error("repair changed its input")
			}
			_, errOut, code = run(t, ctx, "report", fixed, "--out", filepath.Join(dir, "rep2"))
			if code != 0 {
				t.Fatalf("report of the repaired capture: exit %d: %s", code, errOut)
			}
			r2 := reportJSON(t, filepath.Join(dir, "rep2"))
			if d2 := r2.Drives[0]; d2.EnergyJ != d.EnergyJ || d2.Samples.Dropped != d.Samples.Dropped || !r2.Capture.Integrity.SamplesLostExact ||
				r2.Capture.Integrity.DamagedRegions != 0 || r2.Capture.GapReasons[capture.GapDamaged] != tc.dropped {
				t.Errorf("repaired: %+v %+v, gaps %v; damaged: %+v", d2.Samples, r2.Capture.Integrity, r2.Capture.GapReasons, d.Samples)
			}
		})
	}
}

// TestRestartedIndicesReported: the issue's "1.7 J reported for 3.4 J of
// data, dropped 0" — a second stream whose indices restart at 0 recorded
// into the file. Its samples are not placed, and the report says how many,
// why, and their energy.
func TestRestartedIndicesReported(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path, _ := flushedCapture(t, dir, 20, func(f int) uint64 { return uint64(f%10) * 1000 })
	out, errOut, code := run(t, context.Background(), "report", path, "--out", filepath.Join(dir, "rep"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	r := reportJSON(t, filepath.Join(dir, "rep"))
	d := r.Drives[0]
	if math.Abs(float64(d.EnergyJ-11)) > 1e-6 || d.Samples.Rejected != 20000 || math.Abs(float64(d.Samples.RejectedJ-11)) > 1e-6 || r.Capture.Integrity.RejectedSamples["restart"] != 20000 {
		t.Errorf("energy %.6f J, samples %+v, integrity %+v", d.EnergyJ, d.Samples, r.Capture.Integrity)
	}
	for _, want := range []string{"(restart)", "energy_j + 11 J"} {
		if !strings.Contains(out, want) {
			t.Errorf("terminal lacks %q:\n%s", want, out)
		}
	}
}

// TestImpossibleHeaders: the panics — report of a capture whose
// header says rate 1e300, export of one with no channels — and more: exit 2
// naming the field and its byte offset.
func TestImpossibleHeaders(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name, header, cmd, want string
	}{
		{"rate 1e300", `{"channels":[{"port":1,"rail":1}],"rate_hz":1e300}`, "report", "rate_hz at byte 76"},
		{"rate 1e300 export", `{"channels":[{"port":1,"rail":1}],"rate_hz":1e300}`, "export", "rate_hz at byte 76"},
		{"no channels", `{"channels":[],"rate_hz":1000}`, "export", "channels at byte 44"},
		{"no channels plot", `{"channels":null,"rate_hz":1000}`, "plot", "channels at byte 44"},
		{"unknown rail", `{"channels":[{"port":1,"rail":7}],"rate_hz":1000}`, "report", "channels[0].rail at byte 62"},
		{"rate NaN-ish", `{"channels":[{"port":1,"rail":1}],"rate_hz":-0}`, "repair", "rate_hz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "c.iwcap")
			os.WriteFile(path, rawCapture(tc.header), 0o644)
			args := []string{tc.cmd, path}
			switch tc.cmd {
			case "report":
				args = append(args, "--out", filepath.Join(dir, "rep"))
			case "export":
				args = append(args, "--csv", filepath.Join(dir, "e.csv"))
			case "plot":
				args = append(args, "--out", filepath.Join(dir, "p.png"))
			case "repair":
				args = append(args, "--out", filepath.Join(dir, "r.iwcap"))
			}
			_, errOut, code := run(t, ctx, args...)
			if code != 2 || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "panic") {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, tc.want)
			}
		})
	}
}

// rawCapture is a preamble, a header chunk holding js and an end chunk,
// with valid CRCs, whatever js says.
func rawCapture(js string) []byte {
	le := binary.LittleEndian
	tab := crc32.MakeTable(crc32.Castagnoli)
	b := []byte("\x89IWC\r\n\x1a\n\x01\x00\x00\x00\x00\x00\x00\x00")
	chunk := func(typ byte, seq uint64, p []byte) {
		c := []byte{'I', 'W', typ, 0}
		c = le.AppendUint32(c, uint32(len(p)))
		c = le.AppendUint64(c, seq)
		c = append(c, p...)
		b = append(b, le.AppendUint32(c, crc32.Checksum(c, tab))...)
	}
	chunk(0x01, 0, []byte(js))
	chunk(0xFF, 1, make([]byte, 16))
	return b
}
