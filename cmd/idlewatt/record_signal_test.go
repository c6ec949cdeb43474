package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRecordSignalAtAnyMomentSaysSo (issue 26): SIGTERM 12 ms into record
// said "START (seq 5): context canceled". Wherever the signal lands —
// opening the hub, its START in flight, the first blocks — record exits 1
// saying "interrupted by SIGTERM", never the bare context error. (The
// delays only spread where it lands; nothing is asserted about time.)
func TestRecordSignalAtAnyMomentSaysSo(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("live pty test")
	}
	for _, delay := range []time.Duration{0, time.Millisecond, 3 * time.Millisecond, 10 * time.Millisecond, 30 * time.Millisecond, 100 * time.Millisecond} {
		t.Run(fmt.Sprint(delay), func(t *testing.T) {
			// An emulator of its own: an open cut short by the signal
			// finishes (and closes the port) behind the command.
			emu := newEmulator(t, 1)
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			go func() {
				time.Sleep(delay)
				cancel(signalError{Sig: syscall.SIGTERM})
			}()
			out, errOut, code := run(t, ctx, "record", "--port", emu.Path(), "--duration", "10s",
				"--out", filepath.Join(t.TempDir(), "c.iwcap"))
			if code != 1 || !strings.Contains(errOut, "interrupted by SIGTERM") || strings.Contains(out+errOut, "context canceled") {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1 and only \"interrupted by SIGTERM\"", code, out, errOut)
			}
		})
	}
}
