package scpiemu

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/meter/scpi"
)

// FuzzAnswer: any command line gets a reply or an error-queue entry, never
// a panic; the queue stays bounded; a reply to a measurement (an array
// too, ASCII or block) is readings the driver parses back to the emulated
// value.
func FuzzAnswer(f *testing.F) {
	for _, s := range []string{"*IDN?", "*CLS", "SYST:ERR?", "MEAS:CURR? (@1)", "meas:volt? (@2)", "MEAS:CURR? (@)",
		"MEAS:CURR? (@-1)", ":MEAS:CURR? CH1", "MEASure:CURRent:DC?", ":SENS:CURR:NPLC 0.1", "MEAS:CURR? (@1x)",
		"SENS:SWE:TINT 2.048e-05,(@1)", "SENS:SWE:POIN 16,(@1)", "SENS:SWE:TINT? (@1)", "FORM REAL", "MEAS:ARR:CURR? (@1)",
		"SENS:SWE:POIN 99999,(@1)", ":TRAC:CLE", `:TRAC:DATA? "READ"`, ":SENS:CURR:APER 1e-9"} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, cmd string, fam uint8) {
		famName := scpi.Families[int(fam)%len(scpi.Families)].Name
		fm, _ := scpi.FamilyByName(famName)
		e := &Emulator{opts: Options{Current: 0.0125, Voltage: 5, IDN: IDNs[famName]}, fam: fm}
		e.initArray()
		for range queueLen + 2 {
			reply, ok, meas := e.answer(cmd)
			if len(e.queue) > queueLen {
				t.Fatalf("queue of %d", len(e.queue))
			}
			if ok && meas {
				xs, err := scpi.ParseArray(nil, []byte(reply))
				for _, x := range xs {
					if math.Abs(x-0.0125) > 1e-9 && x != 5 {
						err = fmt.Errorf("reading %v", x)
					}
				}
				if err != nil || len(xs) == 0 {
					t.Fatalf("%q → %q (%v, %v)", cmd, trunc(reply), xs, err)
				}
			}
			if !ok && !meas && len(e.queue) == 0 && strings.ToUpper(strings.TrimSpace(cmd)) != "*CLS" && !e.isArrayCmd(cmd) {
				if _, init := initOf(fm, cmd); !init {
					t.Fatalf("%q: no reply and nothing queued", cmd)
				}
			}
		}
	})
}

func trunc(s string) string { return s[:min(len(s), 80)] }

// isArrayCmd says cmd is one of the family's array commands (most have no
// reply).
func (e *Emulator) isArrayCmd(cmd string) bool {
	u := strings.ToUpper(strings.TrimSpace(cmd))
	for _, c := range e.arrCmds {
		if c.re.MatchString(u) {
			return true
		}
	}
	return false
}

func initOf(f scpi.Family, cmd string) (string, bool) {
	for _, c := range f.Init {
		if strings.EqualFold(c, cmd) {
			return c, true
		}
	}
	return "", false
}
