package capture

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter"
)

// TestCrashKeepsFlushedData copies the file of a live writer, as kill -9 or
// a power cut would leave it, and reads the copy.
func TestCrashKeepsFlushedData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.iwcap")
	w, err := Create(path, testHeader(), Options{FlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.Samples(block(1, 0, 100))
	w.Mark(meter.MarkEcho{ID: 1})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	w.Samples(block(1, 100, 100)) // buffered, never flushed: lost in the crash
	crashed, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	items, err := readBytes(crashed)
	var de *DamageError
	if !errors.As(err, &de) || !de.Cut || !errors.Is(err, ErrTruncated) || errors.Is(err, ErrCorrupt) {
		t.Fatalf("crashed capture: %v, want a cut (ErrTruncated, not ErrCorrupt)", err)
	}
	if de.Offset != int64(len(crashed)) {
		t.Errorf("cut reported at byte %d, file has %d", de.Offset, len(crashed))
	}
	// Runs are encoded at flush time, so the mark precedes the samples.
	if len(items) != 2 || items[0].Kind != KindMark || items[1].Kind != KindSamples || items[1].Block.Len() != 100 {
		t.Fatalf("crashed capture read back %d records: %+v", len(items), items)
	}
	// A crash in the middle of a write leaves part of a chunk.
	items2, err := readBytes(append(crashed, 'I', 'W', chunkSamples, 1, 0xff))
	if !errors.Is(err, ErrTruncated) || !reflect.DeepEqual(items2, items) {
		t.Fatalf("half-written chunk: %v, %d records, want ErrTruncated and %d", err, len(items2), len(items))
	}
}

// fullDisk accepts limit bytes, then fails like a full disk.
type fullDisk struct {
	bytes.Buffer
	limit int
}

func (d *fullDisk) Write(p []byte) (int, error) {
	room := d.limit - d.Len()
	if len(p) <= room {
		return d.Buffer.Write(p)
	}
	d.Buffer.Write(p[:max(room, 0)])
	return max(room, 0), &os.PathError{Op: "write", Path: "disk", Err: syscall.ENOSPC}
}

func TestFullDisk(t *testing.T) {
	d := &fullDisk{limit: 20000}
	w, err := NewWriter(d, testHeader(), Options{FlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var werr error
	var flushed uint64 // samples durably written before the failure
	for k := uint64(0); werr == nil && k < 1000; k++ {
		if werr = w.Samples(block(1, k*100, 100)); werr == nil {
			if werr = w.Flush(); werr == nil {
				flushed = (k + 1) * 100
			}
		}
	}
	if !errors.Is(werr, ErrDiskFull) || !errors.Is(werr, syscall.ENOSPC) {
		t.Fatalf("writing to a full disk: %v, want ErrDiskFull and ENOSPC", werr)
	}
	if err := w.Samples(block(1, 0, 1)); !errors.Is(err, ErrDiskFull) {
		t.Errorf("after the failure Samples returns %v, want the disk-full error again", err)
	}
	if err := w.Close(); !errors.Is(err, ErrDiskFull) {
		t.Errorf("Close after disk full: %v", err)
	}
	items, err := readBytes(d.Bytes())
	if !errors.Is(err, ErrTruncated) {
		t.Fatalf("reading a capture cut by a full disk: %v, want ErrTruncated", err)
	}
	var got uint64
	for _, it := range items {
		if it.Kind == KindSamples {
			got += uint64(it.Block.Len())
		}
	}
	if got != flushed {
		t.Errorf("read back %d samples, %d were flushed before the disk filled", got, flushed)
	}
}

// TestFullDiskDevice uses /dev/full, where every write fails with ENOSPC.
func TestFullDiskDevice(t *testing.T) {
	f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full:", err)
	}
	defer f.Close()
	_, err = NewWriter(f, testHeader(), Options{})
	if !errors.Is(err, ErrDiskFull) {
		t.Fatalf("NewWriter on /dev/full: %v, want ErrDiskFull", err)
	}
}

// TestTruncatedAtEveryOffset reads every prefix of a small capture.
func TestTruncatedAtEveryOffset(t *testing.T) {
	var buf bytes.Buffer
	writeEverything(t, &buf)
	all := buf.Bytes()
	want, err := readBytes(all)
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(all) {
		got, err := readBytes(all[:n])
		if !errors.Is(err, ErrTruncated) {
			t.Fatalf("prefix of %d bytes: error %v, want ErrTruncated", n, err)
		}
		if errors.Is(err, ErrCorrupt) {
			t.Fatalf("prefix of %d bytes: %v reported as corruption, not a cut", n, err)
		}
		if !isPrefix(got, want) {
			t.Fatalf("prefix of %d bytes: records are not a prefix of the full capture", n)
		}
	}
}
