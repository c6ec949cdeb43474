package alpm

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"syscall"
)

// Sysfs reads and writes one sysfs tree.
type Sysfs struct {
	// Root is the tree's location, for messages and reports.
	Root string
	// Files replace a device's IDENTIFY and log 30h/08h with saved tool
	// outputs, per ata_device name ("dev1.0"); any format
	// ParseIdentifyFile reads.
	Files map[string]DeviceFiles
	fs    FS
}

// DeviceFiles are paths of saved outputs for one drive.
type DeviceFiles struct {
	Identify, LogPage string
}

// Open returns the sysfs tree at root ("" means DefaultRoot).
func Open(root string) *Sysfs {
	if root == "" {
		root = DefaultRoot
	}
	return &Sysfs{Root: root, fs: DirFS(root)}
}

// New returns a Sysfs over any FS (fakes in tests); root names it in messages.
func New(root string, fsys FS) *Sysfs { return &Sysfs{Root: root, fs: fsys} }

// Errors a policy write maps to, matched with errors.Is alongside the
// underlying errno (drivers/ata/libata-sata.c ata_scsi_lpm_store).
var (
	// ErrRejected: EINVAL, the kernel did not accept the name.
	ErrRejected = errors.New("the kernel rejected the policy (EINVAL)")
	// ErrLPMUnsupported: EOPNOTSUPP, a NOLPM-quirked drive or (6.17+) an
	// external or hot-plug port.
	ErrLPMUnsupported = errors.New("link power management not supported on this port (EOPNOTSUPP: NOLPM quirk, or an external/hot-plug port)")
	// ErrPermission: EACCES or EPERM; writing needs root.
	ErrPermission = errors.New("permission denied (writing the policy needs root)")
	// ErrNoPolicyFile: the host has no policy file: it vanished, or its
	// driver has no LPM.
	ErrNoPolicyFile = errors.New("no link_power_management_policy (host vanished, or its driver has no LPM)")
)

// HostError is a failure on one host; errors.Is matches both the package
// sentinel and the errno.
type HostError struct {
	Host string
	Op   string // "read", "write", "read back"
	Err  error
}

func (e *HostError) Error() string {
	if s := sentinel(e.Err); s != nil {
		return fmt.Sprintf("%s: %s: %v", e.Host, e.Op, s)
	}
	return fmt.Sprintf("%s: %s: %v", e.Host, e.Op, e.Err)
}

func (e *HostError) Unwrap() []error {
	if s := sentinel(e.Err); s != nil {
		return []error{s, e.Err}
	}
	return []error{e.Err}
}

func sentinel(err error) error {
	switch {
	case errors.Is(err, syscall.EINVAL):
		return ErrRejected
	case errors.Is(err, syscall.EOPNOTSUPP):
		return ErrLPMUnsupported
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return ErrPermission
	case isNotExist(err):
		return ErrNoPolicyFile
	}
	return nil
}

// HostResult is the outcome of a policy write (or restore) on one host.
type HostResult struct {
	Host      string `json:"host"`
	Previous  Policy `json:"previous,omitempty"`
	Requested Policy `json:"requested"`
	// TargetSet is the policy read back after the write: the target the
	// kernel recorded. Error handling applies it later and may disable
	// LPM on the link without changing this file, so it is never "applied".
	TargetSet Policy `json:"target_set,omitempty"`
	// Skipped says why no write was attempted ("" when one was).
	Skipped string `json:"skipped,omitempty"`
	Err     error  `json:"-"`
	Error   string `json:"error,omitempty"`
}

// OK reports a write whose read-back matches the request.
func (r HostResult) OK() bool { return r.Err == nil && r.Skipped == "" }

func (r *HostResult) fail(err error) {
	r.Err, r.Error = err, err.Error()
}

func policyPath(host string) string { return path.Join(classSCSIHost, host, fPolicy) }

// ReadPolicy returns host's policy target.
func (s *Sysfs) ReadPolicy(host string) (Policy, error) {
	if err := checkHostName(host); err != nil {
		return "", err
	}
	b, err := s.fs.ReadFile(policyPath(host))
	if err != nil {
		return "", &HostError{Host: host, Op: "read", Err: err}
	}
	p, err := ParsePolicy(string(b))
	if err != nil {
		return "", &HostError{Host: host, Op: "read", Err: err}
	}
	return p, nil
}

// checkHostName keeps a --host value from naming a path outside class/scsi_host.
func checkHostName(h string) error {
	if h == "" || strings.ContainsAny(h, "/\\") || h == "." || h == ".." {
		return fmt.Errorf("%q is not a scsi_host name (like host0)", h)
	}
	return nil
}

// PolicyHosts lists the hosts that have a policy file, in natural order.
func (s *Sysfs) PolicyHosts() ([]string, error) {
	entries, err := s.fs.ReadDir(classSCSIHost)
	if err != nil {
		if isNotExist(err) {
			return nil, fmt.Errorf("%s: %w", s.Root, ErrNoSysfs)
		}
		return nil, err
	}
	var out []string
	for _, e := range entries {
		// A host without the file has no ALPM; one whose file exists but
		// cannot be read (EACCES, EIO, a directory) is a host that set-policy
		// must try and report, not skip without a word.
		if _, err := s.fs.ReadFile(policyPath(e.Name())); err == nil || !isNotExist(err) {
			out = append(out, e.Name())
		}
	}
	sortNat(out)
	return out, nil
}

func sortNat(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && natLess(s[j], s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// SetPolicy writes p to each host's policy file and reads it back. With no
// hosts named it writes every host that has the file, skipping those whose
// link_power_management_supported reads 0 (the kernel would refuse them);
// named hosts are always tried. keep_firmware_settings or an unknown name
// is refused before any I/O. A failure on one host never stops the others:
// the returned error is only for refusals before I/O; per-host failures are
// in the results.
func (s *Sysfs) SetPolicy(hosts []string, p Policy) ([]HostResult, error) {
	if !p.Known() {
		return nil, &UnknownPolicyError{Name: string(p), Suggestion: nearest(string(p))}
	}
	if !p.Writable() {
		return nil, ErrNotWritable
	}
	all := len(hosts) == 0
	if all {
		var err error
		if hosts, err = s.PolicyHosts(); err != nil {
			return nil, err
		}
	}
	res := make([]HostResult, 0, len(hosts))
	for _, h := range hosts {
		r := HostResult{Host: h, Requested: p}
		if all {
			if b, err := s.fs.ReadFile(path.Join(classSCSIHost, h, fSupported)); err == nil && strings.TrimSpace(string(b)) == "0" {
				r.Skipped = "link_power_management_supported is 0 (external or hot-plug port, or NOLPM drive)"
				res = append(res, r)
				continue
			}
		}
		s.write(&r, p)
		res = append(res, r)
	}
	return res, nil
}

// write does one host: previous, write, read back.
func (s *Sysfs) write(r *HostResult, p Policy) {
	if err := checkHostName(r.Host); err != nil {
		r.fail(err)
		return
	}
	if prev, err := s.ReadPolicy(r.Host); err == nil {
		r.Previous = prev
	}
	// The kernel prefix-matches the buffer, so a trailing newline (as
	// echo writes) is accepted.
	if err := s.fs.WriteFile(policyPath(r.Host), []byte(string(p)+"\n")); err != nil {
		r.fail(&HostError{Host: r.Host, Op: "write " + string(p), Err: err})
		return
	}
	got, err := s.ReadPolicy(r.Host)
	if err != nil {
		r.fail(err)
		return
	}
	r.TargetSet = got
	if got != p {
		r.fail(&HostError{Host: r.Host, Op: "read back", Err: fmt.Errorf("target reads %s after writing %s", got, p)})
	}
}

// Failed reports whether any result is a failure (skips are not).
func Failed(res []HostResult) bool {
	for _, r := range res {
		if r.Err != nil {
			return true
		}
	}
	return false
}
