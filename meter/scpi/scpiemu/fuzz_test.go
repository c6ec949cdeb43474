package scpiemu

import (
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/meter/scpi"
)

// FuzzAnswer: any command line gets a reply or an error-queue entry, never
// a panic; the queue stays bounded; a reply to a measurement is a reading
// the driver parses back to the emulated value.
func FuzzAnswer(f *testing.F) {
	for _, s := range []string{"*IDN?", "*CLS", "SYST:ERR?", "MEAS:CURR? (@1)", "meas:volt? (@2)", "MEAS:CURR? (@)",
		"MEAS:CURR? (@-1)", ":MEAS:CURR? CH1", "MEASure:CURRent:DC?", ":SENS:CURR:NPLC 0.1", "MEAS:CURR? (@1x)"} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, cmd string, fam uint8) {
		famName := scpi.Families[int(fam)%len(scpi.Families)].Name
		fm, _ := scpi.FamilyByName(famName)
		e := &Emulator{opts: Options{Current: 0.0125, Voltage: 5, IDN: IDNs[famName]}, fam: fm}
		for range queueLen + 2 {
			reply, ok, meas := e.answer(cmd)
			if len(e.queue) > queueLen {
				t.Fatalf("queue of %d", len(e.queue))
			}
			if ok && meas {
				x, err := scpi.ParseReading(reply)
				if err != nil || (x != 0.0125 && x != 5) {
					t.Fatalf("%q → %q (%v, %v)", cmd, reply, x, err)
				}
			}
			if !ok && !meas && len(e.queue) == 0 && strings.ToUpper(strings.TrimSpace(cmd)) != "*CLS" {
				if _, init := initOf(fm, cmd); !init {
					t.Fatalf("%q: no reply and nothing queued", cmd)
				}
			}
		}
	})
}

func initOf(f scpi.Family, cmd string) (string, bool) {
	for _, c := range f.Init {
		if strings.EqualFold(c, cmd) {
			return c, true
		}
	}
	return "", false
}
