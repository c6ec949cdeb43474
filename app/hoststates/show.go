package hoststates

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/internal/textsafe"
	"github.com/idlewatt/idlewatt/states/alpm"
	"github.com/idlewatt/idlewatt/states/nvme"
	"github.com/idlewatt/idlewatt/states/nvme/nvmehost"
)

// Flags are `states`' settings; sysfs-root and json are its subcommands'
// too (declare them persistent).
var Flags = []settings.Flag{
	{Name: "sysfs-root", Key: "sysfs_root", Kind: settings.String, Default: alpm.DefaultRoot, Help: "sysfs tree to read and write (config sysfs_root)"},
	{Name: "json", Kind: settings.Bool, Help: "print JSON (" + alpm.SchemaStates + ")"},
}

// ShowFlags are `states`' own: saved outputs in place of the tree's files.
var ShowFlags = []settings.Flag{
	{Name: "nvme-id-ctrl", Kind: settings.StringArray, Help: "NAME=FILE: Identify Controller of nvmeN from a file (nvme id-ctrl text/-H/JSON/-b, smartctl -a, or a hex dump: every format of states decode); repeatable"},
	{Name: "nvme-apst", Kind: settings.StringArray, Help: "NAME=FILE: feature 0x0C of nvmeN (nvme get-feature -f 0x0c [-H] text or JSON, the 256-byte table or its dump)"},
	{Name: "sata-id", Kind: settings.StringArray, Help: "devN.M=FILE: IDENTIFY of ata_device devN.M from a file instead of its sysfs id (hdparm -I or --Istdout, smartctl, CrystalDiskInfo, binary, dumps); repeatable"},
	{Name: "sata-log", Kind: settings.StringArray, Help: "devN.M=FILE: log 30h page 08h of devN.M (a dump of the page, or hdparm -I with its Device Sleep section); repeatable"},
	{Name: "nvme-power-state", Kind: settings.StringArray, Help: "NAME=FILE: feature 0x02 of nvmeN (nvme get-feature -f 0x02 -H -o json, or Dword 0)"},
	{Name: "nvme-ioctl", Kind: settings.Bool, Default: true, Help: "on /sys, read Identify and features through the admin ioctl on /dev/nvmeN (needs root)"},
}

// root is the sysfs root the settings name (the default /sys when none).
func root(g settings.Getter) string {
	if r := g.String("sysfs-root"); r != "" {
		return r
	}
	return alpm.DefaultRoot
}

// rootName names the sysfs root's origin for messages: the flag or config
// key the user gave, or "the sysfs root" for the default nobody typed.
func rootName(g settings.Getter, root string) string {
	if g.Set("sysfs-root") {
		return g.Where("sysfs-root") + " " + root
	}
	return "the sysfs root " + root
}

// openRoot checks that root is a sysfs tree (a directory with class/,
// devices/ or module/) or a tree archive (extracted to a temporary
// directory, removed by cleanup). An empty directory or a missing path is
// bad input; a tree without SATA or NVMe is not.
func openRoot(g settings.Getter, root string) (dir string, cleanup func(), err error) {
	st, err := os.Stat(root)
	if err != nil {
		return "", nil, settings.Input(fmt.Errorf("%s: %w", rootName(g, root), err))
	}
	cleanup = func() {}
	dir = root
	if st.Mode().IsRegular() {
		f, err := os.Open(root)
		if err != nil {
			return "", nil, settings.Input(fmt.Errorf("%s: %w", rootName(g, root), err))
		}
		defer f.Close()
		tmp, err := os.MkdirTemp("", "idlewatt-sysfs-")
		if err != nil {
			return "", nil, err
		}
		cleanup = func() { os.RemoveAll(tmp) }
		if err := alpm.ExtractTreeArchive(f, tmp); err != nil {
			cleanup()
			return "", nil, settings.Input(fmt.Errorf("%s: not a tree archive: %w", rootName(g, root), err))
		}
		dir = tmp
	} else if !st.IsDir() {
		return "", nil, settings.Input(fmt.Errorf("%s: neither a directory nor a tree archive", rootName(g, root)))
	}
	for _, d := range []string{"class", "devices", "module"} {
		if st, err := os.Stat(filepath.Join(dir, d)); err == nil && st.IsDir() {
			return dir, cleanup, nil
		}
	}
	cleanup()
	return "", nil, settings.Input(fmt.Errorf("%s: not a sysfs tree (no class/, devices/ or module/)", rootName(g, root)))
}

// Report is the JSON form of states: the SATA keys as before, and the NVMe
// controllers under "nvme".
type Report struct {
	*alpm.System
	NVMe *nvme.System `json:"nvme"`
}

var reNVMeName = regexp.MustCompile(`^nvme[0-9]+$`)

// nvmeFiles reads --nvme-id-ctrl/--nvme-apst/--nvme-power-state
// (NAME=FILE, or FILE for nvme0) and checks each file parses, so a bad
// file the user named is bad input, not a line among the problems.
func nvmeFiles(g settings.Getter) (map[string]nvmehost.Files, error) {
	out := map[string]nvmehost.Files{}
	for _, f := range []struct {
		flag  string
		set   func(*nvmehost.Files, string)
		parse func([]byte) error
	}{
		{"nvme-id-ctrl", func(x *nvmehost.Files, p string) { x.IDCtrl = p }, func(b []byte) error { _, _, err := nvme.ParseIdentify(b); return err }},
		{"nvme-apst", func(x *nvmehost.Files, p string) { x.APST = p }, func(b []byte) error { _, _, err := nvme.ParseAPST(b); return err }},
		{"nvme-power-state", func(x *nvmehost.Files, p string) { x.PowerMgmt = p }, func(b []byte) error { _, _, err := nvme.ParsePowerManagement(b); return err }},
	} {
		for _, v := range g.List(f.flag) {
			name, file, ok := strings.Cut(v, "=")
			if !ok {
				name, file = "nvme0", v
			}
			if !reNVMeName.MatchString(name) {
				return nil, settings.Usagef("--%s %s: %q is not a controller name (like nvme0)", f.flag, v, name)
			}
			b, err := os.ReadFile(file)
			if err != nil {
				return nil, settings.Input(fmt.Errorf("--%s: %w", f.flag, err))
			}
			if err := f.parse(b); err != nil {
				return nil, settings.Input(fmt.Errorf("--%s %s: %w", f.flag, file, err))
			}
			x := out[name]
			f.set(&x, file)
			out[name] = x
		}
	}
	return out, nil
}

var reATADev = regexp.MustCompile(`^dev[0-9]+\.[0-9]+(\.[0-9]+)?$`)

// sataFiles reads --sata-id/--sata-log (devN.M=FILE) and checks each file
// decodes, so a bad file is bad input, not a line among the problems.
func sataFiles(g settings.Getter) (map[string]alpm.DeviceFiles, error) {
	out := map[string]alpm.DeviceFiles{}
	for _, flag := range []string{"sata-id", "sata-log"} {
		for _, v := range g.List(flag) {
			name, file, ok := strings.Cut(v, "=")
			if !ok || !reATADev.MatchString(name) {
				return nil, settings.Usagef("--%s %s: want devN.M=FILE (the ata_device name, like dev1.0)", flag, v)
			}
			b, err := os.ReadFile(file)
			if err != nil {
				return nil, settings.Input(fmt.Errorf("--%s: %w", flag, err))
			}
			ds, _, err := alpm.ParseIdentifyFile(b)
			if err != nil {
				return nil, settings.Input(fmt.Errorf("--%s %s: %w", flag, file, err))
			}
			if len(ds) != 1 {
				return nil, settings.Input(fmt.Errorf("--%s %s: %d drives in the file, want one", flag, file, len(ds)))
			}
			x := out[name]
			if flag == "sata-id" {
				if ds[0].Identify == nil {
					return nil, settings.Input(fmt.Errorf("--sata-id %s: no IDENTIFY data in the file (a log page? give it to --sata-log)", file))
				}
				x.Identify = file
			} else {
				if ds[0].LogPage == nil {
					return nil, settings.Input(errors.New("--sata-log " + file + ": no DevSlp timings (log 30h page 08h dump, or hdparm -I with its Device Sleep section)"))
				}
				x.LogPage = file
			}
			out[name] = x
		}
	}
	return out, nil
}

// Show reads the tree (Flags, ShowFlags) and writes what it holds to w,
// as text or JSON.
func Show(g settings.Getter, w io.Writer) error {
	root := root(g)
	files, err := nvmeFiles(g)
	if err != nil {
		return err
	}
	sataF, err := sataFiles(g)
	if err != nil {
		return err
	}
	dir, cleanup, err := openRoot(g, root)
	if err != nil {
		return err
	}
	defer cleanup()
	sfs := alpm.Open(dir)
	sfs.Files = sataF
	sata, err := sfs.Discover()
	switch {
	case errors.Is(err, alpm.ErrNoSysfs):
		sata = nil // no SCSI in this kernel (a VM with virtio-blk, a laptop with NVMe only)
	case err != nil:
		return fmt.Errorf("states: %v", err)
	}
	opt := nvmehost.Options{Files: files}
	// The ioctl only makes sense on the live tree: a fixture's or archive's
	// controllers are not this machine's /dev/nvmeN.
	if g.Bool("nvme-ioctl") && filepath.Clean(dir) == alpm.DefaultRoot {
		opt.DevDir = nvmehost.DefaultDev
	}
	nv := nvmehost.Open(dir, opt)
	if err := filesFound(g, root, files, sataF, nv, sata); err != nil {
		return err
	}
	nv.Root = root
	if g.Bool("json") {
		rep := Report{System: sata, NVMe: nv}
		if sata == nil {
			rep.System = &alpm.System{Schema: alpm.SchemaStates, Root: root, Hosts: []alpm.Host{}}
		}
		rep.System.Root = root
		return WriteJSON(w, rep)
	}
	var b strings.Builder
	if sata != nil {
		sata.Root = root
		if err := sata.WriteText(&b); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(&b, "sysfs root: %s\nSATA: no hosts (no class/scsi_host under the sysfs root)\n", root)
	}
	b.WriteString("\n")
	if err := nv.WriteText(&b); err != nil {
		return err
	}
	// Values read from sysfs and the IDENTIFY data (model strings, policy
	// files of a fixture tree) are shown, never acted on.
	_, err = io.WriteString(w, textsafe.Lines(b.String()))
	return err
}

// filesFound refuses files given for a controller or drive the tree does
// not have.
func filesFound(g settings.Getter, root string, files map[string]nvmehost.Files, sataF map[string]alpm.DeviceFiles, nv *nvme.System, sata *alpm.System) error {
	for name := range files {
		found := false
		for _, c := range nv.Ctrls {
			found = found || c.Name == name
		}
		if !found {
			return settings.Input(fmt.Errorf("NVMe files given for %s, but %s has no class/nvme/%s", name, rootName(g, root), name))
		}
	}
	for name := range sataF {
		found := false
		if sata != nil {
			for _, h := range sata.Hosts {
				for _, d := range h.Devices {
					found = found || d.Name == name
				}
			}
		}
		if !found {
			return settings.Input(fmt.Errorf("SATA files given for %s, but %s has no class/ata_device/%s with a drive", name, rootName(g, root), name))
		}
	}
	return nil
}

// WriteJSON writes v indented, with a final newline.
func WriteJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
