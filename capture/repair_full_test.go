package capture

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fullOut is a repair output on a disk that fills after limit bytes.
type fullOut struct {
	fullDisk
	committed, aborted bool
}

func (f *fullOut) Commit() error { f.committed = true; return nil }
func (f *fullOut) Abort() error  { f.aborted = true; return nil }

// TestRepairDiskFullSaysNothingIsWritten: a repair that fills the disk
// removes its partial copy, so its message must not repeat the writer's
// "(everything before is readable)", which is about a capture recorded in
// place (issue 26 item 9).
func TestRepairDiskFullSaysNothingIsWritten(t *testing.T) {
	t.Parallel()
	in := filepath.Join(t.TempDir(), "in.iwcap")
	if err := os.WriteFile(in, noisyCapture(t, 2, 30000), 0o644); err != nil {
		t.Fatal(err)
	}
	out := &fullOut{fullDisk: fullDisk{limit: 4000}}
	_, err := repair(context.Background(), in, "new.iwcap", func() (repairOut, error) { return out, nil })
	if !errors.Is(err, ErrDiskFull) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err %v, want a full disk", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "everything before is readable") || !strings.Contains(msg, "nothing is written") {
		t.Errorf("message %q", msg)
	}
	if out.committed || !out.aborted {
		t.Errorf("committed %v, aborted %v", out.committed, out.aborted)
	}
	// A signal before the end: nothing is committed either.
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupted"))
	out = &fullOut{fullDisk: fullDisk{limit: 1 << 30}}
	if _, err := repair(ctx, in, "new.iwcap", func() (repairOut, error) { return out, nil }); err == nil || out.committed {
		t.Errorf("cancelled repair: %v, committed %v", err, out.committed)
	}
}
