package replay

// Odd ops (issue 13): zero-length, negative, huge, overflowing, beyond the
// target, unaligned under O_DIRECT. Every engine must give an error or a
// counted skip for each, never a panic, and a zero-length write must leave
// the target's bytes as they were.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/workload"
	"github.com/idlewatt/idlewatt/workload/trace"
)

func bufioFrom(s string) *bufio.Reader { return bufio.NewReader(bytes.NewReader([]byte(s))) }

// filled writes a known pattern over a fresh target and returns it.
func filled(t *testing.T, size int64) (*fileTarget, []byte) {
	t.Helper()
	tg := newTarget(t, size)
	want := bytes.Repeat([]byte("idlewatt odd-op "), int(size/16))
	if _, err := tg.f.WriteAt(want, 0); err != nil {
		// An O_DIRECT fd refuses an unaligned Go buffer; write through the path.
		if err := os.WriteFile(tg.f.Name(), want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return tg, want
}

func TestOddOps(t *testing.T) {
	const size = 1 << 20
	R, W, T, F := workload.OpRead, workload.OpWrite, workload.OpTrim, workload.OpFlush
	cases := []struct {
		name    string
		ops     []trace.Op
		wrap    bool
		wantErr error // nil: runs; then zero counts the skipped ops
		zero    int64
		ops1    int64 // ops completed
		same    bool  // the target's bytes are unchanged afterwards
	}{
		{name: "zero-length read", ops: []trace.Op{{Type: R, Offset: 0, Size: 0}}, zero: 1, same: true},
		{name: "zero-length write", ops: []trace.Op{{Type: W, Offset: 4096, Size: 0}}, zero: 1, same: true},
		{name: "zero-length trim", ops: []trace.Op{{Type: T, Offset: 4096, Size: 0}}, zero: 1, same: true},
		{name: "zero-length unaligned write", ops: []trace.Op{{Type: W, Offset: 100, Size: 0}}, zero: 1, same: true},
		{name: "zero-length beyond the target", ops: []trace.Op{{Type: R, Offset: 1 << 40, Size: 0}}, zero: 1, same: true},
		{name: "zero-length between real ops", ops: []trace.Op{{Type: R, Size: 4096}, {Type: W, Size: 0}, {Type: F}, {Type: R, Offset: 8192, Size: 4096}},
			zero: 1, ops1: 3, same: true},
		{name: "negative offset", ops: []trace.Op{{Type: R, Offset: -4096, Size: 4096}}, wantErr: ErrBadOp},
		{name: "negative size", ops: []trace.Op{{Type: W, Offset: 0, Size: -1}}, wantErr: ErrBadOp, same: true},
		{name: "bad type", ops: []trace.Op{{Type: 9, Offset: 0, Size: 4096}}, wantErr: ErrBadOp},
		{name: "huge size", ops: []trace.Op{{Type: R, Offset: 0, Size: math.MaxInt32}}, wantErr: ErrBadOp},
		{name: "larger than the target", ops: []trace.Op{{Type: R, Offset: 0, Size: 2 * size}}, wantErr: ErrBeyondTarget},
		{name: "offset beyond the target", ops: []trace.Op{{Type: W, Offset: 2 * size, Size: 4096}}, wantErr: ErrBeyondTarget, same: true},
		{name: "offset+size overflows", ops: []trace.Op{{Type: W, Offset: math.MaxInt64 - 100, Size: 4096}}, wantErr: ErrBeyondTarget, same: true},
		{name: "offset max, wrapped", ops: []trace.Op{{Type: R, Offset: math.MaxInt64, Size: 4096}}, wrap: true, ops1: 1, same: true},
		{name: "overflowing write, wrapped", ops: []trace.Op{{Type: W, Offset: math.MaxInt64 - 100, Size: 4096}}, wrap: true, ops1: 1},
		{name: "unaligned read", ops: []trace.Op{{Type: R, Offset: 1, Size: 1}}, ops1: 1, same: true},
		{name: "trim beyond the target", ops: []trace.Op{{Type: T, Offset: size, Size: 4096}}, wantErr: ErrBeyondTarget, same: true},
		{name: "flush with junk offset", ops: []trace.Op{{Type: F, Offset: -5, Size: -5}}, ops1: 1, same: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			engines(t, func(t *testing.T, engine string) {
				tg, before := filled(t, size)
				res, err := Run(context.Background(), Config{QD: 4, Timing: Timing{Mode: AFAP}, Engine: engine, Wrap: c.wrap},
					&sliceReader{ops: c.ops}, tg, nil)
				if c.wantErr != nil {
					if !errors.Is(err, c.wantErr) {
						t.Fatalf("got %v, want %v", err, c.wantErr)
					}
				} else {
					if err != nil {
						t.Fatalf("run: %v", err)
					}
					if res.ZeroLength != c.zero || res.Ops != c.ops1 || res.Errors != 0 {
						t.Errorf("zero-length %d ops %d errors %d, want %d, %d, 0", res.ZeroLength, res.Ops, res.Errors, c.zero, c.ops1)
					}
				}
				if c.same {
					after, err := os.ReadFile(tg.f.Name())
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(after, before) {
						t.Error("the target changed")
					}
				}
			})
		})
	}
}

// TestZeroLengthFromEveryFormat feeds a zero-length read and write in each
// trace format through the reader into both engines (the io_uring engine
// panicked in buffer.addr on them).
func TestZeroLengthFromEveryFormat(t *testing.T) {
	traces := map[string]string{
		"native":   "# idlewatt trace v1\n0 R 0 0\n0.001 W 4096 0\n0.002 R 0 4096\n",
		"fio3":     "fio version 3 iolog\n0 f add\n0 f open\n0 f read 0 0\n1000 f write 4096 0\n2000 f read 0 4096\n",
		"fio2":     "fio version 2 iolog\nf add\nf open\nf read 0 0\nf write 4096 0\nf read 0 4096\n",
		"blkparse": "8,0 0 1 0.000000000 1 Q R 0 + 0 [x]\n8,0 0 2 0.001000000 1 Q W 8 + 0 [x]\n8,0 0 3 0.002000000 1 Q R 0 + 8 [x]\n",
		"msr":      "128166372003061629,hm,1,Read,0,0,1\n128166372003071629,hm,1,Write,4096,0,1\n128166372003081629,hm,1,Read,0,4096,1\n",
	}
	for name, text := range traces {
		t.Run(name, func(t *testing.T) {
			engines(t, func(t *testing.T, engine string) {
				tg, before := filled(t, 1<<20)
				f, err := trace.Detect(bufioFrom(text))
				if err != nil {
					t.Fatal(err)
				}
				r, err := trace.NewReader(bufioFrom(text), f, name)
				if err != nil {
					t.Fatal(err)
				}
				res, err := Run(context.Background(), Config{Timing: Timing{Mode: AFAP}, Engine: engine}, r, tg, nil)
				if err != nil {
					t.Fatal(err)
				}
				if res.ZeroLength != 2 || res.Ops != 1 || res.ByType[workload.OpRead].Bytes != 4096 {
					t.Errorf("zero-length %d, ops %d, read bytes %d; want 2, 1, 4096", res.ZeroLength, res.Ops, res.ByType[workload.OpRead].Bytes)
				}
				after, _ := os.ReadFile(tg.f.Name())
				if !bytes.Equal(after, before) {
					t.Error("a zero-length write changed the target")
				}
			})
		})
	}
}

// FuzzReplayOps decodes ops from the input (17 bytes each: type, offset,
// size, the last one of the trace's file being the engine choice) and
// replays them on a 256 KiB file: an error or a result, never a panic, and
// every event inside the target.
func FuzzReplayOps(f *testing.F) {
	seedOps := func(ops ...trace.Op) []byte {
		var b []byte
		for _, op := range ops {
			b = append(b, byte(op.Type))
			b = binary.LittleEndian.AppendUint64(b, uint64(op.Offset))
			b = binary.LittleEndian.AppendUint32(b, uint32(op.Size))
			b = append(b, 0, 0, 0, 0)
		}
		return b
	}
	f.Add(seedOps(trace.Op{Type: workload.OpRead}), false, uint8(1))
	f.Add(seedOps(trace.Op{Type: workload.OpWrite, Offset: 100, Size: 0}, trace.Op{Type: workload.OpRead, Size: 4096}), true, uint8(4))
	f.Add(seedOps(trace.Op{Type: workload.OpWrite, Offset: math.MaxInt64, Size: math.MaxInt32}), false, uint8(2))
	f.Add(seedOps(trace.Op{Type: workload.OpTrim, Offset: 1 << 17, Size: 1 << 17}, trace.Op{Type: workload.OpFlush}), true, uint8(8))
	const size = 256 << 10
	f.Fuzz(func(t *testing.T, b []byte, wrap bool, qd uint8) {
		var ops []trace.Op
		for len(b) >= 17 && len(ops) < 64 {
			ops = append(ops, trace.Op{
				Type:   workload.Op(b[0] % 6), // includes one invalid type
				Offset: int64(binary.LittleEndian.Uint64(b[1:])),
				Size:   int32(binary.LittleEndian.Uint32(b[9:])),
			})
			b = b[17:]
		}
		tg := newTarget(t, size)
		for _, engine := range []string{"uring", "sync"} {
			cfg := Config{QD: int(qd%8) + 1, Timing: Timing{Mode: AFAP}, Engine: engine, Wrap: wrap}
			_, err := Run(context.Background(), cfg, &sliceReader{ops: ops}, tg, func(ev workload.IOEvent) {
				if ev.Op != workload.OpFlush && (ev.Offset < 0 || ev.Size <= 0 || ev.Offset+int64(ev.Size) > size) {
					t.Errorf("%s: issued %+v outside the %d-byte target", engine, ev, size)
				}
			})
			if err != nil && !errors.Is(err, ErrBadOp) && !errors.Is(err, ErrBeyondTarget) && !errors.Is(err, io.EOF) {
				t.Errorf("%s: unexpected error kind: %v", engine, err)
			}
		}
	})
}

// TestResultJSONSaysWhatItRanOn: direct and the zero-length count are always
// there; the target only when the caller described it.
func TestResultJSONSaysWhatItRanOn(t *testing.T) {
	b, err := Result{ZeroLength: 3}.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if !strings.Contains(s, `"direct":false`) || !strings.Contains(s, `"zero_length_ops_skipped":3`) || strings.Contains(s, `"target"`) {
		t.Errorf("without a target: %s", s)
	}
	b, _ = Result{Direct: true, Target: TargetInfo{Path: "/x", Sparse: true, SizeBytes: 8, AllocatedBytes: 0}}.MarshalJSON()
	if s := string(b); !strings.Contains(s, `"direct":true`) || !strings.Contains(s, `"target":{"path":"/x","block_device":false,"created":false,"filled":false,"sparse":true,"size_bytes":8,"allocated_bytes":0}`) {
		t.Errorf("with a target: %s", s)
	}
}
