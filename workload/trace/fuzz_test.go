package trace

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func bufioFrom(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }

func seed(f *testing.F, names ...string) {
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(fixtures, n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// drain reads until an error, checking invariants every reader promises.
func drain(t *testing.T, r Reader) {
	for i := 0; i < 1<<16; i++ {
		op, err := r.Next()
		if err != nil {
			return
		}
		if op.Offset < 0 || op.Size < 0 || op.Time < 0 {
			t.Fatalf("invalid op %+v", op)
		}
		if op.Type < R || op.Type > T {
			t.Fatalf("invalid type %+v", op)
		}
	}
}

func FuzzNative(f *testing.F) {
	seed(f, "native.trace", "native-malformed.trace")
	f.Fuzz(func(t *testing.T, b []byte) { drain(t, NewNativeReader(bytes.NewReader(b), "f")) })
}

func FuzzFio(f *testing.F) {
	seed(f, "fio-v2.log", "fio-v3.log", "fio-v3-noadd.log", "fio-v2-malformed.log")
	f.Fuzz(func(t *testing.T, b []byte) { drain(t, NewFioReader(bytes.NewReader(b), "f")) })
}

func FuzzBlkparse(f *testing.F) {
	seed(f, "blkparse.txt", "blkparse-malformed.txt", "blkparse-preflush.txt")
	f.Fuzz(func(t *testing.T, b []byte) {
		drain(t, NewBlkparseReader(bytes.NewReader(b), "f"))
		// A preflush yields its data op only when it carries data: never a
		// flush followed by an empty write of the same request.
		r := NewBlkparseReader(bytes.NewReader(b), "f")
		var prev Op
		prevLine := 0
		for i := 0; i < 1<<16; i++ {
			op, err := r.Next()
			if err != nil {
				return
			}
			if i > 0 && prev.Type == F && op.Type != F && op.Size == 0 && r.l.n == prevLine {
				t.Fatalf("flush then an empty %s from one line: %+v", op.Type, op)
			}
			prev, prevLine = op, r.l.n
		}
	})
}

func FuzzMSR(f *testing.F) {
	seed(f, "msr.csv", "msr-malformed.csv")
	f.Fuzz(func(t *testing.T, b []byte) { drain(t, NewMSRReader(bytes.NewReader(b), "f")) })
}

func FuzzDetect(f *testing.F) {
	seed(f, "native.trace", "fio-v2.log", "fio-v3.log", "blkparse.txt", "msr.csv")
	f.Fuzz(func(t *testing.T, b []byte) {
		br := bufioFrom(b)
		format, err := Detect(br)
		if err != nil {
			return
		}
		r, err := NewReader(br, format, "f")
		if err != nil {
			t.Fatal(err)
		}
		drain(t, r)
	})
}
