package conntest

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// Dir is a chunk's direction.
type Dir byte

const (
	// Host is what the driver wrote to the device ('>' in a script file).
	Host Dir = '>'
	// Device is what the device sent the driver ('<').
	Device Dir = '<'
)

// Chunk is a run of bytes in one direction.
type Chunk struct {
	Dir  Dir
	Data []byte
}

// Script is a conversation: chunks in the order they crossed the link,
// consecutive chunks of one direction merged.
type Script []Chunk

func (s Script) add(d Dir, b []byte) Script {
	if len(b) == 0 {
		return s
	}
	if n := len(s); n > 0 && s[n-1].Dir == d {
		s[n-1].Data = append(s[n-1].Data, b...)
		return s
	}
	return append(s, Chunk{Dir: d, Data: append([]byte(nil), b...)})
}

// lineBytes is how many bytes a script file line holds.
const lineBytes = 32

// Marshal is the script as text: one "> hex" or "< hex" line per 32
// bytes, each chunk led by a comment with its printable text when it is
// mostly text (SCPI), so a reviewer can read the conversation.
func (s Script) Marshal() []byte {
	var b bytes.Buffer
	b.WriteString("# conntest script: '>' host to device, '<' device to host, hex; '#' comments\n")
	for _, c := range s {
		if txt, ok := printable(c.Data); ok {
			fmt.Fprintf(&b, "# %c %s\n", c.Dir, txt)
		}
		for i := 0; i < len(c.Data); i += lineBytes {
			fmt.Fprintf(&b, "%c %s\n", c.Dir, hex.EncodeToString(c.Data[i:min(i+lineBytes, len(c.Data))]))
		}
	}
	return b.Bytes()
}

func printable(b []byte) (string, bool) {
	if len(b) > 200 {
		return "", false
	}
	for _, c := range b {
		if (c < 0x20 || c > 0x7e) && c != '\n' && c != '\r' {
			return "", false
		}
	}
	return strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(string(b)), true
}

// maxScript bounds a script file (a fixture, not a capture).
const maxScript = 16 << 20

// Parse reads a script written by Marshal (or by hand): lines "> hex"
// and "< hex", blank lines and '#' comments ignored. An error names the
// line.
func Parse(r io.Reader) (Script, error) {
	var s Script
	sc := bufio.NewScanner(io.LimitReader(r, maxScript+1))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line, total := 0, 0
	for sc.Scan() {
		line++
		total += len(sc.Bytes()) + 1
		if total > maxScript {
			return nil, fmt.Errorf("line %d: script longer than %d bytes", line, maxScript)
		}
		t := strings.TrimSpace(sc.Text())
		if t == "" || t[0] == '#' {
			continue
		}
		d := Dir(t[0])
		if d != Host && d != Device {
			return nil, fmt.Errorf("line %d: starts with %q, want '>' (host) or '<' (device)", line, t[0])
		}
		b, err := hex.DecodeString(strings.Join(strings.Fields(t[1:]), ""))
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		s = s.add(d, b)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %v", line+1, err)
	}
	return s, nil
}

// ReadFile parses the script file at path.
func ReadFile(path string) (Script, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

type deadliner interface{ SetReadDeadline(time.Time) error }

// Recorder passes a driver's traffic through to a live link and keeps it.
type Recorder struct {
	rw io.ReadWriter
	mu sync.Mutex
	s  Script
}

// Record wraps rw.
func Record(rw io.ReadWriter) *Recorder { return &Recorder{rw: rw} }

func (r *Recorder) Read(b []byte) (int, error) {
	n, err := r.rw.Read(b)
	r.mu.Lock()
	r.s = r.s.add(Device, b[:n])
	r.mu.Unlock()
	return n, err
}

func (r *Recorder) Write(b []byte) (int, error) {
	n, err := r.rw.Write(b)
	r.mu.Lock()
	r.s = r.s.add(Host, b[:n])
	r.mu.Unlock()
	return n, err
}

// SetReadDeadline passes on to the link when it has deadlines.
func (r *Recorder) SetReadDeadline(t time.Time) error {
	if d, ok := r.rw.(deadliner); ok {
		return d.SetReadDeadline(t)
	}
	return nil
}

// Close closes the link when it is a Closer.
func (r *Recorder) Close() error {
	if c, ok := r.rw.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Script is what crossed the link so far.
func (r *Recorder) Script() Script {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(Script, len(r.s))
	for i, c := range r.s {
		out[i] = Chunk{c.Dir, append([]byte(nil), c.Data...)}
	}
	return out
}

// ErrClosed is what Read and Write return after Close.
var ErrClosed = errors.New("conntest: link closed")

// segment is a device chunk and how many host bytes precede it.
type segment struct {
	after int
	data  []byte
}

// Playback plays a script to a driver. It is an io.ReadWriteCloser with
// SetReadDeadline (returning os.ErrDeadlineExceeded), like the serial
// ports the drivers are given.
type Playback struct {
	mu       sync.Mutex
	cond     *sync.Cond
	host     []byte
	dev      []segment
	hostPos  int
	seg, off int
	closed   bool
	deadline time.Time
	timer    *time.Timer
	errs     []error
}

// NewPlayback plays s.
func NewPlayback(s Script) *Playback {
	p := &Playback{}
	p.cond = sync.NewCond(&p.mu)
	for _, c := range s {
		switch c.Dir {
		case Host:
			p.host = append(p.host, c.Data...)
		case Device:
			p.dev = append(p.dev, segment{after: len(p.host), data: c.Data})
		}
	}
	return p
}

// Write checks b against the script's next host bytes. The first byte
// that differs, or any byte past the script's end, is an error (kept for
// Verify and returned).
func (p *Playback) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return 0, ErrClosed
	}
	for i, c := range b {
		if p.hostPos >= len(p.host) {
			err := fmt.Errorf("conntest: unexpected write after the script's %d host bytes: % x", len(p.host), b[i:min(len(b), i+16)])
			p.errs = append(p.errs, err)
			return i, err
		}
		if want := p.host[p.hostPos]; c != want {
			err := fmt.Errorf("conntest: host byte %d: wrote %#02x, script has %#02x (wrote % x, script % x)", p.hostPos, c, want,
				b[i:min(len(b), i+16)], p.host[p.hostPos:min(len(p.host), p.hostPos+16)])
			p.errs = append(p.errs, err)
			return i, err
		}
		p.hostPos++
	}
	p.cond.Broadcast()
	return len(b), nil
}

// Read hands out the device's next bytes once the host has written what
// preceded them in the script; until then, and after the script's last
// device byte, it blocks like a quiet line until the read deadline or
// Close.
func (p *Playback) Read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		switch {
		case p.closed:
			return 0, ErrClosed
		case len(b) == 0:
			return 0, nil
		case p.seg < len(p.dev) && p.dev[p.seg].after <= p.hostPos:
			s := p.dev[p.seg]
			n := copy(b, s.data[p.off:])
			if p.off += n; p.off == len(s.data) {
				p.seg, p.off = p.seg+1, 0
			}
			return n, nil
		case !p.deadline.IsZero() && !time.Now().Before(p.deadline):
			return 0, os.ErrDeadlineExceeded
		}
		p.cond.Wait()
	}
}

// SetReadDeadline sets when a blocked Read gives up (zero: never).
func (p *Playback) SetReadDeadline(t time.Time) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.deadline = t
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	if !t.IsZero() {
		p.timer = time.AfterFunc(time.Until(t), func() {
			p.mu.Lock()
			p.cond.Broadcast()
			p.mu.Unlock()
		})
	}
	p.cond.Broadcast()
	return nil
}

// Close ends the link: blocked and later Reads and Writes return
// ErrClosed.
func (p *Playback) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.timer != nil {
		p.timer.Stop()
	}
	p.cond.Broadcast()
	return nil
}

// Verify is nil when the driver wrote exactly the script's host bytes and
// read all its device bytes; otherwise it names the first wrong write and
// what was left over in each direction.
func (p *Playback) Verify() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	errs := append([]error(nil), p.errs...)
	if p.hostPos < len(p.host) {
		errs = append(errs, fmt.Errorf("conntest: the driver wrote %d of the script's %d host bytes; next % x",
			p.hostPos, len(p.host), p.host[p.hostPos:min(len(p.host), p.hostPos+16)]))
	}
	if p.seg < len(p.dev) {
		left := len(p.dev[p.seg].data) - p.off
		for _, s := range p.dev[p.seg+1:] {
			left += len(s.data)
		}
		errs = append(errs, fmt.Errorf("conntest: %d device bytes left unread; next % x", left,
			p.dev[p.seg].data[p.off:min(len(p.dev[p.seg].data), p.off+16)]))
	}
	return errors.Join(errs...)
}
