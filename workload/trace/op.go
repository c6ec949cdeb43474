package trace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/idlewatt/idlewatt/workload"
)

// Op is one I/O request of a trace.
type Op struct {
	Time   time.Duration // since the start of the trace
	Type   workload.Op   // read, write, flush or trim
	Offset int64         // bytes; 0 for flush
	Size   int32         // bytes; 0 for flush
	File   string        // file or device the trace named; "" if none
}

// End is the byte just past the op.
func (o Op) End() int64 { return o.Offset + int64(o.Size) }

// Reader yields the ops of a trace in order. Next returns io.EOF after the
// last op, and any other error exactly once per failing line.
type Reader interface {
	Next() (Op, error)
}

// ReadCloser is a Reader over a file.
type ReadCloser interface {
	Reader
	io.Closer
}

// ErrSyntax is wrapped by every *ParseError.
var ErrSyntax = errors.New("trace syntax error")

// ErrUnknownFormat is returned by Detect when no reader recognises the input.
var ErrUnknownFormat = errors.New("unknown trace format")

// ParseError says where a trace is malformed and what was expected there.
type ParseError struct {
	File string // name given to the reader
	Line int    // 1-based
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Unwrap makes errors.Is(err, ErrSyntax) hold.
func (e *ParseError) Unwrap() error { return ErrSyntax }

// maxLine bounds one line; longer lines are an error rather than a way to
// make a reader buffer without bound.
const maxLine = 64 << 10

// lines reads a text file one line at a time, counting lines. The slice
// returned by next is owned by lines and valid until the following call.
type lines struct {
	r    *bufio.Reader
	name string
	n    int
}

func newLines(r io.Reader, name string) *lines {
	if br, ok := r.(*bufio.Reader); ok && br.Size() >= maxLine {
		return &lines{r: br, name: name}
	}
	return &lines{r: bufio.NewReaderSize(r, maxLine), name: name}
}

// next returns the next line without its line ending, trimmed of
// surrounding blanks, or io.EOF.
func (l *lines) next() ([]byte, error) {
	b, err := l.r.ReadSlice('\n')
	if len(b) == 0 && err != nil {
		if err == bufio.ErrBufferFull {
			l.n++
			return nil, l.errf("line longer than %d bytes", maxLine)
		}
		return nil, err
	}
	l.n++
	if err == bufio.ErrBufferFull {
		// Skip the rest of the line so a caller that keeps going stays in sync.
		for err == bufio.ErrBufferFull {
			_, err = l.r.ReadSlice('\n')
		}
		return nil, l.errf("line longer than %d bytes", maxLine)
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	return bytes.TrimSpace(b), nil
}

func (l *lines) errf(format string, a ...any) error {
	return &ParseError{File: l.name, Line: l.n, Msg: fmt.Sprintf(format, a...)}
}

// fields splits b on blanks into dst without allocating; it returns how many
// fields there were (possibly more than len(dst), the extra ones dropped).
func fields(b []byte, dst [][]byte) int {
	n := 0
	i := 0
	for i < len(b) {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		if i == len(b) {
			break
		}
		j := i
		for j < len(b) && b[j] != ' ' && b[j] != '\t' {
			j++
		}
		if n < len(dst) {
			dst[n] = b[i:j]
		}
		n++
		i = j
	}
	return n
}

// parseUint parses a decimal unsigned integer that fits in 63 bits.
func parseUint(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, v >= 0
}

// parseSeconds parses "S" or "S.FFFFFFFFF" (at most 9 fractional digits)
// exactly, without going through float64.
func parseSeconds(b []byte) (time.Duration, bool) {
	i := bytes.IndexByte(b, '.')
	ip, fp := b, []byte(nil)
	if i >= 0 {
		ip, fp = b[:i], b[i+1:]
	}
	s, ok := parseUint(ip)
	if !ok || s > int64(1<<63-1)/int64(time.Second)-1 {
		return 0, false
	}
	d := time.Duration(s) * time.Second
	if i >= 0 {
		if len(fp) == 0 || len(fp) > 9 {
			return 0, false
		}
		f, ok := parseUint(fp)
		if !ok {
			return 0, false
		}
		for k := len(fp); k < 9; k++ {
			f *= 10
		}
		d += time.Duration(f)
	}
	return d, true
}

// sizeOK reports whether n fits an Op's Size.
func sizeOK(n int64) bool { return n >= 0 && n <= 1<<31-1 }

// interner avoids a string allocation per line for the few distinct file
// names a trace mentions.
type interner struct {
	last string
}

func (in *interner) get(b []byte) string {
	if string(b) != in.last { // compiles to a comparison, no allocation
		in.last = string(b)
	}
	return in.last
}
