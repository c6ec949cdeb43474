// Package decode tells what a saved tool output is and decodes it without a
// sysfs tree: NVMe Identify Controller (nvme-cli JSON 1.x/2.x and text,
// smartctl, raw binary, hex dumps), NVMe feature 0Ch (nvme-cli get-feature
// text and JSON, binary, dumps), SATA IDENTIFY DEVICE (sysfs id, hdparm -I
// and --Istdout, CrystalDiskInfo, smartctl, binary, dumps) and log 30h page
// 08h. The formats themselves are registered in states/nvme
// (IdentifyFormats, APSTFormats) and states/alpm (IdentifyFormats); this
// package only picks the kind, so a file is read by the same code that
// `idlewatt states --nvme-id-ctrl` and `--sata-id` use.
// docs/states.md, "Decoding saved outputs", lists every format.
//
// Where it sits: the states floor (rank 1), over states/alpm, states/nvme
// and states/hexdump; cmd/idlewatt (`states decode`) imports it.
package decode
