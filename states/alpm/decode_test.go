package alpm

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

func TestDecodeRegisters(t *testing.T) {
	c := DecodeHostCaps(0xef34ffa5)
	if !c.SXS || !c.PSC || !c.SSC || !c.SALP || c.Ports != 6 {
		t.Errorf("caps %+v", c)
	}
	if c := DecodeHostCaps(1 << 13); !c.PSC || c.SSC || c.SALP || c.SXS {
		t.Errorf("PSC alone %+v", c)
	}
	c2 := DecodeHostCap2(0x3c)
	if !c2.APST || !c2.SDS || !c2.SADM || !c2.DESO {
		t.Errorf("cap2 %+v", c2)
	}
	if c2 := DecodeHostCap2(1 << 3); !c2.SDS || c2.SADM || c2.DESO || c2.APST {
		t.Errorf("SDS alone %+v", c2)
	}
	// tuned's test: PxCMD & 0x240000 marks a port to leave alone.
	for _, v := range []uint32{1 << 18, 1 << 21, 0x240000} {
		if !DecodePortCmd(v).External() {
			t.Errorf("%#x not external", v)
		}
	}
	pc := DecodePortCmd(0x6c00c017)
	if pc.External() || !pc.ALPE || !pc.ASP || pc.ICC != 6 || pc.ICCName() != "slumber" {
		t.Errorf("cmd %+v", pc)
	}
	d := DecodePortDevSlp(SimPortDevSlp)
	if !d.DSP || d.ADSE || d.DETOms != 20 || d.MDATms != 10 || d.DITO != 1000 || d.IdleMs != 1000 {
		t.Errorf("devslp %+v", d)
	}
	for _, in := range []string{"c734ff05\n", "0xC734FF05", " c734ff05 "} {
		if v, err := ParseHex32([]byte(in)); err != nil || v != 0xc734ff05 {
			t.Errorf("%q: %#x %v", in, v, err)
		}
	}
	for _, in := range []string{"", "zz", "1ffffffff", "-1", "0x"} {
		if _, err := ParseHex32([]byte(in)); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func TestIdentifyRoundTrip(t *testing.T) {
	spec := DriveSpec{Model: "Samsung SSD 860 EVO 500GB", Serial: "S3Z1NB0K123456A", Firmware: "RVT04B6Q",
		HIPM: true, DIPM: true, DevSlp: true, DevSlpEnabled: true}
	w, err := ParseIdentify(spec.Words().Format())
	if err != nil {
		t.Fatal(err)
	}
	id := w.Decode()
	if id.Model != spec.Model || id.Serial != spec.Serial || id.Firmware != spec.Firmware || id.Checksum != "ok" {
		t.Errorf("%+v", id)
	}
	if !id.HIPM || !id.DIPMSupported || id.DIPMEnabled || !id.DevSlpSupported || !id.DevSlpEnabled {
		t.Errorf("flags %+v", id)
	}
	// Model bytes: word 27 holds 'S' in the high byte, 'a' in the low.
	if w[27] != 'S'<<8|'a' {
		t.Errorf("word 27 = %#04x", w[27])
	}
	// Invalid words hide every flag, as the kernel's ata_id_has_* do.
	for _, bad := range []uint16{0x0000, 0xffff} {
		w[76], w[78], w[79] = bad, bad, bad
		id := w.Decode()
		if id.HIPM || id.DIPMSupported || id.DevSlpSupported || id.DevSlpEnabled || id.Word76Valid || id.FeaturesValid {
			t.Errorf("word value %#x decoded as %+v", bad, id)
		}
	}
}

func TestParseIdentifyErrors(t *testing.T) {
	good := DriveSpec{Model: "x"}.Words().Format()
	for _, c := range []struct{ in, want string }{
		{string(good[:5*255]), "255 words, want 256"},
		{string(good) + "0000\n", "more than 256 words"},
		{strings.Replace(string(good), "0040", "00g0", 1), `line 1, word 0: "00g0"`},
		{strings.Replace(string(good), "3fff", "3ff", 1), `word 1: "3ff"`},
		{"", "0 words"},
	} {
		_, err := ParseIdentify([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err %v, want %q", err, c.want)
		}
	}
}

func TestLogPage(t *testing.T) {
	d := DriveSpec{LogValid: true, MDATms: 0, DETOms: 131}
	page, err := ParseHexDump(FormatHexDump(d.LogPage()))
	if err != nil {
		t.Fatal(err)
	}
	lp, err := DecodeLogPage(page)
	if err != nil || lp.DETOms != 131 || lp.DETOFrom != "drive" || lp.MDATms != 10 || !strings.Contains(lp.MDATFrom, "drive reports 0") {
		t.Errorf("%+v %v", lp, err)
	}
	// A smartctl-style dump: banner, offsets, ASCII column.
	var sm bytes.Buffer
	sm.WriteString("smartctl 7.3 2022-02-28 r5338 [x86_64-linux-6.8.0] (local build)\nGeneral Purpose Log 0x30, Page 8 (of 8)\n")
	for i, line := range strings.Split(strings.TrimSpace(string(FormatHexDump(d.LogPage()))), "\n") {
		sm.WriteString(line + "  |................|\n")
		_ = i
	}
	if p2, err := ParseHexDump(sm.Bytes()); err != nil || !bytes.Equal(p2, page) {
		t.Errorf("smartctl form: %v", err)
	}
	if _, err := DecodeLogPage(page[:100]); err == nil {
		t.Error("short page accepted")
	}
	page[2] = 0x07
	if _, err := DecodeLogPage(page); err == nil || !strings.Contains(err.Error(), "page 07h") {
		t.Errorf("wrong page: %v", err)
	}
}

func TestArchiveRoundTrip(t *testing.T) {
	a := fixtureRoot(t, "desktop-6port-617")
	var buf bytes.Buffer
	if err := WriteTreeArchive(&buf, a); err != nil {
		t.Fatal(err)
	}
	b := t.TempDir()
	if err := ExtractTreeArchive(bytes.NewReader(buf.Bytes()), b); err != nil {
		t.Fatal(err)
	}
	var buf2 bytes.Buffer
	if err := WriteTreeArchive(&buf2, b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), buf2.Bytes()) {
		t.Error("archive → tree → archive changed")
	}
	for _, bad := range []string{"== file ../x\n", "== link a -> /etc\n", "== link a/b -> ../../x\n", "== what x\n"} {
		if err := ExtractTreeArchive(strings.NewReader(bad), t.TempDir()); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestSimHostEndToEnd(t *testing.T) {
	drives := []DriveSpec{
		{Model: "SIM DevSlp SSD", Serial: "SIM0", Firmware: "1", Sectors: 1 << 28, HIPM: true, DIPM: true, DIPMEnabled: true, DevSlp: true, Log: true, LogValid: true, MDATms: 10, DETOms: 20},
		{Model: "SIM Plain SSD", Serial: "SIM1", Firmware: "1", Sectors: 1 << 28, HIPM: true},
	}
	h, err := NewSimHost("", drives)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if len(h.Hosts) != 2 || h.Blocks[1] != "sdb" {
		t.Fatalf("hosts %v blocks %v", h.Hosts, h.Blocks)
	}
	ctx, cancel := context.WithCancel(context.Background())
	seen := make(chan string, 8)
	go h.Watch(ctx, time.Millisecond, func(host string, p Policy) { seen <- host + "=" + string(p) })
	defer cancel()
	if got := <-seen; got != "host0=med_power_with_dipm" {
		t.Errorf("first watch call %q", got)
	}
	<-seen // host1's initial policy
	g, res, err := ApplyPolicy(h.Root, []string{"host0"}, "min_power")
	if err != nil || Failed(res) {
		t.Fatal(err, res)
	}
	if got := <-seen; got != "host0=min_power" {
		t.Errorf("watch after write %q", got)
	}
	if p, _ := h.Policy("host0"); p != MinPower {
		t.Errorf("Policy = %q", p)
	}
	sys, err := h.Sysfs().Discover()
	if err != nil {
		t.Fatal(err)
	}
	if e := sys.Hosts[0].Devices[0].DevSlp; !e.Eligible() {
		t.Errorf("sim drive 0 under min_power: %+v", e)
	}
	if e := sys.Hosts[1].Devices[0].DevSlp; e.Eligible() || !contains(e.Failed, CheckDriveSupport) || !contains(e.Failed, CheckPolicy) {
		t.Errorf("sim drive 1: %+v", e)
	}
	g.Restore()
	if p, _ := h.Policy("host0"); p != MedPowerWithDIPM {
		t.Errorf("after restore %q", p)
	}
}
