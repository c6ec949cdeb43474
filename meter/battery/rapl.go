package battery

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// RAPL reads the CPU package energy counter (powercap intel-rapl:0). It is
// the CPU package only — never drive power — and is offered as an extra
// channel to explain what else the laptop's battery feeds.
type RAPL struct {
	dir      string
	maxRange uint64 // µJ; the counter wraps to 0 after it
	prev     uint64
	primed   bool
}

// OpenRAPL opens sysRoot/class/powercap/intel-rapl:0.
func OpenRAPL(sysRoot string) (*RAPL, error) {
	dir := filepath.Join(sysRoot, "class", "powercap", "intel-rapl:0")
	m, err := readUint(dir, "max_energy_range_uj")
	if err != nil {
		return nil, err
	}
	if m == 0 {
		return nil, fmt.Errorf("rapl: %s/max_energy_range_uj is 0", dir)
	}
	r := &RAPL{dir: dir, maxRange: m}
	if _, err := r.Delta(); err != nil {
		return nil, err
	}
	return r, nil
}

// Delta returns the package energy in joules since the previous call (0 on
// the first), across counter wraparound.
func (r *RAPL) Delta() (float64, error) {
	e, err := readUint(r.dir, "energy_uj")
	if err != nil {
		return 0, err
	}
	if !r.primed {
		r.prev, r.primed = e, true
		return 0, nil
	}
	var d uint64
	if e >= r.prev {
		d = e - r.prev
	} else {
		d = r.maxRange - r.prev + e + 1
	}
	r.prev = e
	return float64(d) * 1e-6, nil
}

func readUint(dir, name string) (uint64, error) {
	p := filepath.Join(dir, name)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrPermission) {
		return 0, fmt.Errorf("rapl: %s: permission denied; since Linux 5.10 energy_uj is readable only by root (CVE-2020-8694): run as root, add a udev rule making it readable, or drop the RAPL channel", p)
	}
	if err != nil {
		return 0, fmt.Errorf("rapl: %w", err)
	}
	s := strings.TrimSpace(string(b))
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("rapl: %s: %q is not an integer", p, s)
	}
	return n, nil
}
