package trace

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/idlewatt/idlewatt/internal/ctxio"
)

// Format names a trace file format.
type Format string

// Formats idlewatt reads and writes.
const (
	FormatNative   Format = "native"
	FormatFioV2    Format = "fio2"
	FormatFioV3    Format = "fio3"
	FormatBlkparse Format = "blkparse"
	FormatMSR      Format = "msr"
)

// Formats lists every format, for help texts.
var Formats = []Format{FormatNative, FormatFioV2, FormatFioV3, FormatBlkparse, FormatMSR}

// ParseFormat accepts a format name (also "fio" for fio2, "csv" for msr).
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(s) {
	case "native", "idlewatt":
		return FormatNative, nil
	case "fio2", "fio", "iolog2", "fio-v2":
		return FormatFioV2, nil
	case "fio3", "iolog3", "fio-v3":
		return FormatFioV3, nil
	case "blkparse", "blktrace":
		return FormatBlkparse, nil
	case "msr", "snia", "csv":
		return FormatMSR, nil
	}
	return "", fmt.Errorf("unknown trace format %q (want one of %v)", s, Formats)
}

// Detect guesses the format of a trace from its first non-blank line. br is
// only peeked at, so it can be handed to NewReader afterwards.
func Detect(br *bufio.Reader) (Format, error) {
	buf, _ := br.Peek(4096)
	for len(buf) > 0 {
		i := bytes.IndexByte(buf, '\n')
		line := buf
		if i >= 0 {
			line, buf = buf[:i], buf[i+1:]
		} else {
			buf = nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		switch {
		case string(line) == NativeHeader:
			return FormatNative, nil
		case string(line) == FioV2Header:
			return FormatFioV2, nil
		case string(line) == FioV3Header:
			return FormatFioV3, nil
		case bytes.EqualFold(line, []byte(MSRHeader)):
			return FormatMSR, nil
		}
		var f [3][]byte
		if splitComma(line, f[:]) == 7 {
			if _, ok := parseUint(f[0]); ok {
				return FormatMSR, nil
			}
		}
		if fields(line, f[:]) >= 3 && isDevice(f[0]) {
			return FormatBlkparse, nil
		}
		break
	}
	return "", ErrUnknownFormat
}

// NewReader returns a reader of format f over r. name is used in errors.
func NewReader(r io.Reader, f Format, name string) (Reader, error) {
	switch f {
	case FormatNative:
		return NewNativeReader(r, name), nil
	case FormatFioV2, FormatFioV3:
		return NewFioReader(r, name), nil
	case FormatBlkparse:
		return NewBlkparseReader(r, name), nil
	case FormatMSR:
		return NewMSRReader(r, name), nil
	}
	return nil, fmt.Errorf("unknown trace format %q", f)
}

// File is an open trace file.
type File struct {
	Reader
	Format Format
	f      io.Closer
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// Open opens a trace file, detecting its format unless format is given ("").
func Open(path string, format Format) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return open(context.Background(), bufio.NewReaderSize(f, maxLine), f, path, format)
}

// OpenCtx is Open of any readable file (a FIFO too) that stops reading
// when ctx is done, with the cause (internal/ctxio).
func OpenCtx(ctx context.Context, path string, format Format) (*File, error) {
	br, c, err := ctxio.OpenBuffered(ctx, path)
	if err != nil {
		return nil, err
	}
	return open(ctx, br, c, path, format)
}

func open(ctx context.Context, br *bufio.Reader, c io.Closer, path string, format Format) (*File, error) {
	var err error
	if format == "" {
		if format, err = Detect(br); err != nil {
			c.Close()
			if ctx.Err() != nil {
				return nil, fmt.Errorf("%s: %w", path, context.Cause(ctx))
			}
			return nil, fmt.Errorf("%s: %w (expected fio iolog v2/v3, blkparse text, MSR CSV or %q)", path, err, NativeHeader)
		}
	}
	r, err := NewReader(br, format, path)
	if err != nil {
		c.Close()
		return nil, err
	}
	return &File{Reader: r, Format: format, f: c}, nil
}

// Stoppable is r stopping when ctx is done (ctxio.Stopped before every op):
// a generator reads no file that a signal could stop.
func Stoppable(ctx context.Context, r Reader) Reader { return stoppable{ctx, r} }

type stoppable struct {
	ctx context.Context
	Reader
}

func (t stoppable) Next() (Op, error) {
	if err := ctxio.Stopped(t.ctx); err != nil {
		return Op{}, err
	}
	return t.Reader.Next()
}
