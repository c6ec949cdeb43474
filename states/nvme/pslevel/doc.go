// Package pslevel is the model of an NVMe drive's idle levels by power
// state — what APST verification (analysis/judge) judges with and what a
// capture's learned levels are named from — with no host control in it:
// no sysfs, no ioctl, no golang.org/x/sys. states/nvme builds the levels
// from a drive's power-state table (nvme.TableLevels) and re-exports these
// names; analysis imports this package alone, so reading a capture never
// pulls in the code that changes a host's settings.
//
// # Levels
//
// A Level is one power state's steady idle draw with the latencies its
// descriptor declares. Learn names the stable levels of a capture
// (detect.LevelHistogram.Peaks) from the table's; Classify and Ceiling
// place the thresholds at the geometric means of neighbours, as
// states/detect once did for SATA levels.
//
// Source: NVMe Base Specification 2.0, 5.21.1.2 (Power State Descriptor).
package pslevel
