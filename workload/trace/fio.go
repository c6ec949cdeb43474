package trace

import (
	"io"
	"time"

	"github.com/idlewatt/idlewatt/workload"
)

// Fio iolog headers as fio writes them.
const (
	FioV2Header = "fio version 2 iolog"
	FioV3Header = "fio version 3 iolog"
)

// FioReader reads fio iolog version 2 or 3.
//
// Version 2 lines are "FILE ACTION [OFFSET LENGTH]". It has no timestamps;
// "FILE wait MS 0" means, as fio's read_iolog_get replays it, "do not issue
// the next op before MS milliseconds after the start", so Op.Time is the
// latest wait seen (never going backwards).
//
// Version 3 lines start with a timestamp in microseconds from the start of
// the run ("TIME FILE ACTION [OFFSET LENGTH]"); wait lines are ignored, as
// fio ignores them.
//
// add/open/close lines are file bookkeeping and yield no op; an op naming a
// file that was never added is accepted (fio 3.x crashes on such logs).
// sync and datasync become flushes; trim becomes a trim.
type FioReader struct {
	l       *lines
	f       [6][]byte
	files   interner
	version int
	now     time.Duration // v2: time set by the latest wait
}

// NewFioReader reads r; name is used in error messages.
func NewFioReader(r io.Reader, name string) *FioReader {
	return &FioReader{l: newLines(r, name)}
}

// Version is 2 or 3 once the header has been read, else 0.
func (f *FioReader) Version() int { return f.version }

// Next implements Reader.
func (f *FioReader) Next() (Op, error) {
	for {
		b, err := f.l.next()
		if err != nil {
			return Op{}, err
		}
		if f.version == 0 {
			switch string(b) {
			case FioV2Header:
				f.version = 2
			case FioV3Header:
				f.version = 3
			default:
				return Op{}, f.l.errf("expected %q or %q as the first line", FioV2Header, FioV3Header)
			}
			continue
		}
		if len(b) == 0 {
			continue
		}
		k := fields(b, f.f[:])
		fl := f.f[:min(k, len(f.f))]
		var t time.Duration
		if f.version == 3 {
			us, ok := parseUint(fl[0])
			if !ok || us > int64(1<<63-1)/1000 {
				return Op{}, f.l.errf("timestamp %q: expected microseconds from the start", fl[0])
			}
			t = time.Duration(us) * time.Microsecond
			fl = fl[1:]
		}
		if len(fl) < 2 {
			return Op{}, f.l.errf("expected \"%sFILE ACTION [OFFSET LENGTH]\"", f.v3prefix())
		}
		file, act := fl[0], string(fl[1])
		switch act {
		case "add", "open", "close":
			if len(fl) != 2 {
				return Op{}, f.l.errf("%s takes no offset or length", act)
			}
			continue
		}
		if len(fl) != 4 {
			return Op{}, f.l.errf("expected \"%sFILE %s OFFSET LENGTH\"", f.v3prefix(), act)
		}
		off, ok := parseUint(fl[2])
		if !ok {
			return Op{}, f.l.errf("offset %q: expected a non-negative integer (bytes)", fl[2])
		}
		n, ok := parseUint(fl[3])
		if !ok || !sizeOK(n) {
			return Op{}, f.l.errf("length %q: expected an integer from 0 to 2147483647 (bytes)", fl[3])
		}
		op := Op{Offset: off, Size: int32(n), Time: t}
		switch act {
		case "read":
			op.Type = workload.OpRead
		case "write":
			op.Type = workload.OpWrite
		case "sync", "datasync":
			op.Type, op.Offset, op.Size = workload.OpFlush, 0, 0
		case "trim":
			op.Type = workload.OpTrim
		case "wait":
			if f.version == 2 {
				if off > int64(1<<63-1)/int64(time.Millisecond) {
					return Op{}, f.l.errf("wait %q: too large", fl[2])
				}
				f.now = max(f.now, time.Duration(off)*time.Millisecond)
			}
			continue
		default:
			return Op{}, f.l.errf("action %q: expected read, write, sync, datasync, trim, wait, add, open or close", act)
		}
		if f.version == 2 {
			op.Time = f.now
		}
		op.File = f.files.get(file)
		return op, nil
	}
}

func (f *FioReader) v3prefix() string {
	if f.version == 3 {
		return "TIME_US "
	}
	return ""
}
