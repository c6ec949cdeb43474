package alpm

import (
	"errors"
	"fmt"
	"os"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Sysfs file and directory names (Documentation/ABI/testing/sysfs-ata,
// drivers/ata/libahci.c ahci_shost_attrs, drivers/ata/libata-sata.c).
const (
	classSCSIHost  = "class/scsi_host"
	classATALink   = "class/ata_link"
	classATADevice = "class/ata_device"
	blockDir       = "block"

	fPolicy    = "link_power_management_policy"
	fSupported = "link_power_management_supported" // Linux 6.17+
	fCaps      = "ahci_host_caps"
	fCap2      = "ahci_host_cap2"
	fPortCmd   = "ahci_port_cmd"
	fID        = "id"
	fClass     = "class"
	fSataSpd   = "sata_spd"
)

// SchemaStates names the JSON form of System (`idlewatt states --json`).
const SchemaStates = "idlewatt.states/v1"

// ErrNoSysfs means the root holds no class/scsi_host: not a sysfs tree, or
// a kernel without SCSI.
var ErrNoSysfs = errors.New("no class/scsi_host under the sysfs root")

// System is everything discovered under one sysfs root.
type System struct {
	Schema string `json:"schema"` // SchemaStates
	Root   string `json:"sysfs_root"`
	Hosts  []Host `json:"hosts"`
	// Problems are files that exist but could not be read or parsed,
	// each "path: what". Discovery never stops at one.
	Problems []string `json:"problems,omitempty"`
}

// Host is one SCSI host: with libata, one SATA port.
type Host struct {
	Name string `json:"host"`               // "host0"
	Port string `json:"ata_port,omitempty"` // "ata1", from the resolved path; "" if unknown
	Path string `json:"sysfs_path"`         // resolved, relative to the root
	// Policy is the target the kernel recorded; it is never proof that
	// the link runs under it (EH may have disabled LPM since).
	Policy Policy `json:"policy_target,omitempty"`
	// LPMSupported is link_power_management_supported (Linux 6.17+);
	// nil when the file is absent: an older kernel, support unknown.
	LPMSupported *bool       `json:"lpm_supported"`
	Caps         *HostCaps   `json:"ahci_host_caps,omitempty"`
	Cap2         *HostCap2   `json:"ahci_host_cap2,omitempty"`
	PortCmd      *PortCmd    `json:"ahci_port_cmd,omitempty"`
	PortDevSlp   *PortDevSlp `json:"port_devslp,omitempty"` // only from PortDevSlpFile
	External     bool        `json:"external_or_hotplug"`   // PxCMD.ESP or PxCMD.HPCP
	Links        []Link      `json:"links"`
	Devices      []Device    `json:"devices"`

	supportedFile bool // the file exists, even if unreadable
}

// Link is an ata_link (one per port, more behind a port multiplier).
type Link struct {
	Name    string `json:"link"`               // "link1"
	SataSpd string `json:"sata_spd,omitempty"` // "6.0 Gbps", "<unknown>"
}

// Device is an ata_device with a drive attached (class not "none").
type Device struct {
	Name     string    `json:"device"`          // "dev1.0"
	Class    string    `json:"class"`           // "ata", "atapi", "pmp"
	Block    string    `json:"block,omitempty"` // "sda"
	Identify *Identify `json:"identify,omitempty"`
	// IdentifySource names a user's file read instead of sysfs id.
	IdentifySource string  `json:"identify_source,omitempty"`
	LogPage        LogPage `json:"log_30h_08h"`
	// DevSlp is DevSlpEligible for this device on its host.
	DevSlp Eligibility `json:"devslp"`
}

// Discover reads every SATA host, link, device and block device under the
// root. A missing or malformed file is recorded in Problems and discovery
// goes on; the error is non-nil only when the root is no sysfs tree.
//
// Reading ahci_port_cmd resumes a runtime-suspended AHCI port
// (ahci_rpm_get_port in libahci.c), so do not Discover in a loop while
// measuring idle power: read once before, and after.
func (s *Sysfs) Discover() (*System, error) {
	sys := &System{Schema: SchemaStates, Root: s.Root}
	hosts, err := s.fs.ReadDir(classSCSIHost)
	if err != nil {
		if isNotExist(err) {
			return nil, fmt.Errorf("%s: %w", s.Root, ErrNoSysfs)
		}
		return nil, fmt.Errorf("%s: %w", path.Join(s.Root, classSCSIHost), err)
	}
	byPort := map[string]*Host{}
	for _, e := range hosts {
		h, ok := s.readHost(sys, e.Name())
		if !ok {
			continue
		}
		sys.Hosts = append(sys.Hosts, h)
	}
	sort.Slice(sys.Hosts, func(i, j int) bool { return natLess(sys.Hosts[i].Name, sys.Hosts[j].Name) })
	for i := range sys.Hosts {
		if p := sys.Hosts[i].Port; p != "" {
			byPort[p] = &sys.Hosts[i]
		}
	}
	s.readLinks(sys, byPort)
	devs := s.readDevices(sys, byPort)
	s.readBlocks(sys, devs)
	for i := range sys.Hosts {
		h := &sys.Hosts[i]
		for j := range h.Devices {
			h.Devices[j].DevSlp = DevSlpEligible(h, &h.Devices[j])
		}
	}
	return sys, nil
}

var (
	reATAPort = regexp.MustCompile(`^ata[0-9]+$`)
	reSCSIID  = regexp.MustCompile(`^([0-9]+):([0-9]+):([0-9]+):([0-9]+)$`)
)

// ataPortOf returns the "ataN" component of a resolved device path.
func ataPortOf(p string) string {
	for _, c := range strings.Split(p, "/") {
		if reATAPort.MatchString(c) {
			return c
		}
	}
	return ""
}

func (s *Sysfs) problem(sys *System, name string, err error) {
	sys.Problems = append(sys.Problems, fmt.Sprintf("%s: %v", name, err))
}

// readFile reads name; missing files report ok=false without a problem,
// other failures are recorded.
func (s *Sysfs) readFile(sys *System, name string) ([]byte, bool) {
	b, err := s.fs.ReadFile(name)
	if err != nil {
		if !isNotExist(err) {
			s.problem(sys, name, err)
		}
		return nil, false
	}
	return b, true
}

func (s *Sysfs) readHex(sys *System, name string) (uint32, bool) {
	b, ok := s.readFile(sys, name)
	if !ok {
		return 0, false
	}
	v, err := ParseHex32(b)
	if err != nil {
		s.problem(sys, name, err)
		return 0, false
	}
	return v, true
}

func (s *Sysfs) readHost(sys *System, name string) (Host, bool) {
	dir := path.Join(classSCSIHost, name)
	h := Host{Name: name, Path: dir}
	if p, err := resolve(s.fs, dir); err == nil {
		h.Path = p
	} else {
		s.problem(sys, dir, err)
	}
	h.Port = ataPortOf(h.Path)
	pol, hasPolicy := s.readFile(sys, path.Join(dir, fPolicy))
	if h.Port == "" && !hasPolicy {
		return h, false // not libata (usb-storage, virtio-scsi, …)
	}
	if hasPolicy {
		if p, err := ParsePolicy(string(pol)); err == nil {
			h.Policy = p
		} else {
			s.problem(sys, path.Join(dir, fPolicy), err)
		}
	}
	if b, ok := s.readFile(sys, path.Join(dir, fSupported)); ok {
		h.supportedFile = true
		switch strings.TrimSpace(string(b)) {
		case "0":
			h.LPMSupported = new(false)
		case "1":
			h.LPMSupported = new(true)
		default:
			s.problem(sys, path.Join(dir, fSupported), fmt.Errorf("%q, want 0 or 1", clip(strings.TrimSpace(string(b)), 20)))
		}
	}
	if v, ok := s.readHex(sys, path.Join(dir, fCaps)); ok {
		h.Caps = new(DecodeHostCaps(v))
	}
	if v, ok := s.readHex(sys, path.Join(dir, fCap2)); ok {
		h.Cap2 = new(DecodeHostCap2(v))
	}
	if v, ok := s.readHex(sys, path.Join(dir, fPortCmd)); ok {
		c := DecodePortCmd(v)
		h.PortCmd, h.External = &c, c.External()
	}
	if v, ok := s.readHex(sys, path.Join(dir, PortDevSlpFile)); ok {
		h.PortDevSlp = new(DecodePortDevSlp(v))
	}
	h.Links, h.Devices = []Link{}, []Device{}
	return h, true
}

func (s *Sysfs) readLinks(sys *System, byPort map[string]*Host) {
	entries, err := s.fs.ReadDir(classATALink)
	if err != nil {
		if !isNotExist(err) {
			s.problem(sys, classATALink, err)
		}
		return
	}
	for _, e := range entries {
		dir := path.Join(classATALink, e.Name())
		p, err := resolve(s.fs, dir)
		if err != nil {
			s.problem(sys, dir, err)
			continue
		}
		h := byPort[ataPortOf(p)]
		if h == nil {
			continue
		}
		l := Link{Name: e.Name()}
		if b, ok := s.readFile(sys, path.Join(dir, fSataSpd)); ok {
			l.SataSpd = strings.TrimSpace(string(b))
		}
		h.Links = append(h.Links, l)
	}
	for _, h := range byPort {
		sort.Slice(h.Links, func(i, j int) bool { return natLess(h.Links[i].Name, h.Links[j].Name) })
	}
}

// readDevices attaches ata devices to hosts and returns them by name.
func (s *Sysfs) readDevices(sys *System, byPort map[string]*Host) map[string]*Device {
	entries, err := s.fs.ReadDir(classATADevice)
	if err != nil {
		if !isNotExist(err) {
			s.problem(sys, classATADevice, err)
		}
		return nil
	}
	for _, e := range entries {
		dir := path.Join(classATADevice, e.Name())
		p, err := resolve(s.fs, dir)
		if err != nil {
			s.problem(sys, dir, err)
			continue
		}
		h := byPort[ataPortOf(p)]
		if h == nil {
			continue
		}
		d := Device{Name: e.Name(), LogPage: UnknownLogPage()}
		if b, ok := s.readFile(sys, path.Join(dir, fClass)); ok {
			d.Class = strings.TrimSpace(string(b))
		}
		if d.Class == "none" {
			continue // an empty slot: libata creates devX.0 and devX.1 per link
		}
		if f := s.Files[d.Name]; f.Identify != "" || f.LogPage != "" {
			s.userFiles(sys, &d, f)
		} else if b, ok := s.readFile(sys, path.Join(dir, fID)); ok {
			if w, err := ParseIdentify(b); err != nil {
				s.problem(sys, path.Join(dir, fID), err)
			} else {
				id := w.Decode()
				d.Identify = &id
				if id.Checksum == "bad" {
					s.problem(sys, path.Join(dir, fID), errors.New("IDENTIFY checksum (word 255) does not match"))
				}
			}
		}
		if f := s.Files[d.Name]; f.LogPage != "" || d.IdentifySource != "" && d.LogPage.Available {
			// the user's files stand in for the tree's
		} else if b, ok := s.readFile(sys, path.Join(dir, LogPageFile)); ok {
			page, err := ParseHexDump(b)
			if err == nil {
				d.LogPage, err = DecodeLogPage(page)
			}
			if err != nil {
				s.problem(sys, path.Join(dir, LogPageFile), err)
			}
		}
		h.Devices = append(h.Devices, d)
	}
	out := map[string]*Device{}
	for _, h := range byPort {
		sort.Slice(h.Devices, func(i, j int) bool { return natLess(h.Devices[i].Name, h.Devices[j].Name) })
		for i := range h.Devices {
			out[h.Devices[i].Name] = &h.Devices[i]
		}
	}
	return out
}

// readBlocks maps /sys/block/sdX to ata devices. The resolved path holds
// the ata port and the SCSI address H:C:T:L; libata puts a device at
// channel 0, target = devno, or behind a port multiplier at channel 1,
// target = PMP link (ata_scsi_scan_host in drivers/ata/libata-scsi.c).
func (s *Sysfs) readBlocks(sys *System, devs map[string]*Device) {
	entries, err := s.fs.ReadDir(blockDir)
	if err != nil {
		if !isNotExist(err) {
			s.problem(sys, blockDir, err)
		}
		return
	}
	for _, e := range entries {
		p, err := resolve(s.fs, path.Join(blockDir, e.Name()))
		if err != nil {
			s.problem(sys, path.Join(blockDir, e.Name()), err)
			continue
		}
		port := ataPortOf(p)
		if port == "" {
			continue
		}
		for _, c := range strings.Split(p, "/") {
			m := reSCSIID.FindStringSubmatch(c)
			if m == nil {
				continue
			}
			name := fmt.Sprintf("dev%s.%s", strings.TrimPrefix(port, "ata"), m[3])
			if m[2] == "1" {
				name += ".0"
			}
			if d := devs[name]; d != nil {
				d.Block = e.Name()
			}
			break
		}
	}
}

// natLess orders "host2" before "host10".
func natLess(a, b string) bool {
	ta, na := splitNum(a)
	tb, nb := splitNum(b)
	if ta != tb {
		return ta < tb
	}
	if na != nb {
		return na < nb
	}
	return a < b
}

func splitNum(s string) (string, int) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	n, _ := strconv.Atoi(s[i:])
	return s[:i], n
}

// userFiles reads a device's IDENTIFY (and log page) from saved outputs in
// place of the tree's files. A file that does not decode is a problem
// naming it, as a malformed sysfs file is.
func (s *Sysfs) userFiles(sys *System, d *Device, f DeviceFiles) {
	read := func(p string) ([]Decoded, string, bool) {
		b, err := os.ReadFile(p)
		if err != nil {
			s.problem(sys, p, err)
			return nil, "", false
		}
		ds, format, err := ParseIdentifyFile(b)
		if err != nil {
			s.problem(sys, p, err)
			return nil, "", false
		}
		if len(ds) != 1 {
			s.problem(sys, p, fmt.Errorf("%d drives in the file, want one", len(ds)))
			return nil, "", false
		}
		return ds, format, true
	}
	if f.Identify != "" {
		if ds, format, ok := read(f.Identify); ok {
			if ds[0].Identify != nil {
				d.Identify, d.IdentifySource = ds[0].Identify, f.Identify+", "+format
			}
			if ds[0].LogPage != nil {
				d.LogPage = *ds[0].LogPage
			}
		}
	}
	if f.LogPage != "" {
		if ds, _, ok := read(f.LogPage); ok && ds[0].LogPage != nil {
			d.LogPage = *ds[0].LogPage
		} else if ok {
			s.problem(sys, f.LogPage, errors.New("no DevSlp timings (log 30h page 08h, or hdparm -I's Device Sleep section) in the file"))
		}
	}
}
