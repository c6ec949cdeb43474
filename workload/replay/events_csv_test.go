package replay

import (
	"bytes"
	"errors"
	"testing"

	"github.com/idlewatt/idlewatt/workload"
)

func TestEventsCSV(t *testing.T) {
	var out bytes.Buffer
	e := NewEventsCSV(&out)
	e.Event(workload.IOEvent{Port: 1, Op: workload.OpRead, Offset: 4096, Size: 512, Issue: 10, Complete: 25})
	e.Event(workload.IOEvent{Op: workload.OpTrim, Offset: 1 << 40, Size: 1 << 30, Issue: -5, Complete: 1 << 62, Err: true})
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "issue_ns,complete_ns,op,offset,size,err\n" +
		"10,25,read,4096,512,0\n" +
		"-5,4611686018427387904,trim,1099511627776,1073741824,1\n"
	if out.String() != want {
		t.Fatalf("got\n%swant\n%s", out.String(), want)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// A write error surfaces at Flush, whichever write met it.
func TestEventsCSVWriteError(t *testing.T) {
	e := NewEventsCSV(failWriter{})
	for range 20000 { // more than the buffer holds
		e.Event(workload.IOEvent{Op: workload.OpWrite, Size: 4096, Issue: 1, Complete: 2})
	}
	if err := e.Flush(); err == nil || err.Error() != "disk full" {
		t.Fatalf("Flush: %v, want disk full", err)
	}
}
