package nvme

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"syscall"

	"github.com/idlewatt/idlewatt/states/alpm"
)

// SimFS makes a tree of plain files (a fixture, a simulated host) answer
// writes as the kernel's store functions do, for the files Control
// writes: pcie_aspm's policy is kept in the bracketed form the kernel
// shows ("default [powersave] …", pcie_aspm_get_policy), unknown names
// fail with EINVAL (pcie_aspm_set_policy); a latency tolerance must be
// auto, any or 0…2^31−1 (pm_qos_latency_tolerance_us_store); a module
// parameter must be an unsigned number (param_set_ulong). Everything else
// passes through. It does not reprogram the simulated drive's APST table.
func SimFS(fsys alpm.FS) alpm.FS { return simFS{fsys} }

type simFS struct{ alpm.FS }

func (s simFS) WriteFile(name string, data []byte) error {
	v := strings.TrimSuffix(string(data), "\n")
	bad := &fs.PathError{Op: "write", Path: name, Err: syscall.EINVAL}
	switch {
	case name == aspmPolicy:
		if _, err := ParseASPMPolicyName(v); err != nil {
			return bad
		}
		// The file must exist, as on sysfs.
		if _, err := s.FS.ReadFile(name); err != nil {
			return err
		}
		var b strings.Builder
		for _, p := range policies {
			if p == v {
				fmt.Fprintf(&b, "[%s] ", p)
			} else {
				fmt.Fprintf(&b, "%s ", p)
			}
		}
		b.WriteString("\n")
		return s.FS.WriteFile(name, []byte(b.String()))
	case strings.HasSuffix(name, "/"+fTolerance):
		if _, err := ParseTolerance(v); err != nil {
			return bad
		}
	case strings.HasPrefix(name, nvmeCoreDir+"/") && !strings.HasSuffix(name, "/force_apst"):
		if _, err := strconv.ParseUint(v, 0, 64); err != nil {
			return bad
		}
	}
	return s.FS.WriteFile(name, data)
}
