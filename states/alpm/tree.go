package alpm

import (
	"fmt"
	"os"
	"path/filepath"
)

// Tree describes a sysfs tree for BuildTree: the layout Linux creates for
// AHCI controllers, with the class and block directories as relative
// symbolic links into devices/, so discovery sees what it sees on a real
// host. Fixtures and the simulated host are built from it.
type Tree struct {
	Controllers []Controller
	// OldKernel leaves out link_power_management_supported (before 6.17).
	OldKernel bool
}

// Controller is one AHCI HBA on the PCI bus.
type Controller struct {
	PCI        string // "0000:00:17.0"
	Caps, Cap2 uint32 // ahci_host_caps, ahci_host_cap2
	Ports      []TreePort
}

// TreePort is one port: a scsi_host, an ata_port, a link and two device slots.
type TreePort struct {
	Policy Policy // default med_power_with_dipm
	Cmd    uint32 // ahci_port_cmd; ESP (bit 21) or HPCP (bit 18) make an external port
	// LPMSupported overrides link_power_management_supported; by default
	// it is 0 for external ports, as Linux 6.17 decides.
	LPMSupported *bool
	DevSlp       *uint32 // PxDEVSLP, written to PortDevSlpFile when set
	Drive        *DriveSpec
}

// DriveSpec describes a simulated drive's IDENTIFY data and log page.
type DriveSpec struct {
	Model, Serial, Firmware string
	Sectors                 uint64 // capacity in 512-byte sectors
	Rotational              bool
	HIPM                    bool
	DIPM, DIPMEnabled       bool
	DevSlp, DevSlpEnabled   bool
	// Log says whether the log page file is written; LogValid sets byte
	// 0x37 bit 7; MDATms and DETOms are the raw drive values (0 = "use
	// the default").
	Log, LogValid  bool
	MDATms, DETOms int
	SataSpd        string // ata_link sata_spd; default "6.0 Gbps"
}

// Words builds a plausible IDENTIFY DEVICE block for d (ACS-3 field
// layout; values typical of SATA 3 drives), checksum included.
func (d DriveSpec) Words() *IdentifyWords {
	var w IdentifyWords
	w[0] = 0x0040 // ATA device, fixed
	w[1], w[3], w[6] = 0x3fff, 0x0010, 0x003f
	w.putATAString(idSerial, 10, d.Serial)
	w.putATAString(idFirmware, 4, d.Firmware)
	w.putATAString(idModel, 20, d.Model)
	w[47], w[49], w[50], w[53] = 0x8001, 0x2f00, 0x4000, 0x0007
	w[59] = 0x0101
	sec28 := min(d.Sectors, 0x0fffffff)
	w[60], w[61] = uint16(sec28), uint16(sec28>>16)
	w[63], w[64] = 0x0007, 0x0003
	w[65], w[66], w[67], w[68] = 0x0078, 0x0078, 0x0078, 0x0078
	w[75] = 0x001f
	w[76] = 0x0006 | 0x0008 | 0x0100 | 0x0400 | 0x0800 // Gen1–3, NCQ, PHY events, unload
	if d.HIPM {
		w[76] |= 1 << w76HIPM
	}
	w[77] = 0x0006
	w[78] = 0x0004 | 0x0040 // in-order delivery, settings preservation
	w[79] = 0x0040
	if d.DIPM {
		w[78] |= 1 << w78DIPM
		if d.DIPMEnabled {
			w[79] |= 1 << w78DIPM
		}
	}
	if d.DevSlp {
		w[78] |= 1 << w78DevSlp
		if d.DevSlpEnabled {
			w[79] |= 1 << w78DevSlp
		}
	}
	w[80], w[82], w[83], w[84] = 0x07f8, 0x746b, 0x7d69, 0x6163
	w[85], w[86], w[87], w[88] = 0x7469, 0xbc01, 0x6163, 0x407f
	for i := range 4 {
		w[100+i] = uint16(d.Sectors >> (16 * i))
	}
	w[106] = 0x4000
	if d.Rotational {
		w[217] = 7200
	} else {
		w[169], w[217] = 0x0001, 0x0001
	}
	w.SetChecksum()
	return &w
}

// LogPage builds log 30h page 08h as d describes.
func (d DriveSpec) LogPage() []byte {
	p := make([]byte, logPageSize)
	p[0], p[2], p[7] = 0x01, 0x08, 0x80 // revision 1, page 08h, header valid
	p[logMDAT], p[logDETO] = byte(d.MDATms&0x1f), byte(d.DETOms)
	if d.LogValid {
		p[logValid] = 0x80
	}
	return p
}

// Built names what BuildTree made, in port order across controllers.
type Built struct {
	Hosts  []string // "host0", …
	Blocks []string // block device per host, "" for an empty port
}

// BuildTree writes t under dir (which must exist): hostN and ata(N+1) are
// numbered across controllers in order; drives get sda, sdb, … in order.
func BuildTree(dir string, t Tree) (*Built, error) {
	b := &Built{}
	w := TreeWriter{Dir: dir}
	n, disks := 0, 0
	for _, c := range t.Controllers {
		for _, p := range c.Ports {
			a := n + 1
			pci := filepath.Join("devices", "pci0000:00", c.PCI)
			port := filepath.Join(pci, fmt.Sprintf("ata%d", a))
			host := fmt.Sprintf("host%d", n)
			hdir := filepath.Join(port, host, "scsi_host", host)
			pol := p.Policy
			if pol == "" {
				pol = MedPowerWithDIPM
			}
			w.File(filepath.Join(hdir, fPolicy), string(pol)+"\n")
			if !t.OldKernel {
				sup := DecodePortCmd(p.Cmd).External() == false
				if p.LPMSupported != nil {
					sup = *p.LPMSupported
				}
				w.File(filepath.Join(hdir, fSupported), map[bool]string{true: "1\n", false: "0\n"}[sup])
			}
			w.File(filepath.Join(hdir, fCaps), fmt.Sprintf("%x\n", c.Caps))
			w.File(filepath.Join(hdir, fCap2), fmt.Sprintf("%x\n", c.Cap2))
			w.File(filepath.Join(hdir, fPortCmd), fmt.Sprintf("%x\n", p.Cmd))
			w.File(filepath.Join(hdir, "ahci_host_version"), "10301\n")
			if p.DevSlp != nil {
				w.File(filepath.Join(hdir, PortDevSlpFile), fmt.Sprintf("%x\n", *p.DevSlp))
			}
			w.Link(filepath.Join("class", "scsi_host", host), hdir)

			pdir := filepath.Join(port, "ata_port", fmt.Sprintf("ata%d", a))
			w.File(filepath.Join(pdir, "port_no"), fmt.Sprintf("%d\n", a))
			w.File(filepath.Join(pdir, "nr_pmp_links"), "0\n")
			w.File(filepath.Join(pdir, "idle_irq"), "0\n")
			w.Link(filepath.Join("class", "ata_port", fmt.Sprintf("ata%d", a)), pdir)

			lname := fmt.Sprintf("link%d", a)
			ldir := filepath.Join(port, lname, "ata_link", lname)
			spd := "<unknown>"
			if p.Drive != nil {
				spd = p.Drive.SataSpd
				if spd == "" {
					spd = "6.0 Gbps"
				}
			}
			w.File(filepath.Join(ldir, fSataSpd), spd+"\n")
			w.File(filepath.Join(ldir, "hw_sata_spd_limit"), "6.0 Gbps\n")
			w.File(filepath.Join(ldir, "sata_spd_limit"), "<unknown>\n")
			w.Link(filepath.Join("class", "ata_link", lname), ldir)

			for devno := range 2 {
				dname := fmt.Sprintf("dev%d.%d", a, devno)
				ddir := filepath.Join(port, lname, dname, "ata_device", dname)
				var words IdentifyWords
				class := "none"
				if devno == 0 && p.Drive != nil {
					words, class = *p.Drive.Words(), "ata"
					if p.Drive.Log {
						w.File(filepath.Join(ddir, LogPageFile), string(FormatHexDump(p.Drive.LogPage())))
					}
				}
				w.File(filepath.Join(ddir, fClass), class+"\n")
				w.File(filepath.Join(ddir, fID), string(words.Format()))
				w.File(filepath.Join(ddir, "trim"), "unsupported\n")
				w.Link(filepath.Join("class", "ata_device", dname), ddir)
			}

			blk := ""
			if p.Drive != nil {
				blk = "sd" + string(rune('a'+disks%26))
				disks++
				bdir := filepath.Join(port, host, fmt.Sprintf("target%d:0:0", n), fmt.Sprintf("%d:0:0:0", n), "block", blk)
				w.File(filepath.Join(bdir, "size"), fmt.Sprintf("%d\n", p.Drive.Sectors))
				rot := "0\n"
				if p.Drive.Rotational {
					rot = "1\n"
				}
				w.File(filepath.Join(bdir, "queue", "rotational"), rot)
				w.Link(filepath.Join("block", blk), bdir)
			}
			b.Hosts = append(b.Hosts, host)
			b.Blocks = append(b.Blocks, blk)
			n++
		}
	}
	if w.Err != nil {
		return nil, w.Err
	}
	return b, nil
}

// TreeWriter builds a fixture sysfs tree under Dir, keeping the first
// error in Err so a builder reads as a layout (BuildTree here, the NVMe
// trees in states/nvme). It writes only under Dir, which its callers have
// checked is new or empty (states simulate).
type TreeWriter struct {
	Dir string
	Err error
}

// Mkdir makes the directory rel (and its parents).
func (w *TreeWriter) Mkdir(rel string) {
	if w.Err == nil {
		w.Err = os.MkdirAll(filepath.Join(w.Dir, rel), 0o755)
	}
}

// File writes content to rel, making its parents.
func (w *TreeWriter) File(rel, content string) {
	if w.Err != nil {
		return
	}
	p := filepath.Join(w.Dir, rel)
	if w.Err = os.MkdirAll(filepath.Dir(p), 0o755); w.Err == nil {
		w.Err = os.WriteFile(p, []byte(content), 0o644)
	}
}

// Link makes rel a relative symbolic link to target (both under Dir).
func (w *TreeWriter) Link(rel, target string) {
	if w.Err != nil {
		return
	}
	p := filepath.Join(w.Dir, rel)
	if w.Err = os.MkdirAll(filepath.Dir(p), 0o755); w.Err != nil {
		return
	}
	r, err := filepath.Rel(filepath.Dir(rel), target)
	if err != nil {
		w.Err = err
		return
	}
	// Rebuilding a tree (states simulate --overwrite) replaces its own
	// links; a file or directory in the way is an error, never removed.
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		if w.Err = os.Remove(p); w.Err != nil {
			return
		}
	}
	w.Err = os.Symlink(r, p)
}
