package target

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// System names where the kernel's views of mounts, swap and block devices
// are read from.
type System struct {
	MountInfo string // default /proc/self/mountinfo
	Swaps     string // default /proc/swaps
	SysRoot   string // default /sys
	// Stat resolves a swap file to the device holding it; default stat(2).
	Stat func(path string) (Dev, error)
}

// Dev is a device number.
type Dev struct{ Major, Minor uint32 }

func (d Dev) String() string { return fmt.Sprintf("%d:%d", d.Major, d.Minor) }

func (s System) withDefaults() System {
	if s.MountInfo == "" {
		s.MountInfo = "/proc/self/mountinfo"
	}
	if s.Swaps == "" {
		s.Swaps = "/proc/swaps"
	}
	if s.SysRoot == "" {
		s.SysRoot = "/sys"
	}
	if s.Stat == nil {
		s.Stat = func(path string) (Dev, error) {
			var st unix.Stat_t
			if err := unix.Stat(path, &st); err != nil {
				return Dev{}, err
			}
			return Dev{unix.Major(st.Dev), unix.Minor(st.Dev)}, nil
		}
	}
	return s
}

// blockDev is one entry of /sys/class/block.
type blockDev struct {
	name    string
	dev     Dev
	parent  string // whole disk of a partition
	holders []string
	slaves  []string
}

func readBlockDevs(sysRoot string) (map[string]*blockDev, map[Dev]string, error) {
	dir := filepath.Join(sysRoot, "class", "block")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("reading block devices: %w", err)
	}
	byName, byDev := map[string]*blockDev{}, map[Dev]string{}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(filepath.Join(p, "dev"))
		if err != nil {
			continue
		}
		var d Dev
		if _, err := fmt.Sscanf(strings.TrimSpace(string(b)), "%d:%d", &d.Major, &d.Minor); err != nil {
			continue
		}
		bd := &blockDev{name: e.Name(), dev: d}
		if _, err := os.Stat(filepath.Join(p, "partition")); err == nil {
			if real, err := filepath.EvalSymlinks(p); err == nil {
				bd.parent = filepath.Base(filepath.Dir(real))
			}
		}
		bd.holders = names(filepath.Join(p, "holders"))
		bd.slaves = names(filepath.Join(p, "slaves"))
		byName[bd.name] = bd
		byDev[d] = bd.name
	}
	return byName, byDev, nil
}

func names(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// Protected returns every block device that must not be touched, by name,
// with the reason.
func Protected(sys System) (map[string]string, map[Dev]string, error) {
	sys = sys.withDefaults()
	byName, byDev, err := readBlockDevs(sys.SysRoot)
	if err != nil {
		return nil, nil, err
	}
	reasons := map[string]string{}
	seed := func(name, why string) {
		if _, ok := byName[name]; ok {
			if _, seen := reasons[name]; !seen {
				reasons[name] = why
			}
		}
	}
	if err := scanMounts(sys.MountInfo, func(d Dev, source, point string) {
		why := "mounted at " + point
		if point == "/" {
			why = "the root filesystem"
		}
		if n, ok := byDev[d]; ok {
			seed(n, why)
		}
		if strings.HasPrefix(source, "/dev/") {
			seed(devName(source), why)
		}
	}); err != nil {
		return nil, nil, err
	}
	if err := scanSwaps(sys.Swaps, func(file, kind string) {
		if kind == "partition" {
			seed(devName(file), "swap")
			return
		}
		if d, err := sys.Stat(file); err == nil {
			if n, ok := byDev[d]; ok {
				seed(n, "holds swap file "+file)
			}
		}
	}); err != nil {
		return nil, nil, err
	}
	// Close over disks, partitions, holders and slaves.
	children := map[string][]string{}
	for _, b := range byName {
		if b.parent != "" {
			children[b.parent] = append(children[b.parent], b.name)
		}
	}
	out := map[string]string{}
	var visit func(name, why string)
	visit = func(name, why string) {
		b, ok := byName[name]
		if !ok {
			return
		}
		if _, done := out[name]; done {
			return
		}
		out[name] = why
		related := append([]string{}, b.holders...)
		related = append(related, b.slaves...)
		related = append(related, children[name]...)
		if b.parent != "" {
			related = append(related, b.parent)
		}
		for _, r := range related {
			visit(r, why)
		}
	}
	for name, why := range reasons {
		visit(name, name+" is "+why)
	}
	byDevOut := map[Dev]string{}
	for name, why := range out {
		byDevOut[byName[name].dev] = why
	}
	return out, byDevOut, nil
}

// devName maps /dev/sda1 → sda1 and /dev/mapper/vg-root → dm-N.
func devName(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	return filepath.Base(path)
}

// scanMounts calls f for every line of a mountinfo file: the device number
// (field 3), the mount source and the mount point.
func scanMounts(path string, f func(d Dev, source, point string)) error {
	fh, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("reading mounts: %w", err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		fs := strings.Fields(sc.Text())
		sep := -1
		for i, x := range fs {
			if x == "-" {
				sep = i
				break
			}
		}
		if len(fs) < 5 || sep < 0 || sep+2 >= len(fs) {
			return fmt.Errorf("%s:%d: expected \"ID PARENT MAJ:MIN ROOT POINT ... - FSTYPE SOURCE ...\"", path, line)
		}
		var d Dev
		if _, err := fmt.Sscanf(fs[2], "%d:%d", &d.Major, &d.Minor); err != nil {
			return fmt.Errorf("%s:%d: device %q: expected MAJOR:MINOR", path, line, fs[2])
		}
		f(d, unescape(fs[sep+2]), unescape(fs[4]))
	}
	return sc.Err()
}

// scanSwaps calls f for every swap area: its file name and type.
func scanSwaps(path string, f func(file, kind string)) error {
	fh, err := os.Open(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil // no swap support: nothing to protect
		}
		return fmt.Errorf("reading swaps: %w", err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	first := true
	for sc.Scan() {
		if first {
			first = false
			continue // header
		}
		fs := strings.Fields(sc.Text())
		if len(fs) >= 2 {
			f(unescape(fs[0]), fs[1])
		}
	}
	return sc.Err()
}

// unescape undoes the octal escapes (\040 for space) of /proc files.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v int
			if _, err := fmt.Sscanf(s[i+1:i+4], "%3o", &v); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// CheckDevice refuses a protected block device.
func CheckDevice(path string, d Dev, sys System) error {
	_, byDev, err := Protected(sys)
	if err != nil {
		return fmt.Errorf("cannot tell whether %s is in use, refusing it: %w", path, err)
	}
	if why, ok := byDev[d]; ok {
		return fmt.Errorf("%w: %s (%s): %s", ErrProtected, path, d, why)
	}
	return nil
}
