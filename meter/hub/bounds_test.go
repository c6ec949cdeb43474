package hub

import (
	"bytes"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/idlewatt/idlewatt/meter"
)

// TestBoundsRefuseWrongNumbers: identities and calibrations that would make
// every reading a wrong number are refused, naming the field; the sample
// hub (INA226, 20 mΩ / 50 µA on 5 V, 10 mΩ / 100 µA on 12 V) passes.
func TestBoundsRefuseWrongNumbers(t *testing.T) {
	id, cal := sampleIdentity(), sampleCal()
	if err := id.Check(); err != nil {
		t.Fatalf("sample identity: %v", err)
	}
	if err := cal.Check(&id); err != nil {
		t.Fatalf("sample calibration: %v", err)
	}
	idCases := []struct {
		name string
		edit func(*Identity)
		want string
	}{
		{"bus LSB 0: every reading 0 W", func(id *Identity) { id.BusLSBuV = 0 }, "bus voltage LSB 0 µV outside 10–10000 µV"},
		{"bus LSB 65 mV", func(id *Identity) { id.BusLSBuV = 65000 }, "bus voltage LSB 65000 µV"},
		{"current LSB 0xFFFFFFFF nA: 34 kW", func(id *Identity) { id.Rails[0].CurrentLSBnA = 0xFFFFFFFF }, "rail 0 (5v): current LSB 4294967295 nA outside 1–305185 nA"},
		{"current LSB 0", func(id *Identity) { id.Rails[1].CurrentLSBnA = 0 }, "rail 1 (12v): current LSB 0 nA"},
		{"12 V rail with a 6 V full scale", func(id *Identity) { id.Rails[1].MaxMilliVolt = 6000 }, "rail 1 (12v): full-scale voltage 6000 mV outside 12600–60000 mV"},
		{"unknown rail id", func(id *Identity) { id.Rails[1].Rail = 9 }, "rail 1: rail id 9"},
		{"two 5 V rails", func(id *Identity) { id.Rails[1].Rail = meter.Rail5V }, "a second 5v rail"},
		{"rate 4 GHz", func(id *Identity) { id.Rates[0] = 4e9 }, "rate 0: 4000000000 Hz"},
	}
	for _, c := range idCases {
		bad := sampleIdentity()
		c.edit(&bad)
		err := bad.Check()
		if !errors.Is(err, meter.ErrCalibration) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.name, err, c.want)
		}
	}
	calCases := []struct {
		name string
		edit func(*Calibration)
		want string
	}{
		{"LSB 0xFFFFFFFF nA", func(c *Calibration) { c.Entries[1].CurrentLSBnA = 0xFFFFFFFF }, "entry 1 (port 1, rail 12v): current LSB 4294967295 nA outside 50000–200000 nA"},
		{"µA for nA", func(c *Calibration) { c.Entries[0].CurrentLSBnA = 50 }, "current LSB 50 nA outside 25000–100000 nA"},
		{"port 3 of 2", func(c *Calibration) { c.Entries[2].Port = 3 }, "port 3 (the hub has ports 1–2)"},
		{"rail the hub lacks", func(c *Calibration) { c.Entries[0].Rail = meter.Rail3V3 }, "the hub has no such rail"},
		{"shunt 5 Ω", func(c *Calibration) { c.Entries[0].ShuntMicroOhm = 5e6 }, "shunt 5000000 µΩ outside 100–1000000 µΩ"},
		{"CAL register for another shunt", func(c *Calibration) { c.Entries[0].CalReg = 2560 }, "CAL register 2560 disagrees with 0.00512 / (current LSB 50000 nA × shunt 20000 µΩ) = 5120"},
	}
	for _, c := range calCases {
		bad := sampleCal()
		c.edit(&bad)
		err := bad.Check(&id)
		if !errors.Is(err, meter.ErrCalibration) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.name, err, c.want)
		}
	}
	// An uncalibrated entry (LSB 0) keeps the nominal LSB and passes.
	unc := sampleCal()
	unc.Entries[0].CurrentLSBnA = 0
	if err := unc.Check(&id); err != nil {
		t.Errorf("uncalibrated entry: %v", err)
	}
}

// TestBoundsAtOpen: a replayed stream and a live hub with a bus LSB of 0
// are refused at open, before any sample, with meter.ErrCalibration.
func TestBoundsAtOpen(t *testing.T) {
	bad := sampleIdentity()
	bad.BusLSBuV = 0
	data := stream(AppendFrame(nil, TypeIdentity, 0, bad.Append(nil)), samplesFrame(0, 10))
	if _, err := NewReplay(bytes.NewReader(data), "s.bin"); !errors.Is(err, meter.ErrCalibration) || !strings.Contains(err.Error(), "s.bin: byte 0: ") {
		t.Errorf("replay: %v", err)
	}
	cal := sampleCal()
	cal.Entries[3].CurrentLSBnA = 0xFFFFFFFF
	id := sampleIdentity()
	data = stream(AppendFrame(nil, TypeIdentity, 0, id.Append(nil)), AppendFrame(nil, TypeCal, 1, cal.Append(nil)), samplesFrame(0, 10))
	if _, err := NewReplay(bytes.NewReader(data), "s.bin"); !errors.Is(err, meter.ErrCalibration) || !strings.Contains(err.Error(), "entry 3") {
		t.Errorf("replay, bad calibration: %v", err)
	}
	for _, c := range []struct {
		id  Identity
		cal Calibration
	}{{bad, sampleCal()}, {sampleIdentity(), cal}} {
		conn := answering(t, c.id, c.cal)
		if _, err := New(conn, Options{Timeout: time.Second}); !errors.Is(err, meter.ErrCalibration) {
			t.Errorf("live hub: %v", err)
		}
	}
}

// answering is a fake hub on a pipe: IDENTITY and CALIBRATION as given, an
// ACK to anything else.
func answering(t *testing.T, id Identity, cal Calibration) net.Conn {
	host, dev := net.Pipe()
	go func() {
		sc := NewScanner(dev)
		for {
			f, err := sc.Next()
			if err != nil {
				return
			}
			var out []byte
			switch f.Type {
			case TypeIdentify:
				out = AppendFrame(nil, TypeIdentity, f.Seq, id.Append(nil))
			case TypeReadCal:
				out = AppendFrame(nil, TypeCal, f.Seq, cal.Append(nil))
			default:
				out = AppendFrame(nil, TypeAck, f.Seq, []byte{byte(f.Type)})
			}
			if _, err := dev.Write(out); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { dev.Close(); host.Close() })
	return host
}
