package replay

import (
	"bufio"
	"io"
	"strconv"

	"github.com/idlewatt/idlewatt/workload"
)

// EventsHeader is the header line of EventsCSV (without its newline).
const EventsHeader = "issue_ns,complete_ns,op,offset,size,err"

// EventsCSV writes IOEvents as CSV, the format of `idlewatt replay --events`
// and `bench --events`: after EventsHeader, one line per completed I/O
// with its issue and completion times on the host monotonic clock (ns),
// the op (read, write, flush, trim), offset and size in bytes, and err 1
// if it failed, else 0. Event has the signature Run's onEvent takes.
type EventsCSV struct {
	w *bufio.Writer
	b []byte
}

// NewEventsCSV writes the header to w and returns the writer of the
// events. Writes are buffered; Flush writes the rest and returns the first
// write error.
func NewEventsCSV(w io.Writer) *EventsCSV {
	e := &EventsCSV{w: bufio.NewWriterSize(w, 256<<10)}
	e.w.WriteString(EventsHeader + "\n")
	return e
}

// Event writes one event's line. A write error is kept for Flush (bufio's
// errors are sticky).
func (e *EventsCSV) Event(ev workload.IOEvent) {
	b := strconv.AppendInt(e.b[:0], int64(ev.Issue), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(ev.Complete), 10)
	b = append(b, ',')
	b = append(b, ev.Op.String()...)
	b = append(b, ',')
	b = strconv.AppendInt(b, ev.Offset, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(ev.Size), 10)
	if ev.Err {
		b = append(b, ",1\n"...)
	} else {
		b = append(b, ",0\n"...)
	}
	e.w.Write(b)
	e.b = b
}

// Flush writes what is buffered; its error is the first write error.
func (e *EventsCSV) Flush() error { return e.w.Flush() }
