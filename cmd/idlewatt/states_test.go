package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

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

// noNVMe is what states prints after the SATA part for a tree with no
// NVMe, no pcie_aspm and no nvme_core (the SATA fixtures).
const noNVMe = "\nNVMe: no controllers (no class/nvme under the sysfs root)\n" +
	"  PCIe ASPM policy: unknown (no module/pcie_aspm/parameters/policy)\n" +
	"  nvme_core: not loaded (no module/nvme_core/parameters)\n"

// noSATA is what states prints before the NVMe part for a tree without
// class/scsi_host.
const noSATA = "sysfs root: SYSFS_ROOT\nSATA: no hosts (no class/scsi_host under the sysfs root)\n\n"

func jsonValue(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
	return v
}

// The command's output must be exactly the golden outputs the alpm and
// nvme packages check (regenerated there with -update), root path aside:
// for SATA trees the SATA part then "no NVMe"; for NVMe trees "no SATA"
// then the NVMe part. --sysfs-root takes the extracted directory or the
// sys.tree archive itself.
func TestStatesCommandMatchesGolden(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"laptop-devslp", "desktop-6port-617", "old-kernel", "no-dipm", "malformed",
		"nvme-apst-ok", "nvme-quirk-no-apst", "nvme-tolerance-low", "nvme-aspm-off", "nvme-no-deepest"} {
		t.Run(name, func(t *testing.T) {
			isNVMe := strings.HasPrefix(name, "nvme-")
			golden := func(file string) []byte {
				b, err := os.ReadFile(filepath.Join("../../fixtures/sysfs", name, file))
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			archive := filepath.Join("../../fixtures/sysfs", name, "sys.tree")
			for _, root := range []string{statesFixture(t, name), archive} {
				out, errOut, code := runStatesCmd(t, "states", "--sysfs-root", root)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errOut)
				}
				got := strings.ReplaceAll(out, root, "SYSFS_ROOT")
				want := string(golden("expected.txt")) + noNVMe
				if isNVMe {
					want = noSATA + string(golden("expected.txt"))
				}
				if got != want {
					t.Errorf("%s: text differs:\n%s", root, got)
				}
				out, errOut, code = runStatesCmd(t, "states", "--sysfs-root", root, "--json")
				if code != 0 {
					t.Fatalf("json exit %d: %s", code, errOut)
				}
				v := jsonValue(t, []byte(strings.ReplaceAll(out, root, "SYSFS_ROOT")))
				nv, _ := v["nvme"].(map[string]any)
				delete(v, "nvme")
				if isNVMe {
					if !reflect.DeepEqual(nv, jsonValue(t, golden("expected.json"))) {
						t.Errorf("%s: nvme JSON differs from expected.json:\n%s", root, out)
					}
					if h, ok := v["hosts"].([]any); !ok || len(h) != 0 || v["schema"] != alpm.SchemaStates {
						t.Errorf("%s: SATA part %v", root, v)
					}
				} else {
					if !reflect.DeepEqual(v, jsonValue(t, golden("expected.json"))) {
						t.Errorf("%s: SATA JSON differs from expected.json:\n%s", root, out)
					}
					if c, ok := nv["controllers"].([]any); !ok || len(c) != 0 {
						t.Errorf("%s: nvme part %v", root, nv)
					}
				}
			}
		})
	}
}

func TestStatesRoots(t *testing.T) {
	t.Parallel()
	// An empty directory is no sysfs tree: bad input, naming the flag.
	empty := t.TempDir()
	_, errOut, code := runStatesCmd(t, "states", "--sysfs-root", empty)
	if code != 2 || !strings.Contains(errOut, "--sysfs-root "+empty+": not a sysfs tree") {
		t.Errorf("empty: exit %d %q", code, errOut)
	}
	_, errOut, code = runStatesCmd(t, "states", "--sysfs-root", filepath.Join(empty, "nope"))
	if code != 2 || !strings.Contains(errOut, "no such file") {
		t.Errorf("missing: exit %d %q", code, errOut)
	}
	bad := filepath.Join(empty, "bad.tree")
	os.WriteFile(bad, []byte("== dir x\n"), 0o644)
	_, errOut, code = runStatesCmd(t, "states", "--sysfs-root", bad)
	if code != 2 || !strings.Contains(errOut, "not a tree archive: line 1") {
		t.Errorf("bad archive: exit %d %q", code, errOut)
	}
	// A VM: sysfs without SATA hosts or NVMe controllers lists nothing, exit 0.
	vm := t.TempDir()
	os.MkdirAll(filepath.Join(vm, "class", "net"), 0o755)
	out, errOut, code := runStatesCmd(t, "states", "--sysfs-root", vm)
	if code != 0 || !strings.Contains(out, "SATA: no hosts") || !strings.Contains(out, "NVMe: no controllers") {
		t.Errorf("vm: exit %d\n%s%s", code, out, errOut)
	}
	// This machine's /sys, no flag: never blames a flag nobody gave.
	if st, err := os.Stat("/sys/class"); err == nil && st.IsDir() {
		out, errOut, code := runStatesCmd(t, "states", "--nvme-ioctl=false") // no admin commands to a CI host's drives
		if code != 0 || strings.Contains(errOut, "--sysfs-root") || !strings.Contains(out, "sysfs root: /sys") {
			t.Errorf("/sys: exit %d\n%s%s", code, out, errOut)
		}
	}
	// set-policy never writes into an archive's temporary copy.
	_, errOut, code = runStatesCmd(t, "states", "set-policy", "min_power", "--sysfs-root", "../../fixtures/sysfs/laptop-devslp/sys.tree")
	if code != 2 || !strings.Contains(errOut, "is a file (a tree archive?)") {
		t.Errorf("set-policy on archive: exit %d %q", code, errOut)
	}
}

func TestStatesNVMeFiles(t *testing.T) {
	t.Parallel()
	dir := "../../fixtures/sysfs/nvme-tolerance-low"
	root := filepath.Join(dir, "sys.tree")
	out, errOut, code := runStatesCmd(t, "states", "--sysfs-root", root, "--json",
		"--nvme-id-ctrl", "nvme0="+filepath.Join(dir, "nvme0.id-ctrl.bin"), "--nvme-apst", filepath.Join(dir, "nvme0.apst.bin"))
	if code != 0 {
		t.Fatalf("exit %d %s", code, errOut)
	}
	var rep struct {
		NVMe struct {
			Ctrls []struct {
				IdentifySource string `json:"identify_source"`
				APSTSource     string `json:"apst_source"`
				APST           struct {
					Enabled *bool `json:"enabled"`
				} `json:"apst_feature"`
				Eligibility alpm.Eligibility `json:"eligibility"`
			} `json:"controllers"`
		} `json:"nvme"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	c := rep.NVMe.Ctrls[0]
	if !strings.HasPrefix(c.IdentifySource, "file ") || !strings.HasSuffix(c.APSTSource, "binary") || c.APST.Enabled != nil ||
		strings.Join(c.Eligibility.Failed, ",") != "latency tolerance" {
		t.Errorf("%s / %s / %v", c.IdentifySource, c.APSTSource, c.Eligibility.Failed)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--nvme-id-ctrl", "nvme0=" + filepath.Join(dir, "nvme0.apst.bin")}, "identify controller: 256 bytes, want 4096"},
		{[]string{"--nvme-apst", "nvme0=" + filepath.Join(dir, "expected.txt")}, "--nvme-apst"},
		{[]string{"--nvme-id-ctrl", "nvme7=" + filepath.Join(dir, "nvme0.id-ctrl.bin")}, "has no class/nvme/nvme7"},
		{[]string{"--nvme-id-ctrl", "sda=x"}, `"sda" is not a controller name`},
		{[]string{"--nvme-power-state", "nvme0=" + filepath.Join(dir, "missing")}, "no such file"},
	} {
		_, errOut, code := runStatesCmd(t, append([]string{"states", "--sysfs-root", root}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d %q, want %q", tc.args, code, errOut, tc.want)
		}
	}
}

func TestStatesSetPolicyExitCodes(t *testing.T) {
	t.Parallel()
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
}

func TestStatesSimulate(t *testing.T) {
	t.Parallel()
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

func treeBytes(t *testing.T, root string) []byte {
	t.Helper()
	var b strings.Builder
	if err := alpm.WriteTreeArchive(&b, root); err != nil {
		t.Fatal(err)
	}
	return []byte(b.String())
}

func TestStatesNVMeSet(t *testing.T) {
	t.Parallel()
	root := statesFixture(t, "nvme-apst-ok")
	before := treeBytes(t, root)
	read := func(rel string) string {
		b, _ := os.ReadFile(filepath.Join(root, rel))
		return strings.TrimSpace(string(b))
	}
	// Held, then restored: the tree is byte-identical afterwards.
	out, errOut, code := runStatesCmd(t, "states", "nvme-set", "--sysfs-root", root, "--latency-us", "5500", "--aspm-policy", "powersave", "--hold", "50ms")
	if code != 0 || !strings.Contains(out, "class/nvme/nvme0/power/pm_qos_latency_tolerance_us: 100000 → 5500 (reads 5500)") ||
		!strings.Contains(out, "restored module/pcie_aspm/parameters/policy: powersupersave") {
		t.Errorf("hold: exit %d\n%s%s", code, out, errOut)
	}
	if string(treeBytes(t, root)) != string(before) {
		t.Error("tree changed after --hold")
	}
	// Interrupted during the hold: restored, exit 1.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, errOut, code = run(t, ctx, "states", "nvme-set", "--sysfs-root", root, "--apst", "off", "--hold", "1m")
	if code != 1 || !strings.Contains(errOut, "interrupted; settings restored") || string(treeBytes(t, root)) != string(before) {
		t.Errorf("interrupted: exit %d %q", code, errOut)
	}
	// A write that fails: the earlier ones are put back, exit 1 naming file and errno.
	if os.Geteuid() != 0 {
		os.Chmod(filepath.Join(root, "module/pcie_aspm/parameters/policy"), 0o444)
		out, errOut, code = runStatesCmd(t, "states", "nvme-set", "--sysfs-root", root, "--default-latency-us", "0", "--apst", "off", "--aspm-policy", "performance")
		if code != 1 || !strings.Contains(out, "FAILED: module/pcie_aspm/parameters/policy: write \"performance\"") || !strings.Contains(out, "permission denied") {
			t.Errorf("failed write: exit %d\n%s%s", code, out, errOut)
		}
		if read("module/nvme_core/parameters/default_ps_max_latency_us") != "100000" || read("class/nvme/nvme0/power/pm_qos_latency_tolerance_us") != "100000" {
			t.Error("changes left after a failed write")
		}
		os.Chmod(filepath.Join(root, "module/pcie_aspm/parameters/policy"), 0o644)
	}
	// Kept without --hold.
	out, _, code = runStatesCmd(t, "states", "nvme-set", "--sysfs-root", root, "--apst", "off", "--json")
	if code != 0 || read("class/nvme/nvme0/power/pm_qos_latency_tolerance_us") != "0" || !strings.Contains(out, `"restored": null`) {
		t.Errorf("kept: exit %d %s", code, out)
	}
	out, _, code = runStatesCmd(t, "states", "nvme-set", "--sysfs-root", root, "--apst", "on")
	if code != 0 || read("class/nvme/nvme0/power/pm_qos_latency_tolerance_us") != "100000" {
		t.Errorf("on: exit %d %s", code, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "nothing to set"},
		{[]string{"--latency-us", "-3"}, "--latency-us"},
		{[]string{"--apst", "maybe"}, "want on or off"},
		{[]string{"--aspm-policy", "powersuper"}, "did you mean powersupersave?"},
		{[]string{"--latency-us", "1", "--apst", "on"}, "give one"},
		{[]string{"--controller", "sda", "--apst", "on"}, "not a controller name"},
	} {
		_, errOut, code := runStatesCmd(t, append([]string{"states", "nvme-set", "--sysfs-root", root}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d %q", tc.args, code, errOut)
		}
	}
	if string(treeBytes(t, root)) != string(before) {
		t.Error("tree changed by refused commands")
	}
}

// A simulated NVMe laptop: eligible as built; nvme-set reprograms the
// simulated drives' APST tables, and --hold puts everything back.
func TestStatesSimulateNVMe(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sys")
	out, errOut, code := runStatesCmd(t, "states", "simulate", dir, "--drives", "0", "--nvme", "980pro-1tb,660p-1tb")
	if code != 0 || strings.TrimSpace(out) != dir {
		t.Fatalf("exit %d %q %s", code, out, errOut)
	}
	before := treeBytes(t, dir)
	out, _, _ = runStatesCmd(t, "states", "--sysfs-root", dir)
	if n := strings.Count(out, "APST/ASPM: eligible"); n != 2 || !strings.Contains(out, "SATA: no hosts") {
		t.Errorf("%d eligible:\n%s", n, out)
	}
	if _, e, code := runStatesCmd(t, "states", "nvme-set", "--sysfs-root", dir, "--latency-us", "5500"); code != 0 {
		t.Fatalf("nvme-set: %d %s", code, e)
	}
	out, _, _ = runStatesCmd(t, "states", "--sysfs-root", dir)
	if n := strings.Count(out, "APSTE enabled; PS0 → PS3 after 100 ms"); n != 2 || strings.Count(out, "failed: latency tolerance\n") != 2 {
		t.Errorf("after 5500:\n%s", out)
	}
	if _, e, code := runStatesCmd(t, "states", "nvme-set", "--sysfs-root", dir, "--latency-us", "100000"); code != 0 {
		t.Fatalf("nvme-set back: %d %s", code, e)
	}
	if string(treeBytes(t, dir)) != string(before) {
		t.Error("tree differs after setting the tolerance back")
	}
	// --overwrite rebuilds over the tree's own files and links.
	if _, e, code := runStatesCmd(t, "states", "simulate", dir, "--drives", "1", "--nvme", "660p-1tb", "--overwrite"); code != 0 {
		t.Errorf("rebuild: exit %d %s", code, e)
	}
	_, errOut, code = runStatesCmd(t, "states", "simulate", filepath.Join(t.TempDir(), "x"), "--nvme", "990pro")
	if code != 2 || !strings.Contains(errOut, `"990pro": no such simulated NVMe drive (one of 980pro-1tb, 660p-1tb)`) {
		t.Errorf("unknown profile: %d %q", code, errOut)
	}
	_, errOut, code = runStatesCmd(t, "states", "simulate", filepath.Join(t.TempDir(), "y"), "--drives", "0")
	if code != 2 || !strings.Contains(errOut, "--drives 0: want 1 to 26") {
		t.Errorf("no drives: %d %q", code, errOut)
	}
}
