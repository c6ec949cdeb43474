package alpm

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// faultFS fails writes (and optionally reads) of chosen hosts' policy files
// with an errno, as the kernel's store function does.
type faultFS struct {
	FS
	writeErr map[string]error // host → error on write
	readErr  map[string]error // host → error on read of the policy
	writes   []string         // "host policy" for every write attempted
}

func hostOf(name string) string { return path.Base(path.Dir(name)) }

func (f *faultFS) WriteFile(name string, data []byte) error {
	f.writes = append(f.writes, hostOf(name)+" "+strings.TrimSpace(string(data)))
	if err := f.writeErr[hostOf(name)]; err != nil {
		return &fs.PathError{Op: "write", Path: name, Err: err}
	}
	return f.FS.WriteFile(name, data)
}

func (f *faultFS) ReadFile(name string) ([]byte, error) {
	if strings.HasSuffix(name, fPolicy) {
		if err := f.readErr[hostOf(name)]; err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
	}
	return f.FS.ReadFile(name)
}

func newFault(t *testing.T, scenario string) (*Sysfs, *faultFS, string) {
	root := fixtureRoot(t, scenario)
	f := &faultFS{FS: DirFS(root), writeErr: map[string]error{}, readErr: map[string]error{}}
	return New(root, f), f, root
}

func readPolicyFile(t *testing.T, root, host string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "class/scsi_host", host, fPolicy))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestSetPolicyPerHostErrors(t *testing.T) {
	s, f, root := newFault(t, "desktop-6port-617")
	f.writeErr["host0"] = syscall.EINVAL
	f.writeErr["host1"] = syscall.EOPNOTSUPP
	f.writeErr["host2"] = syscall.EACCES
	res, err := s.SetPolicy([]string{"host0", "host1", "host2", "host3", "host7"}, MinPower)
	if err != nil {
		t.Fatal(err)
	}
	want := []error{ErrRejected, ErrLPMUnsupported, ErrPermission, nil, ErrNoPolicyFile}
	errnos := []error{syscall.EINVAL, syscall.EOPNOTSUPP, syscall.EACCES, nil, nil}
	for i, r := range res {
		if want[i] == nil {
			if r.Err != nil || r.TargetSet != MinPower || r.Previous != MedPowerWithDIPM {
				t.Errorf("%s: %+v, want target set min_power from med_power_with_dipm", r.Host, r)
			}
			continue
		}
		if !errors.Is(r.Err, want[i]) || (errnos[i] != nil && !errors.Is(r.Err, errnos[i])) {
			t.Errorf("%s: err %v, want %v / %v", r.Host, r.Err, want[i], errnos[i])
		}
		if r.TargetSet != "" || !strings.HasPrefix(r.Error, r.Host+": ") {
			t.Errorf("%s: %+v", r.Host, r)
		}
	}
	if got := readPolicyFile(t, root, "host3"); got != "min_power" {
		t.Errorf("host3 file %q", got)
	}
	if got := readPolicyFile(t, root, "host0"); got != "med_power_with_dipm" {
		t.Errorf("host0 changed to %q despite EINVAL", got)
	}
	if !Failed(res) {
		t.Error("Failed = false")
	}
	if _, err := os.Stat(filepath.Join(root, "class/scsi_host/host7")); err == nil {
		t.Error("a write to a missing host created it")
	}
}

func TestSetPolicyAllSkipsUnsupported(t *testing.T) {
	s, f, _ := newFault(t, "desktop-6port-617")
	res, err := s.SetPolicy(nil, MinPowerWithPartial)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 6 {
		t.Fatalf("%d results", len(res))
	}
	for i, r := range res {
		if skipped := r.Skipped != ""; skipped != (i >= 4) {
			t.Errorf("%s skipped %q", r.Host, r.Skipped)
		}
	}
	if Failed(res) || len(f.writes) != 4 {
		t.Errorf("failed %v, writes %v", Failed(res), f.writes)
	}
}

func TestSetPolicyRefusedBeforeIO(t *testing.T) {
	s, f, _ := newFault(t, "laptop-devslp")
	if _, err := s.SetPolicy(nil, KeepFirmwareSettings); !errors.Is(err, ErrNotWritable) {
		t.Errorf("keep_firmware_settings: %v", err)
	}
	if _, err := s.SetPolicy(nil, Policy("min_powr")); !errors.Is(err, ErrUnknownPolicy) || !strings.Contains(err.Error(), "did you mean min_power?") {
		t.Errorf("typo: %v", err)
	}
	if _, _, err := s.ApplyPolicy(nil, "keep_firmware_settings"); !errors.Is(err, ErrNotWritable) {
		t.Errorf("apply keep: %v", err)
	}
	if len(f.writes) != 0 {
		t.Errorf("writes happened: %v", f.writes)
	}
	if _, err := s.SetPolicy([]string{"../../etc"}, MinPower); err != nil {
		t.Fatal(err)
	} else if len(f.writes) != 0 {
		t.Errorf("a path-like host name was written: %v", f.writes)
	}
}

func TestParsePolicy(t *testing.T) {
	for _, c := range []struct{ in, want, suggest string }{
		{"min_power\n", "min_power", ""},
		{" med_power_with_dipm ", "med_power_with_dipm", ""},
		{"keep_firmware_settings", "keep_firmware_settings", ""},
		{"min_powr", "", "min_power"},
		{"MIN_POWER", "", "min_power"},
		{"medium-power", "", "medium_power"},
		{"max_perf", "", "max_performance"},
		{"min_power_with_partail", "", "min_power_with_partial"},
		{"banana", "", ""},
		{"min_power_x", "", "min_power"}, // the kernel would prefix-match it
	} {
		p, err := ParsePolicy(c.in)
		if string(p) != c.want {
			t.Errorf("%q: %q, want %q", c.in, p, c.want)
		}
		var ue *UnknownPolicyError
		if c.want == "" && (!errors.As(err, &ue) || string(ue.Suggestion) != c.suggest) {
			t.Errorf("%q: err %v, want suggestion %q", c.in, err, c.suggest)
		}
	}
	if _, err := ParseWritablePolicy("keep_firmware_settings"); !errors.Is(err, ErrNotWritable) {
		t.Errorf("writable keep: %v", err)
	}
}

func TestGuardRestores(t *testing.T) {
	s, f, root := newFault(t, "desktop-6port-617")
	f.writeErr["host3"] = syscall.EOPNOTSUPP
	g, res, err := s.ApplyPolicy([]string{"host0", "host1", "host3"}, "min_power")
	if err != nil {
		t.Fatal(err)
	}
	if !res[0].OK() || !res[1].OK() || res[2].OK() {
		t.Fatalf("results %+v", res)
	}
	// Someone changes host1 behind our back; restore still wins.
	os.WriteFile(filepath.Join(root, "class/scsi_host/host1", fPolicy), []byte("medium_power\n"), 0o644)
	f.writes = nil
	out := g.Restore()
	if len(out) != 2 || Failed(out) {
		t.Fatalf("restore %+v, want host0 and host1 only (host3 was never changed)", out)
	}
	for _, h := range []string{"host0", "host1", "host3"} {
		if got := readPolicyFile(t, root, h); got != "med_power_with_dipm" {
			t.Errorf("%s = %q after restore", h, got)
		}
	}
	if again := g.Restore(); len(again) != 2 || len(f.writes) != 2 {
		t.Errorf("second restore wrote again: %v", f.writes)
	}
}

func TestGuardCannotRestoreKeepFirmware(t *testing.T) {
	s, _, root := newFault(t, "laptop-devslp")
	os.WriteFile(filepath.Join(root, "class/scsi_host/host0", fPolicy), []byte("keep_firmware_settings\n"), 0o644)
	g, _, err := s.ApplyPolicy(nil, "max_performance")
	if err != nil {
		t.Fatal(err)
	}
	out := g.Restore()
	if len(out) != 1 || !errors.Is(out[0].Err, ErrNotWritable) {
		t.Fatalf("restore %+v, want ErrNotWritable", out)
	}
	if got := readPolicyFile(t, root, "host0"); got != "max_performance" {
		t.Errorf("policy %q", got)
	}
}

func TestRestoreOnContextCancel(t *testing.T) {
	s, _, root := newFault(t, "laptop-devslp")
	g, _, err := s.ApplyPolicy(nil, "max_performance")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	release := g.RestoreOnExit(ctx)
	cancel()
	<-g.Restored()
	if got := readPolicyFile(t, root, "host0"); got != "min_power" {
		t.Errorf("after cancel: %q", got)
	}
	if out := release(); len(out) != 1 || out[0].TargetSet != MinPower {
		t.Errorf("release %+v", out)
	}
}

func TestRestoreOnSignal(t *testing.T) {
	// The test process handles SIGHUP itself, so the re-sent signal
	// after restoring does not end it.
	ch := make(chan os.Signal, 2)
	signalNotify(ch, syscall.SIGHUP)
	defer signalStop(ch)
	s, _, root := newFault(t, "laptop-devslp")
	g, _, err := s.ApplyPolicy(nil, "medium_power")
	if err != nil {
		t.Fatal(err)
	}
	release := g.RestoreOnExit(context.Background())
	defer release()
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	<-g.Restored()
	if got := readPolicyFile(t, root, "host0"); got != "min_power" {
		t.Errorf("after SIGHUP: %q", got)
	}
	// Both SIGHUPs (ours and the guard's re-sent one) must reach ch before
	// it is unregistered: a re-sent signal arriving after that would take
	// the default action and end the test binary.
	for n := 0; n < 2; n++ {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("SIGHUP %d of 2 never arrived: the guard did not re-send the signal", n+1)
		}
	}
}

func TestReleaseRestoresOnNormalReturn(t *testing.T) {
	s, _, root := newFault(t, "laptop-devslp")
	g, _, _ := s.ApplyPolicy(nil, "medium_power")
	release := g.RestoreOnExit(context.Background())
	if got := readPolicyFile(t, root, "host0"); got != "medium_power" {
		t.Fatalf("applied %q", got)
	}
	release()
	if got := readPolicyFile(t, root, "host0"); got != "min_power" {
		t.Errorf("after release: %q", got)
	}
}

func TestVanishedHost(t *testing.T) {
	s, f, _ := newFault(t, "laptop-devslp")
	f.readErr["host0"] = syscall.ENOENT
	sys, err := s.Discover()
	if err != nil {
		t.Fatal(err)
	}
	if sys.Hosts[0].Policy != "" || sys.Hosts[0].Devices[0].DevSlp.Verdict != verdictUnknown {
		t.Errorf("host %+v", sys.Hosts[0])
	}
	if _, err := s.ReadPolicy("host0"); !errors.Is(err, ErrNoPolicyFile) {
		t.Errorf("read: %v", err)
	}
}

// TestSetPolicyAllReportsUnreadableHost: with no host named, a host whose
// policy file exists but cannot be read is tried and its failure reported
// (set-policy used to skip it and exit 0); a host without the file is not.
func TestSetPolicyAllReportsUnreadableHost(t *testing.T) {
	s, f, _ := newFault(t, "desktop-6port-617")
	hosts, err := s.PolicyHosts()
	if err != nil || len(hosts) < 2 {
		t.Fatal(hosts, err)
	}
	bad := hosts[0]
	f.readErr[bad] = syscall.EIO
	f.writeErr[bad] = syscall.EIO
	res, err := s.SetPolicy(nil, MinPowerWithPartial)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range res {
		if r.Host == bad {
			found = true
			if r.Err == nil {
				t.Errorf("%s: no error reported for an unreadable, unwritable policy file", bad)
			}
		}
	}
	if !found || !Failed(res) {
		t.Errorf("host %s with an unreadable policy file not tried (results %+v)", bad, res)
	}
	f.readErr[bad] = fs.ErrNotExist
	if hosts, _ = s.PolicyHosts(); len(hosts) > 0 && hosts[0] == bad {
		t.Errorf("host %s without a policy file listed", bad)
	}
}
