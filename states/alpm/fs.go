package alpm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
)

// DefaultRoot is where Linux mounts sysfs.
const DefaultRoot = "/sys"

// FS is the view of sysfs that every read and write goes through, so tests
// and the emulator can substitute a tree of plain files. Names are
// slash-separated and relative to the root, as in io/fs
// ("class/scsi_host/host0/link_power_management_policy"). Symbolic links
// inside the tree are followed; links may not leave the root.
type FS interface {
	ReadFile(name string) ([]byte, error)
	// WriteFile writes data to an existing file in one write call (sysfs
	// store functions see exactly one buffer). It never creates a file: a
	// host that vanished must fail, not grow a stray file in a fixture tree.
	WriteFile(name string, data []byte) error
	ReadDir(name string) ([]fs.DirEntry, error)
	// Readlink returns the target of a symbolic link, or an error when name
	// is not one.
	Readlink(name string) (string, error)
}

// DirFS returns an FS rooted at the directory dir (an *os.Root is opened per
// call, so the tree may change underneath, as sysfs does when a host is
// hot-unplugged).
func DirFS(dir string) FS { return dirFS{dir: dir} }

type dirFS struct{ dir string }

func (d dirFS) open() (*os.Root, error) { return os.OpenRoot(d.dir) }

func (d dirFS) ReadFile(name string) ([]byte, error) {
	r, err := d.open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.ReadFile(name)
}

func (d dirFS) WriteFile(name string, data []byte) error {
	r, err := d.open()
	if err != nil {
		return err
	}
	defer r.Close()
	f, err := r.OpenFile(name, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	// sysfs reports the store function's error on write; a plain file may
	// only report it on close.
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

func (d dirFS) ReadDir(name string) ([]fs.DirEntry, error) {
	r, err := d.open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return fs.ReadDir(r.FS(), name)
}

func (d dirFS) Readlink(name string) (string, error) {
	r, err := d.open()
	if err != nil {
		return "", err
	}
	defer r.Close()
	return r.Readlink(name)
}

// maxLinks bounds symlink hops during resolution, like the kernel's 40.
const maxLinks = 40

// resolve follows every symbolic link in name and returns the physical path
// relative to the root. It exists because the topology sysfs encodes (which
// ata port a host, link, device or block device belongs to) is only visible
// in the link targets: /sys/block/sda ->
// ../devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda.
// Absolute targets are taken relative to the root after dropping a leading
// "/sys" (real sysfs uses relative links only).
func resolve(fsys FS, name string) (string, error) {
	pending := splitPath(name)
	var cur []string
	hops := 0
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			if len(cur) == 0 {
				return "", fmt.Errorf("%s: path leaves the sysfs root", name)
			}
			cur = cur[:len(cur)-1]
			continue
		}
		next := path.Join(append(append([]string{}, cur...), c)...)
		target, err := fsys.Readlink(next)
		if err != nil {
			cur = append(cur, c)
			continue
		}
		if hops++; hops > maxLinks {
			return "", fmt.Errorf("%s: too many levels of symbolic links", name)
		}
		if strings.HasPrefix(target, "/") {
			target = strings.TrimPrefix(strings.TrimPrefix(target, "/sys"), "/")
			cur = cur[:0]
		}
		pending = append(splitPath(target), pending...)
	}
	if len(cur) == 0 {
		return ".", nil
	}
	return path.Join(cur...), nil
}

// Resolve follows every symbolic link in name under fsys and returns the
// physical path relative to the root (for other sysfs readers, such as
// states/nvme).
func Resolve(fsys FS, name string) (string, error) { return resolve(fsys, name) }

func splitPath(p string) []string { return strings.Split(p, "/") }

// isNotExist reports a missing file however the FS spells it.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
