package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplayFarOpRefusedBeforeTarget: an op the target cannot hold is
// refused (exit 2, naming the op) before the target is created or opened
// for writing. An offset near 2^63 wrapped the trace's span negative, so
// replay created a 4096-byte target, refused the op, and left the file.
func TestReplayFarOpRefusedBeforeTarget(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	traceOf := func(name, line string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("# idlewatt trace v1\n0 R 0 4096\n"+line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name, line string
		extra      []string
		want       string
	}{
		{"read-near-2^63", "0.001 R 9223372036854771712 4096", nil,
			"op 2 (read at offset 9223372036854771712, 4096 bytes): ends beyond byte 9223372036854775807"},
		{"write-near-2^63", "0.001 W 9223372036854771712 4096", nil, "op 2 (write at offset 9223372036854771712"},
		{"last-byte", "0.001 R 9223372036854775807 1", nil, "ends beyond byte 9223372036854775807"},
		{"near-2^63-with-size", "0.001 R 9223372036854771712 4096", []string{"--size", "1MiB"}, "ends beyond byte"},
		{"beyond-size", "0.001 R 2097152 4096", []string{"--size", "1MiB"},
			"op 2 (read at offset 2097152, 4096 bytes): ends at byte 2101248: op beyond the end of the target (1048576 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tgt := filepath.Join(t.TempDir(), "t.img")
			args := append([]string{"replay", "--trace", traceOf(tc.name+".trace", tc.line), "--target", tgt, "--engine", "sync"}, tc.extra...)
			_, e, code := run(t, ctx, args...)
			if code != exitUsage || !strings.Contains(e, tc.want) {
				t.Errorf("exit %d, want %d and %q:\n%s", code, exitUsage, tc.want, e)
			}
			if strings.Contains(e, "created ") {
				t.Errorf("a target was created before the refusal:\n%s", e)
			}
			if _, err := os.Lstat(tgt); !os.IsNotExist(err) {
				t.Errorf("target left behind: %v", err)
			}
		})
	}

	// An existing file: refused before a byte of it is touched.
	t.Run("existing-target", func(t *testing.T) {
		tgt := filepath.Join(t.TempDir(), "t.img")
		data := bytes.Repeat([]byte("keep"), 2048) // 8 KiB, no holes
		os.WriteFile(tgt, data, 0o644)
		_, e, code := run(t, ctx, "replay", "--trace", traceOf("w-far.trace", "0.001 W 65536 4096"), "--target", tgt,
			"--allow-destructive", tgt, "--engine", "sync")
		if code != exitUsage || !strings.Contains(e, "op 2 (write at offset 65536, 4096 bytes): ends at byte 69632: op beyond the end of the target (8192 bytes)") {
			t.Errorf("exit %d:\n%s", code, e)
		}
		if got, _ := os.ReadFile(tgt); !bytes.Equal(got, data) {
			t.Error("the existing target was written before the refusal")
		}
	})

	// With --wrap and --size the far op folds into the target and replays.
	t.Run("wrap", func(t *testing.T) {
		tgt := filepath.Join(t.TempDir(), "t.img")
		_, e, code := run(t, ctx, "replay", "--trace", traceOf("wrap.trace", "0.001 R 9223372036854771712 4096"), "--target", tgt,
			"--size", "1MiB", "--wrap", "--engine", "sync", "--timing", "afap")
		if code != 0 {
			t.Errorf("--wrap --size: exit %d:\n%s", code, e)
		}
	})
}
