package nvmehost

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/states/alpm"
	"github.com/idlewatt/idlewatt/states/nvme"
)

// faultFS fails writes to chosen files with an errno, as sysfs store
// functions do.
type faultFS struct {
	alpm.FS
	fail map[string]error
}

func (f faultFS) WriteFile(name string, data []byte) error {
	if err := f.fail[name]; err != nil {
		return &fs.PathError{Op: "write", Path: name, Err: err}
	}
	return f.FS.WriteFile(name, data)
}

// snapshot is the whole tree as an archive, to prove nothing was left
// changed.
func snapshot(t *testing.T, root string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := alpm.WriteTreeArchive(&b, root); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func readRel(t *testing.T, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestGuardSetsAndRestoresEverything(t *testing.T) {
	root := fixtureRoot(t, "nvme-apst-ok")
	before := snapshot(t, root)
	g := NewControlFS(root, SimFS(alpm.DirFS(root))).Guard()
	ch, err := g.SetLatencyTolerance("nvme0", "5500")
	if err != nil || !ch.OK() || ch.Previous != "100000" || ch.ReadBack != "5500" {
		t.Fatalf("%+v %v", ch, err)
	}
	// The tree now shows the kernel's consequence: SimFS reprogrammed the
	// drive's table without PS4, which matches the kernel's rule again.
	sys := Open(root, Options{})
	c0 := sys.Ctrls[0]
	if strings.Join(c0.Eligibility.Failed, ",") != "latency tolerance" || c0.APST.Entries[0] != (nvme.APSTEntry{ITPS: 3, ITPTms: 100}) {
		t.Errorf("after 5500: %v %+v", c0.Eligibility.Failed, c0.APST.Entries[:5])
	}
	if ch := c0.Eligibility.Checks[4]; ch.Name != nvme.CheckTable || !strings.Contains(ch.Detail, "matches the kernel's rule") {
		t.Errorf("%+v", ch)
	}
	if ch := g.SetDefaultLatency(0); !ch.OK() || ch.Previous != "100000" {
		t.Errorf("%+v", ch)
	}
	if ch, err := g.SetASPMPolicy("powersave"); err != nil || !ch.OK() || ch.Previous != "powersupersave" || ch.ReadBack != "powersave" {
		t.Errorf("%+v %v", ch, err)
	}
	if ch, _ := g.SetAPST("nvme0", false); !ch.OK() || readRel(t, root, ToleranceFile("nvme0")) != "0" {
		t.Errorf("off: %+v", ch)
	}
	// On again: back to the first saved tolerance, not the 5500 in between.
	if ch, _ := g.SetAPST("nvme0", true); !ch.OK() || ch.ReadBack != "100000" {
		t.Errorf("on: %+v", ch)
	}
	if v, ok := g.Saved(ToleranceFile("nvme0")); !ok || v != "100000" {
		t.Errorf("saved %q %v", v, ok)
	}
	res := g.Restore()
	if len(res) != 3 || Failed(res) || res[0].File != nvme.ASPMPolicyFile {
		t.Errorf("restore %+v", res)
	}
	if !bytes.Equal(snapshot(t, root), before) {
		t.Error("tree differs after restore")
	}
	if again := g.Restore(); len(again) != 3 {
		t.Errorf("second restore %+v", again)
	}
}

func TestGuardRefusesBeforeIO(t *testing.T) {
	root := fixtureRoot(t, "nvme-apst-ok")
	before := snapshot(t, root)
	g := NewControlFS(root, SimFS(alpm.DirFS(root))).Guard()
	for _, c := range []struct {
		f    func() error
		want string
	}{
		{func() error { _, err := g.SetLatencyTolerance("nvme0", "-5"); return err }, `"-5", want auto, any or microseconds`},
		{func() error { _, err := g.SetLatencyTolerance("../nvme0", "5"); return err }, "not an NVMe controller name"},
		{func() error { _, err := g.SetASPMPolicy("powersuper"); return err }, "did you mean powersupersave?"},
		{func() error { _, err := g.SetASPMPolicy("fast"); return err }, `unknown ASPM policy "fast"`},
	} {
		if err := c.f(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	if res := g.Restore(); len(res) != 0 || !bytes.Equal(snapshot(t, root), before) {
		t.Errorf("%+v", res)
	}
}

func TestGuardWriteErrorsNameFileAndErrno(t *testing.T) {
	root := fixtureRoot(t, "nvme-quirk-no-apst")
	before := snapshot(t, root)
	c := NewControlFS(root, faultFS{FS: SimFS(alpm.DirFS(root)), fail: map[string]error{
		nvme.ASPMPolicyFile: syscall.EPERM,
		DefaultLatencyFile:  syscall.EACCES,
	}})
	g := c.Guard()
	ch, _ := g.SetASPMPolicy("powersupersave")
	if !errors.Is(ch.Err, ErrASPMDisabled) || !errors.Is(ch.Err, syscall.EPERM) ||
		!strings.Contains(ch.Error, "module/pcie_aspm/parameters/policy: write \"powersupersave\": operation not permitted (the kernel does not control ASPM") {
		t.Errorf("policy: %v", ch.Err)
	}
	ch = g.SetDefaultLatency(5500)
	if !errors.Is(ch.Err, ErrPermission) || !strings.Contains(ch.Error, "default_ps_max_latency_us: write \"5500\": permission denied") {
		t.Errorf("default: %v", ch.Err)
	}
	// The quirked controller has no tolerance file: named, and why.
	ch, _ = g.SetLatencyTolerance("nvme0", "100000")
	if !errors.Is(ch.Err, ErrHidden) || !strings.Contains(ch.Error, ToleranceFile("nvme0")) || !strings.Contains(ch.Error, "did not enable APST") {
		t.Errorf("hidden: %v", ch.Err)
	}
	// Nothing was changed, so nothing is restored.
	if res := g.Restore(); len(res) != 0 || !bytes.Equal(snapshot(t, root), before) {
		t.Errorf("restore after failures: %+v", res)
	}
}

func TestGuardRealPermission(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes read-only files")
	}
	root := fixtureRoot(t, "nvme-apst-ok")
	p := filepath.Join(root, nvme.ASPMPolicyFile)
	if err := os.Chmod(p, 0o444); err != nil {
		t.Fatal(err)
	}
	g := NewControlFS(root, SimFS(alpm.DirFS(root))).Guard()
	ch, _ := g.SetASPMPolicy("default")
	if !errors.Is(ch.Err, ErrPermission) || !errors.Is(ch.Err, syscall.EACCES) || !strings.Contains(ch.Error, nvme.ASPMPolicyFile) {
		t.Errorf("%v", ch.Err)
	}
	if res := g.Restore(); len(res) != 0 || readRel(t, root, nvme.ASPMPolicyFile) != "default performance powersave [powersupersave]" {
		t.Errorf("%+v", res)
	}
}

func TestRestoreOnContextCancel(t *testing.T) {
	root := fixtureRoot(t, "nvme-apst-ok")
	g := NewControlFS(root, SimFS(alpm.DirFS(root))).Guard()
	g.SetLatencyTolerance("nvme0", "0")
	ctx, cancel := context.WithCancel(context.Background())
	release := g.RestoreOnExit(ctx)
	cancel()
	<-g.Restored()
	if got := readRel(t, root, ToleranceFile("nvme0")); got != "100000" {
		t.Errorf("after cancel: %q", got)
	}
	if res := release(); len(res) != 1 || !res[0].OK() {
		t.Errorf("%+v", res)
	}
}

func TestRestoreOnSignal(t *testing.T) {
	// The test handles SIGHUP itself, so the guard's re-sent signal does
	// not end the test binary (see alpm's TestRestoreOnSignal).
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGHUP)
	defer signal.Stop(ch)
	root := fixtureRoot(t, "nvme-apst-ok")
	before := snapshot(t, root)
	g := NewControlFS(root, SimFS(alpm.DirFS(root))).Guard()
	g.SetASPMPolicy("performance")
	g.SetLatencyTolerance("nvme0", "any")
	release := g.RestoreOnExit(context.Background())
	defer release()
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	<-g.Restored()
	if !bytes.Equal(snapshot(t, root), before) {
		t.Error("tree differs after SIGHUP restore")
	}
	for n := 0; n < 2; n++ {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("SIGHUP %d of 2 never arrived", n+1)
		}
	}
}

func TestReleaseRestoresOnReturn(t *testing.T) {
	root := fixtureRoot(t, "nvme-tolerance-low")
	before := snapshot(t, root)
	func() {
		g := NewControlFS(root, SimFS(alpm.DirFS(root))).Guard()
		defer g.RestoreOnExit(context.Background())()
		g.SetLatencyTolerance("nvme0", "8000")
		g.SetDefaultLatency(8000)
		if readRel(t, root, DefaultLatencyFile) != "8000" {
			t.Fatal("not written")
		}
	}()
	if !bytes.Equal(snapshot(t, root), before) {
		t.Error("tree differs after release")
	}
}

func TestSimFSLikeTheKernel(t *testing.T) {
	root := fixtureRoot(t, "nvme-apst-ok")
	fsys := SimFS(alpm.DirFS(root))
	for _, c := range []struct {
		file, value string
		ok          bool
	}{
		{nvme.ASPMPolicyFile, "default\n", true}, {nvme.ASPMPolicyFile, "fast\n", false},
		{ToleranceFile("nvme0"), "auto\n", true}, {ToleranceFile("nvme0"), "-1\n", false},
		{DefaultLatencyFile, "25000\n", true}, {DefaultLatencyFile, "x\n", false},
	} {
		err := fsys.WriteFile(c.file, []byte(c.value))
		if (err == nil) != c.ok || (!c.ok && !errors.Is(err, syscall.EINVAL)) {
			t.Errorf("%s %q: %v", c.file, c.value, err)
		}
	}
	if got := readRel(t, root, nvme.ASPMPolicyFile); got != "[default] performance powersave powersupersave" {
		t.Errorf("%q", got)
	}
}

func TestNoChangeAfterRestore(t *testing.T) {
	root := fixtureRoot(t, "nvme-apst-ok")
	before := snapshot(t, root)
	g := NewControlFS(root, SimFS(alpm.DirFS(root))).Guard()
	g.Restore()
	ch, _ := g.SetLatencyTolerance("nvme0", "0")
	if ch.Err == nil || !strings.Contains(ch.Error, "already restored") || !bytes.Equal(snapshot(t, root), before) {
		t.Errorf("%+v", ch)
	}
}
