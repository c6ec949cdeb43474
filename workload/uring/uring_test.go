package uring

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"unsafe"
)

func newRing(t *testing.T, n uint32) *Ring {
	t.Helper()
	r, err := New(n)
	if errors.Is(err, ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestNopAndRead(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r := newRing(t, 8)
	path := filepath.Join(t.TempDir(), "f")
	want := []byte("hello, io_uring: reading at an offset")
	if err := os.WriteFile(path, want, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := r.RegisterFile(int(f.Fd())); err != nil {
		t.Logf("no fixed files: %v", err)
	}
	buf := make([]byte, 16)
	for i := 0; i < 3; i++ { // more rounds than entries/2 exercise index wrap-around
		nop := r.GetSQE()
		nop.Opcode, nop.UserData = OpNop, 7
		rd := r.GetSQE()
		rd.Opcode, rd.UserData = OpRead, 9
		r.SetFd(rd, int(f.Fd()))
		rd.Addr, rd.Len, rd.Off = uint64(uintptr(unsafe.Pointer(&buf[0]))), uint32(len(buf)), 7
		if err := r.Enter(2, 0); err != nil {
			t.Fatal(err)
		}
		seen := map[uint64]int32{}
		for len(seen) < 2 {
			c, ok := r.Peek()
			if !ok {
				if err := r.Enter(1, 0); err != nil {
					t.Fatal(err)
				}
				continue
			}
			seen[c.UserData] = c.Res
			r.Advance(1)
		}
		if seen[7] != 0 || seen[9] != 16 {
			t.Fatalf("completions %v", seen)
		}
		if string(buf) != string(want[7:23]) {
			t.Fatalf("read %q", buf)
		}
	}
	runtime.KeepAlive(buf)
}

func TestFullSQ(t *testing.T) {
	r := newRing(t, 4)
	for i := 0; i < 4; i++ {
		if r.GetSQE() == nil {
			t.Fatalf("SQE %d: nil before the ring is full", i)
		}
	}
	if r.GetSQE() != nil {
		t.Fatal("got an SQE from a full ring")
	}
}
