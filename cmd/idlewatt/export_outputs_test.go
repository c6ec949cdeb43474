package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/analysis/synthcap"
	"github.com/idlewatt/idlewatt/internal/outfile"
)

// export --parquet DIR --overwrite checks all four member files before it
// reads the capture (issue 26): a member that is a symbolic link, a hard
// link to the capture, a directory, or a file being written in place is
// refused (exit 2) with every other member as it was. It used to replace
// the members before the refused one first.
func TestExportParquetChecksEveryMemberFirst(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	capPath := filepath.Join(dir, "c.iwcap")
	if err := synthcap.Write(capPath, synthcap.Review(10*time.Second, 1000, 0)); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(dir, "victim.txt")
	if err := os.WriteFile(victim, []byte("victim"), 0o644); err != nil {
		t.Fatal(err)
	}
	// setup makes DIR with the four members holding "old", then spoils one.
	setup := func(t *testing.T, spoil func(member string) error, member string) string {
		pq := filepath.Join(t.TempDir(), "pq")
		if err := os.Mkdir(pq, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"samples.parquet", "io.parquet", "state.parquet", "summary.parquet"} {
			if f == member {
				continue
			}
			if err := os.WriteFile(filepath.Join(pq, f), []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := spoil(filepath.Join(pq, member)); err != nil {
			t.Fatal(err)
		}
		return pq
	}
	var held *os.File
	for _, c := range []struct {
		name, member, want string
		spoil              func(string) error
	}{
		{"symlink", "state.parquet", "state.parquet: is a symbolic link", func(p string) error { return os.Symlink(victim, p) }},
		{"hard link to the capture", "summary.parquet", "summary.parquet: is the same file as the input", func(p string) error { return os.Link(capPath, p) }},
		{"directory", "io.parquet", "io.parquet: is a directory", func(p string) error { return os.Mkdir(p, 0o755) }},
		{"written in place", "summary.parquet", "is being written in place by PID", func(p string) (err error) {
			held, err = outfile.CreateInPlace(p, outfile.Options{})
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pq := setup(t, c.spoil, c.member)
			_, errOut, code := run(t, context.Background(), "export", capPath, "--parquet", pq, "--overwrite")
			if code != 2 || !strings.Contains(errOut, c.want) {
				t.Fatalf("exit %d, %q; want exit 2 and %q", code, errOut, c.want)
			}
			ents, _ := os.ReadDir(pq)
			for _, e := range ents {
				p := filepath.Join(pq, e.Name())
				if e.Name() == c.member {
					continue
				}
				if b, err := os.ReadFile(p); err != nil || string(b) != "old" {
					t.Errorf("%s was written before the refusal (%d bytes, %v)", e.Name(), len(b), err)
				}
			}
			if len(ents) != 4 {
				t.Errorf("%d entries in DIR, want the 4 members only", len(ents))
			}
		})
	}
	if held != nil {
		held.Close()
	}
	if b, _ := os.ReadFile(victim); string(b) != "victim" {
		t.Errorf("the symlink's target was written: %q", b)
	}
	// Without --overwrite an existing DIR is refused before the work, and
	// its parent must exist.
	pq := setup(t, func(p string) error { return os.WriteFile(p, []byte("old"), 0o644) }, "io.parquet")
	if _, errOut, code := run(t, context.Background(), "export", capPath, "--parquet", pq); code != 2 || !strings.Contains(errOut, "exists") {
		t.Errorf("existing DIR without --overwrite: exit %d, %q", code, errOut)
	}
	missing := filepath.Join(dir, "no", "such", "pq")
	if _, errOut, code := run(t, context.Background(), "export", capPath, "--parquet", missing); code != 1 || !strings.Contains(errOut, "no such file or directory") {
		t.Errorf("DIR under a missing directory: exit %d, %q", code, errOut)
	}
}
