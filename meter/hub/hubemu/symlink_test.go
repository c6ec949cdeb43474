package hubemu

import (
	"os"
	"path/filepath"
	"testing"
)

// The emulator renames its pty link into Options.Symlink and removes it on
// Close: a regular file at that path (or at path.new) is refused and stays.
func TestSymlinkNeverReplacesAFile(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"tty", "tty.new"} {
		sub := filepath.Join(dir, name+"-case")
		os.Mkdir(sub, 0o755)
		p := filepath.Join(sub, name)
		if err := os.WriteFile(p, []byte("precious"), 0o644); err != nil {
			t.Fatal(err)
		}
		if e, err := New(Options{Ports: 1, Symlink: filepath.Join(sub, "tty")}); err == nil {
			e.Close()
			t.Fatalf("%s is a file: New succeeded", name)
		}
		if b, err := os.ReadFile(p); err != nil || string(b) != "precious" {
			t.Fatalf("%s changed: %q %v", name, b, err)
		}
	}
}

// Close removes the link it made, and only that.
func TestCloseRemovesOnlyItsLink(t *testing.T) {
	link := filepath.Join(t.TempDir(), "tty")
	e, err := New(Options{Ports: 1, Symlink: link})
	if err != nil {
		t.Skip("no pty:", err)
	}
	// Someone puts a file where the link was.
	os.Remove(link)
	if err := os.WriteFile(link, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Close()
	if b, err := os.ReadFile(link); err != nil || string(b) != "precious" {
		t.Fatalf("Close removed or changed a file it did not make: %q %v", b, err)
	}
}
