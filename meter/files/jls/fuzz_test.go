package jls

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReader: arbitrary bytes through Open, every signal's samples and
// every summary level. Never a panic; every failure an *Error with an
// offset inside the file; samples in increasing order; at most a data
// chunk's worth of values at a time.
func FuzzReader(f *testing.F) {
	for _, name := range []string{"tiny.jls"} {
		b, err := os.ReadFile(filepath.Join(fixtures, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add(Identification[:])
	f.Fuzz(func(t *testing.T, b []byte) {
		rd, err := Open(bytesReaderAt(b), int64(len(b)))
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Open: %v is not an *Error", err)
			}
			if e.Offset < 0 || e.Offset > int64(len(b)) {
				t.Fatalf("error offset %d outside the %d-byte file", e.Offset, len(b))
			}
			return
		}
		for _, s := range rd.Signals {
			if s.ID == 0 || !s.FSR || !s.Readable() {
				continue
			}
			it := rd.FSR(s)
			var next, total int64
			started := false
			for total < 1<<18 { // a forged file may claim more than a fuzzer can wait for
				start, v, err := it.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					var e *Error
					if !errors.As(err, &e) {
						t.Fatalf("FSR: %v is not an *Error", err)
					}
					break
				}
				if started && start < next {
					t.Fatalf("samples from %d after %d", start, next)
				}
				if len(v) > int(s.SamplesPerData) {
					t.Fatalf("%d values from one chunk of at most %d", len(v), s.SamplesPerData)
				}
				started, next = true, start+int64(len(v))
				total += int64(len(v))
			}
			for l := 1; l <= s.Levels(); l++ {
				sit := rd.Summaries(s, l)
				for k := 0; k < 1<<16; k++ {
					if _, err := sit.Next(); err != nil {
						break
					}
				}
			}
			rd.UTC(s)
		}
	})
}
