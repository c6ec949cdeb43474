package decode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/idlewatt/idlewatt/states/alpm"
	"github.com/idlewatt/idlewatt/states/hexdump"
	"github.com/idlewatt/idlewatt/states/nvme"
)

// Schema names the JSON form of Result.
const Schema = "idlewatt.states.decode/v1"

// Kinds of data a file holds.
const (
	KindNVMeIdentify = "nvme-identify-controller"
	KindNVMeAPST     = "nvme-feature-0c"
	KindSATA         = "sata-identify"
)

// ErrUnknown is returned (wrapped, naming every format) for input no
// format recognises.
var ErrUnknown = errors.New("unknown format")

// Result is one decoded file.
type Result struct {
	Schema string         `json:"schema"`
	File   string         `json:"file"`
	Kind   string         `json:"kind"`
	Format string         `json:"format"`
	NVMe   *nvme.Identify `json:"nvme_identify,omitempty"`
	APST   *nvme.APST     `json:"nvme_apst,omitempty"`
	SATA   []alpm.Decoded `json:"sata,omitempty"`
}

// MaxInput bounds one file.
const MaxInput = 4 << 20

// Formats lists every format read, for messages and docs.
func Formats() string {
	return "NVMe Identify Controller: " + nvme.FormatNames(nvme.IdentifyFormats) +
		". NVMe feature 0x0c: " + nvme.FormatNames(nvme.APSTFormats) +
		". SATA: " + alpm.FormatNames()
}

// Read decodes r (named name in messages).
func Read(name string, r io.Reader) (*Result, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxInput {
		return nil, fmt.Errorf("%s: more than %d bytes: not a tool's output", name, MaxInput)
	}
	res, err := Bytes(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	res.File = name
	return res, nil
}

// Bytes decodes one file's content.
func Bytes(b []byte) (*Result, error) {
	res := &Result{Schema: Schema}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fmt.Errorf("empty: %w (it reads %s)", ErrUnknown, Formats())
	}
	kind, err := sniff(b)
	if err != nil {
		return nil, err
	}
	res.Kind = kind
	switch kind {
	case KindNVMeIdentify:
		res.NVMe, res.Format, err = nvme.ParseIdentify(b)
	case KindNVMeAPST:
		res.APST, res.Format, err = nvme.ParseAPST(b)
	case KindSATA:
		res.SATA, res.Format, err = alpm.ParseIdentifyFile(b)
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

func isBinary(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' {
			return true
		}
	}
	return false
}

// sniff picks the kind. Binary and dumps go by size (4096: Identify
// Controller, 256: the APST table, 512: IDENTIFY DEVICE or log 30h/08h).
func sniff(b []byte) (string, error) {
	t := bytes.TrimLeft(b, " \t\r\n")
	switch {
	case isBinary(b):
		return bySize(len(b), "binary")
	case t[0] == '{' || t[0] == '[':
		var probe any
		dec := json.NewDecoder(bytes.NewReader(b))
		if err := dec.Decode(&probe); err != nil {
			return "", fmt.Errorf("JSON at byte %d: %v", dec.InputOffset(), err)
		}
		s := string(b)
		switch {
		case strings.Contains(s, `"psds"`) || strings.Contains(s, `"npss"`) || strings.Contains(s, `"nvme_power_states"`):
			return KindNVMeIdentify, nil
		case strings.Contains(s, "Autonomous Power State Transition Enable"):
			return KindNVMeAPST, nil
		case alpm.SniffIdentify(b) == alpm.FormatSmartctlJSON:
			return KindSATA, nil
		}
		return "", fmt.Errorf("JSON with neither \"psds\" (nvme id-ctrl -o json), \"nvme_power_states\" (smartctl -j) nor the APSTE key (nvme get-feature -f 0x0c -H -o json), nor smartctl -j of an ATA drive: %w (it reads %s)", ErrUnknown, Formats())
	}
	switch {
	case nvme.SniffAPST(b) == nvme.FormatFeatureTxt:
		return KindNVMeAPST, nil
	case nvme.SniffIdentify(b) == nvme.FormatCLIText, nvme.SniffIdentify(b) == nvme.FormatSmartctl:
		return KindNVMeIdentify, nil
	}
	switch alpm.SniffIdentify(b) {
	case alpm.FormatCrystal, alpm.FormatHdparm, alpm.FormatSmartctl, alpm.FormatSmartctlIdentify, alpm.FormatWords:
		return KindSATA, nil
	}
	if hexdump.Looks(b) {
		d, err := hexdump.Parse(bytes.NewReader(b))
		if err != nil {
			return "", fmt.Errorf("hex dump: %w", err)
		}
		return bySize(len(d.Bytes), string(d.Layout))
	}
	return "", fmt.Errorf("%w: it reads %s", ErrUnknown, Formats())
}

func bySize(n int, what string) (string, error) {
	switch n {
	case nvme.IdentifySize:
		return KindNVMeIdentify, nil
	case nvme.APSTTableSize:
		return KindNVMeAPST, nil
	case 512:
		return KindSATA, nil
	}
	return "", fmt.Errorf("%s of %d bytes: not 4096 (NVMe Identify Controller), 256 (the APST table) nor 512 (ATA IDENTIFY DEVICE or log 30h page 08h): truncated?", what, n)
}

// WriteText prints r as `idlewatt states` prints the same data.
func (r *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", r.File, r.Format)
	src := r.Format
	var err error
	switch r.Kind {
	case KindNVMeIdentify:
		fmt.Fprintf(&b, "  model %q serial %q firmware %q\n", r.NVMe.Model, r.NVMe.Serial, r.NVMe.Firmware)
		err = nvme.WriteIdentifyText(&b, r.NVMe, src)
	case KindNVMeAPST:
		err = nvme.WriteAPSTText(&b, r.APST, src)
	case KindSATA:
		for _, d := range r.SATA {
			if err = alpm.WriteDecodedText(&b, d, src); err != nil {
				break
			}
		}
	}
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, b.String())
	return err
}
