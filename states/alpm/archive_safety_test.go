package alpm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExtractTreeArchiveStaysInsideThroughSymlinks: each link target is
// checked lexically against the link's own name, but a link whose parent
// is itself a link lives somewhere else, so a chain of two links can point
// outside dir; a file written through it lands outside (issue 8 item 7).
// ExtractTreeArchive writes through an os.Root, which confines them.
func TestExtractTreeArchiveStaysInsideThroughSymlinks(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "tree")
	outside := filepath.Join(base, "x")
	for _, d := range []string{dir, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h := archiveHeader
	// a/b/c → a/d (lexically and really inside); a/b/c/up → ../../../x is
	// lexically "x", inside, but really dir/a/d/../../../x = base/x.
	arch := h + "file a/d/keep\nk\n" +
		h + "link a/b/c -> ../d\n" +
		h + "link a/b/c/up -> ../../../x\n" +
		h + "file a/b/c/up/evil\npwned\n"
	err := ExtractTreeArchive(strings.NewReader(arch), dir)
	if b, rerr := os.ReadFile(filepath.Join(outside, "evil")); rerr == nil {
		t.Fatalf("the archive wrote %s outside %s (content %q; Extract returned %v)", filepath.Join(outside, "evil"), dir, b, err)
	}
	if err == nil {
		t.Fatal("an archive whose links lead outside the tree was accepted")
	}
}
