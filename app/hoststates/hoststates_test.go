package hoststates

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/internal/outfile"
	"github.com/idlewatt/idlewatt/internal/settings"
)

// TestShowArchive reads a fixture's tree archive as --sysfs-root names it:
// the SATA hosts and NVMe controllers it holds are listed, as text and as
// JSON.
func TestShowArchive(t *testing.T) {
	root := "../../fixtures/sysfs/laptop-devslp/sys.tree"
	var text, js bytes.Buffer
	if err := Show(settings.Fixed{Values: map[string]string{"sysfs-root": root}}, &text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "sysfs root: "+root) {
		t.Errorf("text does not name the root:\n%s", text.String())
	}
	if err := Show(settings.Fixed{Values: map[string]string{"sysfs-root": root, "json": "true"}}, &js); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"nvme"`) || !strings.Contains(js.String(), `"sysfs_root": "`+root+`"`) {
		t.Errorf("JSON lacks the nvme key or the root:\n%.400s", js.String())
	}
}

// TestRefusals: what is not a tree, a bad file for a controller, and an
// nvme-set request that contradicts itself are bad usage, named.
func TestRefusals(t *testing.T) {
	for _, c := range []struct {
		run  func() error
		want string
	}{
		{func() error {
			return Show(settings.Fixed{Values: map[string]string{"sysfs-root": t.TempDir()}}, &bytes.Buffer{})
		}, "not a sysfs tree (no class/, devices/ or module/)"},
		{func() error {
			return Show(settings.Fixed{Values: map[string]string{"nvme-id-ctrl": "disk0=x"}}, &bytes.Buffer{})
		}, `"disk0" is not a controller name`},
		{func() error {
			return NVMeSet(t.Context(), settings.Fixed{Values: map[string]string{"latency-us": "5500", "apst": "off"}}, &bytes.Buffer{})
		}, "--latency-us and --apst both set the tolerance"},
		{func() error {
			return SetPolicy(settings.Fixed{Values: map[string]string{"sysfs-root": t.TempDir()}}, "fastest", &bytes.Buffer{})
		}, "fastest"},
		{func() error {
			_, err := Simulate(settings.Fixed{Values: map[string]string{"drives": "27"}}, t.TempDir(), outfileNone)
			return err
		}, "--drives 27: want 1 to 26"},
	} {
		err := c.run()
		if err == nil || !errors.Is(err, settings.ErrUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want a usage error saying %q", err, c.want)
		}
	}
}

var outfileNone = outfile.Options{}
