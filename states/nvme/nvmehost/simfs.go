package nvmehost

import (
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"syscall"

	"github.com/idlewatt/idlewatt/states/alpm"
	"github.com/idlewatt/idlewatt/states/nvme"
)

// SimFS makes a tree of plain files (a fixture, a simulated host) answer
// writes as the kernel's store functions do, for the files Control
// writes: pcie_aspm's policy is kept in the bracketed form the kernel
// shows ("default [powersave] …", pcie_aspm_get_policy), unknown names
// fail with EINVAL (pcie_aspm_set_policy); a latency tolerance must be
// auto, any or 0…2^31−1 (pm_qos_latency_tolerance_us_store); a module
// parameter must be an unsigned number (param_set_ulong). Everything else
// passes through. A new tolerance reprograms the simulated drive as
// nvme_set_latency_tolerance does: the controller's idlewatt_feature_0c.json,
// if the tree has one, gets the table PlanAPST builds from the tree's
// Identify file, the new tolerance, its quirks and the nvme_core parameters.
func SimFS(fsys alpm.FS) alpm.FS { return simFS{fsys} }

type simFS struct{ alpm.FS }

func (s simFS) WriteFile(name string, data []byte) error {
	v := strings.TrimSuffix(string(data), "\n")
	bad := &fs.PathError{Op: "write", Path: name, Err: syscall.EINVAL}
	switch {
	case name == nvme.ASPMPolicyFile:
		if _, err := nvme.ParseASPMPolicyName(v); err != nil {
			return bad
		}
		// The file must exist, as on sysfs.
		if _, err := s.FS.ReadFile(name); err != nil {
			return err
		}
		var b strings.Builder
		for _, p := range nvme.ASPMPolicies {
			if p == v {
				fmt.Fprintf(&b, "[%s] ", p)
			} else {
				fmt.Fprintf(&b, "%s ", p)
			}
		}
		b.WriteString("\n")
		return s.FS.WriteFile(name, []byte(b.String()))
	case strings.HasSuffix(name, "/"+nvme.FileTolerance):
		if _, err := nvme.ParseTolerance(v); err != nil {
			return bad
		}
		if err := s.FS.WriteFile(name, data); err != nil {
			return err
		}
		s.reprogram(strings.TrimSuffix(name, "/"+nvme.FileTolerance))
		return nil
	case strings.HasPrefix(name, nvme.DirNVMeCore+"/") && !strings.HasSuffix(name, "/force_apst"):
		if _, err := strconv.ParseUint(v, 0, 64); err != nil {
			return bad
		}
	}
	return s.FS.WriteFile(name, data)
}

// reprogram rewrites the APST feature file of the controller at dir
// (class/nvme/nvmeN) after its tolerance changed. Trees without Identify
// or feature files are left alone.
func (s simFS) reprogram(dir string) {
	name := path.Base(dir)
	sys := Discover(s.FS, "", Options{})
	for _, c := range sys.Ctrls {
		if c.Name != name || c.Kernel == nil {
			continue
		}
		a := c.Kernel.Feature()
		_ = s.FS.WriteFile(path.Join(dir, nvme.FileFeature0C), a.APSTJSON()) // absent: nothing to reprogram
	}
}
