package trace

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/workload"
)

// Writer writes ops in one format. Close flushes; it does not close the
// underlying io.Writer.
type Writer struct {
	w       *bufio.Writer
	format  Format
	buf     []byte
	started bool
	files   map[string]bool // fio: files already added
	waitMS  int64           // fio v2: last wait written
	seq     int64           // blkparse sequence number
	written int64
	skipped [5]int64 // by workload.Op
	err     error
}

// MSREpoch is the filetime written for time 0 in MSR CSV (2007-02-22, the
// start of the MSR Cambridge traces), so written files look like the originals.
const MSREpoch = 128166372000000000

// NewWriter returns a writer of format f.
func NewWriter(w io.Writer, f Format) (*Writer, error) {
	switch f {
	case FormatNative, FormatFioV2, FormatFioV3, FormatBlkparse, FormatMSR:
	default:
		return nil, fmt.Errorf("unknown trace format %q", f)
	}
	return &Writer{w: bufio.NewWriterSize(w, 64<<10), format: f, files: map[string]bool{}, waitMS: -1}, nil
}

// Skipped counts ops the format cannot carry (flush and trim in MSR CSV):
// given to Write, not written.
func (w *Writer) Skipped() int64 {
	var n int64
	for _, k := range w.skipped {
		n += k
	}
	return n
}

// Written counts the ops written.
func (w *Writer) Written() int64 { return w.written }

// SkippedNote says how many ops were dropped, of which types and why, e.g.
// "30 ops dropped (18 flush, 12 trim): MSR CSV carries only reads and
// writes"; "" when none were.
func (w *Writer) SkippedNote() string {
	n := w.Skipped()
	if n == 0 {
		return ""
	}
	var parts []string
	for t, k := range w.skipped {
		if k > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", k, workload.Op(t)))
		}
	}
	return fmt.Sprintf("%d ops dropped (%s): MSR CSV carries only reads and writes", n, strings.Join(parts, ", "))
}

// Comment adds a comment line to a native trace (ignored by other formats).
// It must be called before the first Write.
func (w *Writer) Comment(s string) error {
	if w.format != FormatNative || w.started {
		return nil
	}
	w.header()
	for _, line := range strings.Split(s, "\n") {
		w.w.WriteString("# " + line + "\n")
	}
	return w.err
}

func (w *Writer) header() {
	if w.started {
		return
	}
	w.started = true
	switch w.format {
	case FormatNative:
		w.w.WriteString(NativeHeader + "\n")
	case FormatFioV2:
		w.w.WriteString(FioV2Header + "\n")
	case FormatFioV3:
		w.w.WriteString(FioV3Header + "\n")
	case FormatMSR:
		w.w.WriteString(MSRHeader + "\n")
	}
}

// Write appends one op.
func (w *Writer) Write(op Op) error {
	if w.err != nil {
		return w.err
	}
	w.header()
	b := w.buf[:0]
	switch w.format {
	case FormatNative:
		b = appendSeconds(b, op.Time)
		b = append(b, ' ', nativeLetter(op.Type), ' ')
		b = strconv.AppendInt(b, op.Offset, 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(op.Size), 10)
		if op.File != "" {
			b = append(b, ' ')
			b = append(b, blankless(op.File)...)
		}
	case FormatFioV2, FormatFioV3:
		b = w.appendFio(b, op)
	case FormatBlkparse:
		b = w.appendBlkparse(b, op)
	case FormatMSR:
		if op.Type != workload.OpRead && op.Type != workload.OpWrite {
			if int(op.Type) < len(w.skipped) {
				w.skipped[op.Type]++
			}
			return nil
		}
		host, disk := "idlewatt", "0"
		if h, d, ok := strings.Cut(op.File, "/"); ok && !strings.ContainsAny(op.File, ", ") {
			host, disk = h, d
		}
		b = strconv.AppendInt(b, MSREpoch+int64(op.Time/100), 10)
		b = append(b, ',')
		b = append(b, host...)
		b = append(b, ',')
		b = append(b, disk...)
		if op.Type == workload.OpRead {
			b = append(b, ",Read,"...)
		} else {
			b = append(b, ",Write,"...)
		}
		b = strconv.AppendInt(b, op.Offset, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(op.Size), 10)
		b = append(b, ",0"...)
	}
	b = append(b, '\n')
	w.buf = b
	if _, w.err = w.w.Write(b); w.err == nil {
		w.written++
	}
	return w.err
}

func (w *Writer) appendFio(b []byte, op Op) []byte {
	file := blankless(op.File)
	if file == "" {
		file = "idlewatt.target"
	}
	us := strconv.AppendInt(nil, int64(op.Time/time.Microsecond), 10)
	prefix := func(b []byte) []byte {
		if w.format == FormatFioV3 {
			b = append(b, us...)
			b = append(b, ' ')
		}
		return append(append(b, file...), ' ')
	}
	if !w.files[file] {
		w.files[file] = true
		b = append(prefix(b), "add\n"...)
		b = append(prefix(b), "open\n"...)
	}
	if w.format == FormatFioV2 {
		// fio replays "wait MS" as "not before MS milliseconds after start".
		if ms := int64(op.Time / time.Millisecond); ms > w.waitMS && ms > 0 {
			w.waitMS = ms
			b = append(prefix(b), "wait "...)
			b = strconv.AppendInt(b, ms, 10)
			b = append(b, " 0\n"...)
		}
	}
	b = prefix(b)
	off, size := op.Offset, int64(op.Size)
	switch op.Type {
	case workload.OpRead:
		b = append(b, "read "...)
	case workload.OpWrite:
		b = append(b, "write "...)
	case workload.OpTrim:
		b = append(b, "trim "...)
	default:
		b = append(b, "sync "...)
		off, size = 0, 0
	}
	b = strconv.AppendInt(b, off, 10)
	b = append(b, ' ')
	return strconv.AppendInt(b, size, 10)
}

func (w *Writer) appendBlkparse(b []byte, op Op) []byte {
	dev := op.File
	if !isDevice([]byte(dev)) {
		dev = "8,0"
	}
	w.seq++
	b = append(b, dev...)
	b = append(b, "  0 "...)
	b = strconv.AppendInt(b, w.seq, 10)
	b = append(b, ' ')
	b = appendSeconds(b, op.Time)
	b = append(b, " 0  Q "...)
	switch op.Type {
	case workload.OpRead:
		b = append(b, 'R', ' ')
	case workload.OpWrite:
		b = append(b, 'W', ' ')
	case workload.OpTrim:
		b = append(b, 'D', ' ')
	default:
		return append(b, "FN [idlewatt]"...)
	}
	sec := op.Offset / sectorSize
	cnt := (op.End()+sectorSize-1)/sectorSize - sec
	b = strconv.AppendInt(b, sec, 10)
	b = append(b, " + "...)
	b = strconv.AppendInt(b, cnt, 10)
	return append(b, " [idlewatt]"...)
}

// Close flushes buffered output (and writes the header of an empty trace).
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	w.header()
	return w.w.Flush()
}

func appendSeconds(b []byte, d time.Duration) []byte {
	if d < 0 {
		d = 0
	}
	b = strconv.AppendInt(b, int64(d/time.Second), 10)
	b = append(b, '.')
	ns := int64(d % time.Second)
	var digits [9]byte
	for i := 8; i >= 0; i-- {
		digits[i] = byte('0' + ns%10)
		ns /= 10
	}
	return append(b, digits[:]...)
}

func blankless(s string) string {
	if strings.ContainsAny(s, " \t\n\r") {
		return strings.Map(func(r rune) rune {
			if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
				return '_'
			}
			return r
		}, s)
	}
	return s
}

// Copy writes every op of r to w (redirected to file when file != ""),
// returning how many ops were written: ops the format cannot carry are not
// among them (w.Skipped counts those, w.SkippedNote says why).
func Copy(w *Writer, r Reader, redirect string) (int64, error) {
	n0 := w.Written()
	for {
		op, err := r.Next()
		if err == io.EOF {
			return w.Written() - n0, nil
		}
		if err != nil {
			return w.Written() - n0, err
		}
		if redirect != "" {
			op.File = redirect
		}
		if err := w.Write(op); err != nil {
			return w.Written() - n0, err
		}
	}
}
