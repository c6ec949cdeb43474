package hub

import (
	"bytes"
	"errors"
	"io"
	"os"
	"sync/atomic"

	"github.com/idlewatt/idlewatt/meter"
)

// ErrIdle is returned by Scanner.Next when the underlying Read returned no
// bytes and no error — what go.bug.st/serial and VTIME-style tty reads do on
// a read timeout. It is not a failure: call Next again.
var ErrIdle = errors.New("hub: no data yet")

// Frame is one checked frame. Payload aliases the Scanner's buffer and is
// valid only until the next call to Next: the Scanner owns it.
type Frame struct {
	Type    Type
	Seq     byte
	Payload []byte
	Offset  int64  // stream byte offset of the frame's first start byte
	Number  uint64 // 1-based count of good frames so far, for error messages
}

// Scanner splits a hub byte stream into frames. It resynchronises on the
// start bytes after garbage, a bad length or a bad CRC, skipping one byte at
// a time past the failed start so that a frame beginning inside a damaged
// one is still found, and counts what it skipped.
type Scanner struct {
	r      io.Reader
	buf    []byte
	lo, hi int
	off    int64 // stream offset of buf[0]
	eof    bool
	err    error
	frame  Frame
	hunt   bool // discarding bytes since the last good frame
	stats  meter.Stats
	in     atomic.Uint64 // every byte read, good or not
}

// BytesIn returns the number of bytes read so far. Unlike Stats it may be
// called from any goroutine.
func (s *Scanner) BytesIn() uint64 { return s.in.Load() }

// NewScanner returns a Scanner reading r.
func NewScanner(r io.Reader) *Scanner {
	return &Scanner{r: r, buf: make([]byte, scanBuf)}
}

// scanBuf is the Scanner's buffer: 8 MaxFrames, and Go's largest small
// allocation. A 64 KiB one (a large allocation) cost in-memory streams
// decoded one after another 3–9 % of their decode time
// (BenchmarkDecodeFormats, BenchmarkDecodeVsCRC at 20 iterations; none
// measurable at 300), and made no measurable difference to a file's
// replay; a file is read in twice as many reads.
const scanBuf = 32 << 10

// Stats returns Frames, CRCErrors, Resyncs and BytesDiscarded so far.
func (s *Scanner) Stats() meter.Stats { return s.stats }

// Next returns the next good frame, io.EOF at the end of the stream (an
// incomplete frame there is resynchronised past, its bytes discarded), ErrIdle after an
// empty read, or the reader's error.
func (s *Scanner) Next() (*Frame, error) {
	for {
		if f := s.scan(); f != nil {
			return f, nil
		}
		if s.eof {
			if s.hi > s.lo {
				s.discard(1) // an incomplete frame at the end: look past its start
				continue
			}
			if s.err != nil {
				return nil, s.err
			}
			return nil, io.EOF
		}
		n, err := s.fill()
		if err != nil {
			s.eof, s.err = true, err
			if err == io.EOF {
				s.err = nil
			}
			continue
		}
		if n == 0 {
			return nil, ErrIdle
		}
	}
}

// fill reads more bytes, compacting or growing nothing: the buffer always
// holds at least one MaxFrame after compaction.
func (s *Scanner) fill() (int, error) {
	if s.lo > 0 && (s.hi == len(s.buf) || s.lo >= len(s.buf)/2) {
		copy(s.buf, s.buf[s.lo:s.hi])
		s.off += int64(s.lo)
		s.hi -= s.lo
		s.lo = 0
	}
	n, err := s.r.Read(s.buf[s.hi:])
	if n == 0 && errors.Is(err, os.ErrDeadlineExceeded) {
		err = nil // a read deadline is a timeout, like (0, nil)
	}
	s.hi += n
	s.in.Add(uint64(n))
	if n > 0 {
		return n, nil // keep err (if any) for the next read: the bytes come first
	}
	return 0, err
}

// Pending returns the number of buffered bytes not yet part of a frame.
func (s *Scanner) Pending() int { return s.hi - s.lo }

// Abandon gives up on the incomplete frame at the head of the buffer — a
// link gone quiet mid-frame, or a corrupted length promising bytes that
// will never come on an idle link — by discarding its first byte, so the
// next Next resynchronises on what follows. Call it after a read timeout.
func (s *Scanner) Abandon() {
	if s.hi > s.lo {
		s.discard(1)
	}
}

func (s *Scanner) discard(n int) {
	if !s.hunt {
		s.hunt = true
		s.stats.Resyncs++
	}
	s.stats.BytesDiscarded += uint64(n)
	s.lo += n
}

// scan returns a frame found in buf[lo:hi], or nil when more bytes are needed.
func (s *Scanner) scan() *Frame {
	for {
		b := s.buf[s.lo:s.hi]
		if len(b) < 2 {
			if len(b) == 1 && b[0] != Start0 {
				s.discard(1)
			}
			return nil
		}
		if b[0] != Start0 || b[1] != Start1 {
			i := bytes.IndexByte(b[1:], Start0)
			if i < 0 {
				s.discard(len(b))
				return nil
			}
			s.discard(i + 1)
			continue
		}
		if len(b) < HeaderLen {
			return nil
		}
		n := int(le.Uint16(b[4:]))
		if n > MaxPayload {
			s.discard(1)
			continue
		}
		if len(b) < HeaderLen+n+TrailerLen {
			return nil
		}
		c := crcUpdate(crcInit, b[2:HeaderLen+n])
		if byte(c>>8) != b[HeaderLen+n] || byte(c) != b[HeaderLen+n+1] {
			s.stats.CRCErrors++
			s.discard(1)
			continue
		}
		s.hunt = false
		s.stats.Frames++
		s.frame = Frame{Type: Type(b[2]), Seq: b[3], Payload: b[HeaderLen : HeaderLen+n : HeaderLen+n],
			Offset: s.off + int64(s.lo), Number: s.stats.Frames}
		s.lo += HeaderLen + n + TrailerLen
		return &s.frame
	}
}
