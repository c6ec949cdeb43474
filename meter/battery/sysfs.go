package battery

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/meter"
)

// Method says how a reading's power was obtained.
type Method string

const (
	MethodPower  Method = "power_now"
	MethodIV     Method = "current_now*voltage_now"
	MethodEnergy Method = "energy_now deltas"
	MethodCharge Method = "charge_now*voltage_now deltas"
)

// Reading is one poll of the battery's sysfs directory. Zero fields were
// absent.
type Reading struct {
	At      time.Duration // poll time (monotonic, relative to any origin)
	Status  string
	Power   float64 // W, instantaneous (power_now or current×voltage)
	Energy  float64 // J remaining (energy_now, or charge_now×voltage_now)
	Voltage float64 // V
	Method  Method
}

// ErrNotDischarging: the battery meter is valid only while discharging.
var ErrNotDischarging = errors.New("battery is not discharging; the battery meter is valid only on battery power (unplug the charger)")

// FindBattery returns the first power supply of type Battery under sysRoot
// (a /sys tree).
func FindBattery(sysRoot string) (string, error) {
	dir := filepath.Join(sysRoot, "class", "power_supply")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("battery: %w", err)
	}
	for _, e := range ents {
		if t, _ := os.ReadFile(filepath.Join(dir, e.Name(), "type")); strings.TrimSpace(string(t)) == "Battery" {
			return e.Name(), nil
		}
	}
	return "", fmt.Errorf("battery: no power supply of type Battery in %s", dir)
}

// Read polls dir (…/power_supply/BAT0). It prefers power_now, then
// current_now×voltage_now, then energy_now (or charge_now×voltage_now) for
// deltas. Firmware that reports discharge as negative is normalised.
func Read(dir string, at time.Duration) (Reading, error) {
	r := Reading{At: at}
	st, err := readString(dir, "status")
	if err != nil {
		return r, err
	}
	r.Status = st
	if st != "Discharging" {
		return r, fmt.Errorf("battery: %s: status %q: %w", dir, st, ErrNotDischarging)
	}
	v, okV, err := readMicro(dir, "voltage_now")
	if err != nil {
		return r, err
	}
	r.Voltage = v
	if p, ok, err := readMicro(dir, "power_now"); err != nil {
		return r, err
	} else if ok && p != 0 {
		r.Power, r.Method = abs(p), MethodPower
	} else if i, ok, err := readMicro(dir, "current_now"); err != nil {
		return r, err
	} else if ok && i != 0 && okV {
		r.Power, r.Method = abs(i)*v, MethodIV
	}
	if e, ok, err := readMicro(dir, "energy_now"); err != nil {
		return r, err
	} else if ok {
		r.Energy = e * 3600 // µWh → J after the 1e-6
		if r.Method == "" {
			r.Method = MethodEnergy
		}
	} else if q, ok, err := readMicro(dir, "charge_now"); err != nil {
		return r, err
	} else if ok && okV {
		r.Energy = q * 3600 * v // µAh at the present voltage
		if r.Method == "" {
			r.Method = MethodCharge
		}
	}
	if r.Method == "" {
		return r, fmt.Errorf("battery: %s: none of power_now, current_now+voltage_now, energy_now, charge_now+voltage_now", dir)
	}
	switch {
	case okV && v != 0 && !(v >= MinVolts && v <= MaxVolts):
		return r, fmt.Errorf("battery: %w: %s: voltage_now %g V outside %g–%g V", meter.ErrCalibration, dir, v, float64(MinVolts), float64(MaxVolts))
	case r.Power > MaxWatts:
		return r, fmt.Errorf("battery: %w: %s: %s gives %g W, beyond a laptop's %g W", meter.ErrCalibration, dir, r.Method, r.Power, float64(MaxWatts))
	}
	return r, nil
}

// Physical bounds of a laptop battery gauge's readings: packs are 1–6
// cells in series (3–26 V; 1–100 V leaves room for any pack) and no laptop
// draws 1 kW. A reading beyond them is a gauge (or unit) error: refused at
// Open, a one-sample "implausible" gap while streaming.
const (
	MinVolts = 1
	MaxVolts = 100
	MaxWatts = 1000
)

func readString(dir, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return "", fmt.Errorf("battery: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// readMicro reads an integer in micro-units and returns it in base units;
// ok is false if the file is absent or unreadable for lack of data (ENODEV
// is what some drivers return while the gauge has no value).
func readMicro(dir, name string) (float64, bool, error) {
	p := filepath.Join(dir, name)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) || (err != nil && strings.Contains(err.Error(), "no such device")) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("battery: %w", err)
	}
	s := strings.TrimSpace(string(b))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("battery: %s: %q is not an integer", p, s)
	}
	return float64(n) * 1e-6, true, nil
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
