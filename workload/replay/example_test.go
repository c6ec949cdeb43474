package replay_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/idlewatt/idlewatt/workload"
	"github.com/idlewatt/idlewatt/workload/replay"
	"github.com/idlewatt/idlewatt/workload/target"
	"github.com/idlewatt/idlewatt/workload/trace"
)

// Replay a trace on a target: every completed I/O comes back as a
// workload.IOEvent on the host clock (what a capture stores beside the
// power samples), and the Result sums the run. Here an fio iolog with a
// read, a write, a sync, a trim and two waits is replayed as fast as
// possible (afap drops the waits) on a 1 MiB scratch file idlewatt creates
// and fills; with the default timing, recorded, the waits are kept.
func Example() {
	src, err := trace.Open("../../fixtures/traces/fio-v2.log", "") // format detected
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()

	dir, err := os.MkdirTemp("", "replay-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	tgt, err := target.Open(filepath.Join(dir, "scratch.img"), target.Options{Read: true, Write: true, Size: 1 << 20})
	if err != nil {
		log.Fatal(err)
	}
	defer tgt.Close()

	cfg := replay.Config{Timing: replay.Timing{Mode: replay.AFAP}, Engine: "sync", Port: 1}
	res, err := replay.Run(context.Background(), cfg, src, tgt, func(ev workload.IOEvent) {
		fmt.Printf("port %d %s %d bytes at %d, completed after issue: %v\n", ev.Port, ev.Op, ev.Size, ev.Offset, ev.Complete >= ev.Issue)
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s engine, %s timing: %d ops, %d bytes, %d errors\n", res.Engine, res.Timing, res.Ops, res.Bytes, res.Errors)
	for _, op := range []workload.Op{workload.OpRead, workload.OpWrite, workload.OpFlush, workload.OpTrim} {
		fmt.Printf("%s: %d ops\n", op, res.ByType[op].Ops)
	}
	// Output:
	// port 1 read 4096 bytes at 0, completed after issue: true
	// port 1 write 4096 bytes at 8192, completed after issue: true
	// port 1 read 4096 bytes at 4096, completed after issue: true
	// port 1 flush 0 bytes at 0, completed after issue: true
	// port 1 trim 8192 bytes at 65536, completed after issue: true
	// sync engine, afap timing: 5 ops, 20480 bytes, 0 errors
	// read: 2 ops
	// write: 1 ops
	// flush: 1 ops
	// trim: 1 ops
}
