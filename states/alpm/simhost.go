package alpm

import (
	"context"
	"os"
	"time"
)

// SimHost is a writable sysfs tree for the emulator: one AHCI controller
// with a port per simulated drive, so `idlewatt states --sysfs-root` and
// policy writes work end to end. The files are plain files: a write is
// stored as is (the kernel's checks for a valid name are done by this
// package before writing), and reading the policy back shows the target as
// the kernel would.
type SimHost struct {
	// Root is the tree's directory; pass it as --sysfs-root.
	Root string
	// Hosts[i] and Blocks[i] are drive i's scsi_host and block device.
	Hosts  []string
	Blocks []string
	fs     *Sysfs
	owned  bool
}

// SimControllerCaps and SimControllerCap2 describe a DevSlp-capable mobile
// AHCI HBA: 64-bit, NCQ, SNTF, ALPM, Gen3, Partial and Slumber, 32 slots
// (CAP), and APST, SDS, SADM, DESO (CAP2). NP is filled in per drive count.
const (
	SimControllerCaps uint32 = 0xe734ff80
	SimControllerCap2 uint32 = 0x0000003c
	// SimPortCmd is a running port (ST, SUD, POD, FRE, FR, CR) with
	// aggressive link PM enabled.
	SimPortCmd uint32 = 0x0400c017
	// SimPortDevSlp is PxDEVSLP with DSP set, DITO 1000 ms, MDAT 10 ms, DETO 20 ms.
	SimPortDevSlp uint32 = 1000<<15 | 10<<10 | 20<<2 | 1<<1
)

// NewSimHost builds the tree for drives under dir; dir "" makes a fresh
// temporary directory that Close removes. Every port starts at policy
// med_power_with_dipm (the kernel default since 6.11) and has PxDEVSLP.DSP
// set, so DevSlp eligibility depends on the policy and each drive's spec.
func NewSimHost(dir string, drives []DriveSpec) (*SimHost, error) {
	owned := false
	if dir == "" {
		d, err := os.MkdirTemp("", "idlewatt-sysfs-")
		if err != nil {
			return nil, err
		}
		dir, owned = d, true
	}
	c := Controller{PCI: "0000:00:17.0", Caps: SimControllerCaps | uint32(max(len(drives), 1)-1)&0x1f, Cap2: SimControllerCap2}
	for i := range drives {
		dsp := SimPortDevSlp
		c.Ports = append(c.Ports, TreePort{Policy: MedPowerWithDIPM, Cmd: SimPortCmd, DevSlp: &dsp, Drive: &drives[i]})
	}
	b, err := BuildTree(dir, Tree{Controllers: []Controller{c}})
	if err != nil {
		if owned {
			os.RemoveAll(dir)
		}
		return nil, err
	}
	return &SimHost{Root: dir, Hosts: b.Hosts, Blocks: b.Blocks, fs: Open(dir), owned: owned}, nil
}

// Sysfs returns the tree as a Sysfs.
func (h *SimHost) Sysfs() *Sysfs { return h.fs }

// Policy returns the policy target last written for host, read on demand,
// as the simulated drive on that host should obey it.
func (h *SimHost) Policy(host string) (Policy, error) { return h.fs.ReadPolicy(host) }

// Watch calls fn with each host's policy once at the start and then
// whenever it changes, polling every interval until ctx is done. fn runs on
// Watch's goroutine; a host that cannot be read is skipped that round.
func (h *SimHost) Watch(ctx context.Context, interval time.Duration, fn func(host string, p Policy)) {
	last := map[string]Policy{}
	poll := func() {
		for _, host := range h.Hosts {
			if p, err := h.Policy(host); err == nil && p != last[host] {
				last[host] = p
				fn(host, p)
			}
		}
	}
	poll()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			poll()
		}
	}
}

// Close removes the tree if NewSimHost created its directory.
func (h *SimHost) Close() error {
	if h.owned {
		return os.RemoveAll(h.Root)
	}
	return nil
}
