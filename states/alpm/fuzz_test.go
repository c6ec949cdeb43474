package alpm

import (
	"bytes"
	"strings"
	"testing"
)

func FuzzParseIdentify(f *testing.F) {
	f.Add(DriveSpec{Model: "Samsung SSD 860 EVO 500GB", HIPM: true, DIPM: true, DevSlp: true}.Words().Format())
	f.Add(DriveSpec{}.Words().Format()[:1000])
	f.Add([]byte("0040 ffff\n"))
	f.Add([]byte(strings.Repeat("ffff ", 256)))
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := ParseIdentify(b)
		if err != nil {
			return
		}
		id := w.Decode()
		// Whatever parsed must re-format and parse to the same words.
		w2, err := ParseIdentify(w.Format())
		if err != nil || *w2 != *w {
			t.Fatalf("round trip: %v", err)
		}
		if !id.Word76Valid && id.HIPM || !id.FeaturesValid && (id.DIPMSupported || id.DevSlpSupported) {
			t.Fatalf("flags from an invalid word: %+v", id)
		}
		for _, s := range []string{id.Model, id.Serial, id.Firmware} {
			for _, c := range []byte(s) {
				if c < 0x20 || c > 0x7e {
					t.Fatalf("non-printable byte in %q", s)
				}
			}
		}
	})
}

func FuzzParseHex32(f *testing.F) {
	for _, s := range []string{"c734ff05\n", "0x3c", "", "zz12", "ffffffff", "100000000", " 0X1 "} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := ParseHex32(b)
		if err != nil {
			return
		}
		c, c2, cmd, ds := DecodeHostCaps(v), DecodeHostCap2(v), DecodePortCmd(v), DecodePortDevSlp(v)
		if uint32(c.Raw) != v || uint32(c2.Raw) != v || uint32(cmd.Raw) != v || uint32(ds.Raw) != v {
			t.Fatal("raw value lost")
		}
		if c.Ports < 1 || c.Ports > 32 || cmd.ICC < 0 || cmd.ICC > 15 || ds.MDATms > 31 || ds.DETOms > 255 || ds.DITO > 1023 {
			t.Fatalf("field out of range: %+v %+v %+v", c, cmd, ds)
		}
		v2, err := ParseHex32([]byte(cmd.Raw.String()))
		if err != nil || v2 != v {
			t.Fatalf("re-parse %s: %v", cmd.Raw, err)
		}
	})
}

func FuzzParseHexDump(f *testing.F) {
	f.Add(FormatHexDump(DriveSpec{LogValid: true, DETOms: 30}.LogPage()))
	f.Add([]byte("General Purpose Log 0x30\n0000000: 01 00 08 |...|\n"))
	f.Add([]byte("0000010: 00\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParseHexDump(b)
		if err != nil {
			return
		}
		if len(p) == 0 || len(p) > logPageSize {
			t.Fatalf("%d bytes", len(p))
		}
		p2, err := ParseHexDump(FormatHexDump(p))
		if err != nil || !bytes.Equal(p, p2) {
			t.Fatalf("round trip: %v", err)
		}
		lp, err := DecodeLogPage(p)
		if err == nil && (lp.MDATms < 1 || lp.MDATms > 31 || lp.DETOms < 1) {
			t.Fatalf("timings %+v", lp)
		}
	})
}

func FuzzParsePolicy(f *testing.F) {
	for _, p := range Policies() {
		f.Add(string(p))
	}
	f.Add("min_powr")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePolicy(s)
		if err == nil && !p.Known() {
			t.Fatalf("%q parsed to unknown %q", s, p)
		}
		if err != nil && !strings.Contains(err.Error(), "unknown policy") {
			t.Fatalf("error %v", err)
		}
	})
}
