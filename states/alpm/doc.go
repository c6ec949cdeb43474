// Package alpm is the Linux host side of SATA link power management
// (ALPM): discovery, policy control, register and IDENTIFY decoding, and
// DevSlp eligibility, all through a configurable sysfs root so tests run on
// fixture trees (fixtures/sysfs) and the emulator on a simulated host.
//
// # Reading
//
// Open(root).Discover() walks class/scsi_host, class/ata_link,
// class/ata_device and block, following the symbolic links into devices/
// to learn which ata port, link, drive and block device belong together
// (the topology lives only in link targets). Per host it reads
// link_power_management_policy, link_power_management_supported (6.17+;
// absent means unknown), ahci_host_caps, ahci_host_cap2 and ahci_port_cmd;
// per drive the IDENTIFY words (HIPM, DIPM, DevSlp with word 76/78/79
// validity), and, when provided, log 30h page 08h (MDAT, DETO) and
// PxDEVSLP, which mainline sysfs does not expose (LogPageFile,
// PortDevSlpFile). A malformed file becomes a Problem naming the file; it
// never stops discovery and never panics.
//
// # Writing
//
// SetPolicy writes one of the six kernel names to each host and reads it
// back. keep_firmware_settings and unknown names ("did you mean …?") are
// refused before any I/O. EINVAL, EOPNOTSUPP and EACCES are per host
// (HostResult, errors.Is with ErrRejected, ErrLPMUnsupported,
// ErrPermission); the others go on. The read-back is the "target set": the
// kernel applies it later in error handling and may turn LPM off without
// changing the file.
//
// # Restoring
//
// ApplyPolicy saves the current policies and returns a Guard;
// Guard.RestoreOnExit(ctx) puts them back when the context ends, on
// SIGINT/SIGTERM/SIGHUP, or when its release function runs (defer it).
//
// # DevSlp
//
// DevSlpEligible names each failed precondition the kernel checks before
// enabling DevSlp (drivers/ata/libahci.c ahci_set_lpm and
// ahci_set_aggressive_devslp, libata-core.c ata_dev_config_devslp):
// policy, SDS, SADM, drive support, log page, DSP, and "Slumber first"
// when CAP2.DESO. Facts not exposed on a real host are "unknown", never
// guessed.
//
// # Simulated host
//
// NewSimHost builds a writable tree with one AHCI port per simulated drive;
// SimHost.Policy and SimHost.Watch tell a drive model the policy written
// for its host. BuildTree and the tree archive format
// (WriteTreeArchive/ExtractTreeArchive) make the fixtures.
//
// Sources: Linux drivers/ata (libata-sata.c, libata-transport.c, libahci.c,
// ahci.h, include/linux/ata.h), AHCI 1.3.1, ACS-3, hdparm identify.c;
// docs/states.md for the fields and the output.
//
// # Where it sits
//
// The states floor (rank 1), the host side, over leaves and states/hexdump
// only; app/rig, states/nvme, states/nvme/nvmehost, states/decode and
// cmd/idlewatt import it.
package alpm
