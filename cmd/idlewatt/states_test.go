package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/states/alpm"
)

// statesFixture extracts fixtures/sysfs/<name>/sys.tree to a temp dir.
func statesFixture(t *testing.T, name string) string {
	t.Helper()
	f, err := os.Open(filepath.Join("../../fixtures/sysfs", name, "sys.tree"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	root := t.TempDir()
	if err := alpm.ExtractTreeArchive(f, root); err != nil {
		t.Fatal(err)
	}
	return root
}

func runStatesCmd(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return run(t, context.Background(), args...)
}

// The command's output must be exactly the golden outputs the alpm package
// checks (regenerated there with -update), root path aside.
func TestStatesCommandMatchesGolden(t *testing.T) {
	for _, name := range []string{"laptop-devslp", "desktop-6port-617", "old-kernel", "no-dipm", "malformed"} {
		t.Run(name, func(t *testing.T) {
			root := statesFixture(t, name)
			for _, c := range []struct{ file, flag string }{{"expected.txt", ""}, {"expected.json", "--json"}} {
				args := []string{"states", "--sysfs-root", root}
				if c.flag != "" {
					args = append(args, c.flag)
				}
				out, errOut, code := runStatesCmd(t, args...)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errOut)
				}
				want, err := os.ReadFile(filepath.Join("../../fixtures/sysfs", name, c.file))
				if err != nil {
					t.Fatal(err)
				}
				got := strings.ReplaceAll(out, root, "SYSFS_ROOT")
				if got != string(want) {
					t.Errorf("%s: output differs from %s:\n%s", name, c.file, got)
				}
			}
		})
	}
}

func TestStatesSetPolicyExitCodes(t *testing.T) {
	root := statesFixture(t, "desktop-6port-617")
	policy := func(h string) string {
		b, _ := os.ReadFile(filepath.Join(root, "class/scsi_host", h, "link_power_management_policy"))
		return strings.TrimSpace(string(b))
	}
	_, errOut, code := runStatesCmd(t, "states", "set-policy", "min_powr", "--sysfs-root", root)
	if code != 2 || !strings.Contains(errOut, "did you mean min_power?") {
		t.Errorf("typo: exit %d, %q", code, errOut)
	}
	_, _, code = runStatesCmd(t, "states", "set-policy", "keep_firmware_settings", "--sysfs-root", root)
	if code != 2 || policy("host0") != "med_power_with_dipm" {
		t.Errorf("keep_firmware_settings: exit %d, host0 %s", code, policy("host0"))
	}
	out, errOut, code := runStatesCmd(t, "states", "set-policy", "min_power", "--sysfs-root", root)
	if code != 0 || !strings.Contains(out, "host4: skipped") || !strings.Contains(out, "host0: target set min_power") {
		t.Errorf("all hosts: exit %d\n%s%s", code, out, errOut)
	}
	if policy("host3") != "min_power" || policy("host4") != "max_performance" {
		t.Errorf("host3 %s host4 %s", policy("host3"), policy("host4"))
	}
	out, _, code = runStatesCmd(t, "states", "set-policy", "medium_power", "--host", "host1,host9", "--sysfs-root", root, "--json")
	if code != 1 || !strings.Contains(out, `"target_set": "medium_power"`) || !strings.Contains(out, `"host": "host9"`) {
		t.Errorf("named hosts: exit %d\n%s", code, out)
	}
	if policy("host1") != "medium_power" || policy("host0") != "min_power" {
		t.Errorf("host1 %s host0 %s", policy("host1"), policy("host0"))
	}
	_, _, code = runStatesCmd(t, "states", "--sysfs-root", t.TempDir())
	if code != 2 {
		t.Errorf("empty root: exit %d, want 2", code)
	}
}

func TestStatesSimulate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sys")
	out, errOut, code := runStatesCmd(t, "states", "simulate", dir, "--drives", "3")
	if code != 0 || strings.TrimSpace(out) != dir {
		t.Fatalf("exit %d %q %s", code, out, errOut)
	}
	if _, _, code := runStatesCmd(t, "states", "set-policy", "min_power", "--sysfs-root", dir); code != 0 {
		t.Fatalf("set-policy exit %d", code)
	}
	out, _, _ = runStatesCmd(t, "states", "--sysfs-root", dir)
	if n := strings.Count(out, "DevSlp: eligible"); n != 3 {
		t.Errorf("%d drives eligible after min_power, want 3:\n%s", n, out)
	}
}
