package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/meter/hub/hubemu"
)

func hubStream(t *testing.T, dir string) string {
	t.Helper()
	stream := filepath.Join(dir, "hub.bin")
	f, err := os.Create(stream)
	if err != nil {
		t.Fatal(err)
	}
	if err := hubemu.WriteFast(f, hubemu.Options{Ports: 2, Rate: 1000}, time.Second); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return stream
}

// TestRecordMetricsAddrInUse: a metrics address already in use is a usage
// error (exit 2) before anything is recorded: no capture is created.
func TestRecordMetricsAddrInUse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stream := hubStream(t, dir)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	capPath := filepath.Join(dir, "c.iwcap")
	_, errOut, code := run(t, context.Background(), "record", "--meter", "hub", "--port", stream, "--out", capPath, "--metrics-addr", l.Addr().String())
	if code != 2 || !strings.Contains(errOut, "in use") {
		t.Errorf("exit %d, stderr %q; want 2 and 'in use'", code, errOut)
	}
	if _, err := os.Stat(capPath); !os.IsNotExist(err) {
		t.Errorf("a capture was created: %v", err)
	}
}

// TestRecordTextfileAndNames: --metrics-textfile leaves the final figures
// for node_exporter, and --drive-name puts the names in the capture and the
// metrics' labels.
func TestRecordTextfileAndNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stream := hubStream(t, dir)
	capPath := filepath.Join(dir, "c.iwcap")
	prom := filepath.Join(dir, "idlewatt.prom")
	out, errOut, code := run(t, context.Background(), "record", "--meter", "hub", "--port", stream, "--out", capPath,
		"--metrics-textfile", prom, "--drive-name", "1=Alpha SSD", "--drive-name", "2=Beta")
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	r, err := capture.Open(capPath)
	if err != nil {
		t.Fatal(err)
	}
	h := r.Header()
	r.Close()
	if len(h.Drives) != 2 || h.Drives[0].Name != "Alpha SSD" || h.Drives[1].Port != 2 || h.Drives[1].Name != "Beta" {
		t.Errorf("capture drives: %+v", h.Drives)
	}
	b, err := os.ReadFile(prom)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`idlewatt_samples_total{drive="Alpha SSD",port="1",rail="5v"} 1000`, `idlewatt_energy_joules_total{drive="Beta",port="2"}`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("textfile lacks %q:\n%s", want, b)
		}
	}
	// A bad name is a usage error.
	if _, _, code := run(t, context.Background(), "record", "--meter", "hub", "--port", stream, "--out", filepath.Join(dir, "d.iwcap"), "--drive-name", "x"); code != 2 {
		t.Errorf("--drive-name x: exit %d, want 2", code)
	}
}
