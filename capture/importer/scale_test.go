package importer

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter/files"
)

var hourFlag = flag.Bool("importer.hour", false, "TestBoundedMemory: import a (virtual) hour of a 100 kS/s PPK2 export instead of 20 s")

// virtualPPK2 is a Power Profiler export of n rows at 100 kS/s that exists
// only as a ReaderAt: rows are fixed-width, so any offset's bytes are
// computed, and a file of gigabytes costs no disk.
type virtualPPK2 struct{ rows int64 }

const vHeader = "Timestamp(ms),Current(uA),D0-D7\n"
const vRow = 36 // "%014.2f,%011.3f,%s\n"

func (v virtualPPK2) size() int64 { return int64(len(vHeader)) + v.rows*vRow }

func (v virtualPPK2) row(k int64) string {
	ua := 2000 + 100*float64((k*37)%11)
	if (k/100000)%3 == 1 && k%100000 < 10000 {
		ua += 398000 // a 100 ms burst every 3 s
	}
	bits := "00000000"
	if (k/1000000)%2 == 1 {
		bits = "00010000" // D3 toggles every 10 s
	}
	return fmt.Sprintf("%014.2f,%011.3f,%s\n", float64(k)/100, ua, bits)
}

func (v virtualPPK2) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) && off < v.size() {
		if off < int64(len(vHeader)) {
			c := copy(p[n:], vHeader[off:])
			n += c
			off += int64(c)
			continue
		}
		k := (off - int64(len(vHeader))) / vRow
		r := v.row(k)
		c := copy(p[n:], r[(off-int64(len(vHeader)))%vRow:])
		n += c
		off += int64(c)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func init() {
	if len(virtualPPK2{}.row(359999999)) != vRow {
		panic("virtual row width")
	}
}

// TestBoundedMemory imports a long 100 kS/s export through the whole
// pipeline (parse, capture writer, summaries, index) and checks that the
// heap never holds more than a bound far below the data's size: 20 s
// (2 M rows, 72 MB of CSV) by default, an hour (360 M rows, 13 GB) with
// -importer.hour. Rows per second are logged, not asserted.
func TestBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("imports 2 M rows")
	}
	rows := int64(2_000_000)
	if *hourFlag {
		rows = 360_000_000
	}
	v := virtualPPK2{rows: rows}
	head := make([]byte, files.DetectBytes)
	v.ReadAt(head, 0)
	format := files.Detect(head)
	if format == nil || format.Name != "ppk2-csv" {
		t.Fatal("the virtual file is not detected as a PPK2 export")
	}
	f, err := format.Open(v, v.size(), files.Options{Voltage: 5})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "big.iwcap")
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if h := m.HeapInuse; h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	t0 := time.Now()
	res, err := ImportFile(context.Background(), f, "virtual.csv", out, Options{Options: files.Options{Voltage: 5, DevSlpLine: "D3"}})
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	el := time.Since(t0)
	if res.Samples != uint64(rows) || res.Missing != 0 {
		t.Fatalf("%d samples, %d missing, want %d", res.Samples, res.Missing, rows)
	}
	fi := statSize(t, out)
	t.Logf("%d rows (%.1f GB of CSV) in %v: %.2f M rows/s; peak heap %.1f MB; capture %.1f MB (%.2f B/sample)",
		rows, float64(v.size())/1e9, el.Round(time.Second), float64(rows)/el.Seconds()/1e6,
		float64(peak.Load())/1e6, float64(fi)/1e6, float64(fi)/float64(rows))
	// The pipeline holds a CSV row, a 4096-sample block, the capture
	// writer's 1 MiB of pending chunks and its summary windows: tens of MB
	// at most, whatever the file's length.
	if p := peak.Load(); p > 64<<20 {
		t.Errorf("peak heap %.1f MB importing %d rows", float64(p)/1e6, rows)
	}
}

func statSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
