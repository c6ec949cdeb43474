package alpm

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// A tree archive holds a whole sysfs tree in one text file, because sysfs
// paths contain ':' (PCI and SCSI addresses), which Go module zips forbid:
// checked in as plain files, they would make the module uninstallable.
// The format (docs/states.md):
//
//	== file class/ata_device/dev1.0/class
//	ata
//	== link class/scsi_host/host0 -> ../../devices/pci0000:00/0000:00:17.0/ata1/host0/scsi_host/host0
//
// A file's content is every byte between its header line and the next
// header (so "ata\n" above). Lines before the first header are comments.
const archiveHeader = "== "

// WriteTreeArchive writes the tree under dir as an archive, in path order.
func WriteTreeArchive(w io.Writer, dir string) error {
	type entry struct{ rel, link string }
	var entries []entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			entries = append(entries, entry{rel, filepath.ToSlash(t)})
		case d.Type().IsRegular():
			entries = append(entries, entry{rel: rel})
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].rel < entries[j].rel })
	bw := bufio.NewWriter(w)
	for _, e := range entries {
		if e.link != "" {
			fmt.Fprintf(bw, "%slink %s -> %s\n", archiveHeader, e.rel, e.link)
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(e.rel)))
		if err != nil {
			return err
		}
		if bytes.HasPrefix(b, []byte(archiveHeader)) || bytes.Contains(b, []byte("\n"+archiveHeader)) {
			return fmt.Errorf("%s: a line starts with %q, which the archive cannot hold", e.rel, archiveHeader)
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			return fmt.Errorf("%s: no final newline, which the archive cannot hold", e.rel)
		}
		fmt.Fprintf(bw, "%sfile %s\n", archiveHeader, e.rel)
		bw.Write(b)
	}
	return bw.Flush()
}

// ExtractTreeArchive recreates an archived tree under dir (which must
// exist). Paths that would leave dir are refused.
func ExtractTreeArchive(r io.Reader, dir string) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	// Every write goes through an os.Root: a link in the archive can point
	// anywhere inside the tree, and a later entry written through it must not
	// land outside (a link under another link could otherwise escape).
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	lines := strings.SplitAfter(string(data), "\n")
	var cur string // file being filled
	var content strings.Builder
	flush := func() error {
		if cur == "" {
			return nil
		}
		p := filepath.FromSlash(cur)
		if err := root.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		err := root.WriteFile(p, []byte(content.String()), 0o644)
		cur = ""
		content.Reset()
		return err
	}
	for n, line := range lines {
		if !strings.HasPrefix(line, archiveHeader) {
			if cur != "" {
				content.WriteString(line)
			}
			continue
		}
		if err := flush(); err != nil {
			return err
		}
		h := strings.TrimSuffix(strings.TrimPrefix(line, archiveHeader), "\n")
		kind, rest, _ := strings.Cut(h, " ")
		switch kind {
		case "file":
			if !localPath(rest) {
				return fmt.Errorf("line %d: %q is not a path inside the tree", n+1, rest)
			}
			cur = rest
		case "link":
			name, target, ok := strings.Cut(rest, " -> ")
			if !ok || !localPath(name) || target == "" || path.IsAbs(target) ||
				!localPath(path.Join(path.Dir(name), target)) {
				return fmt.Errorf("line %d: want \"link NAME -> RELATIVE-TARGET\" inside the tree, got %q", n+1, rest)
			}
			p := filepath.FromSlash(name)
			if err := root.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := root.Symlink(filepath.FromSlash(target), p); err != nil {
				return err
			}
		default:
			return fmt.Errorf("line %d: unknown entry %q (want file or link)", n+1, kind)
		}
	}
	return flush()
}

func localPath(p string) bool { return p != "" && fs.ValidPath(p) && p != "." }
