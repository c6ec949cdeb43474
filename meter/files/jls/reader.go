package jls

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"strings"
	"time"
)

var le = binary.LittleEndian

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrMalformed: the bytes are not a JLS v2 file, or not one this reader
// can trust; every error matching it is an *Error with the byte offset.
var ErrMalformed = errors.New("malformed JLS file")

// Error says what is wrong at which byte offset.
type Error struct {
	Offset int64
	Reason string
	// Cut: the file ends before the chunk does (a writer that did not
	// finish, a copy cut short), rather than bytes that are wrong.
	Cut bool
}

func (e *Error) Error() string { return fmt.Sprintf("byte %d: %s", e.Offset, e.Reason) }

// Is makes errors.Is(err, ErrMalformed) true.
func (e *Error) Is(target error) bool { return target == ErrMalformed }

func errAt(off int64, format string, args ...any) error {
	return &Error{Offset: off, Reason: fmt.Sprintf(format, args...)}
}

// Identification is the file's first 16 bytes (jls/format.h).
var Identification = [16]byte{0x6a, 0x6c, 0x73, 0x66, 0x6d, 0x74, 0x0d, 0x0a, 0x20, 0x0a, 0x20, 0x1a, 0x20, 0x20, 0xb2, 0x1c}

// Sizes and bounds of the format.
const (
	fileHeaderLen  = 32
	chunkHeaderLen = 32
	// MaxPayload bounds one chunk's payload: the upstream writer's largest
	// chunks are a data chunk (samples_per_data × 8 bytes, 64 KiB with its
	// defaults) and a summary chunk (entries_per_summary × 32 bytes); 16 MiB
	// is far above both and keeps a forged length from costing memory.
	MaxPayload = 16 << 20
	// maxSamplesPerData bounds samples_per_data (and so a data chunk, or
	// the constant chunk an omitted entry stands for): the library's
	// largest default is 65 536; 1 Mi keeps a forged definition from
	// turning a few bytes into billions of samples.
	maxSamplesPerData = 1 << 20
	levels            = 16
)

// Tags (jls/format.h jls_tag_e).
const (
	tagSourceDef = 0x01
	tagSignalDef = 0x02
	tagUserData  = 0x40
	tagEnd       = 0xff

	trackFSR  = 0
	trackVSR  = 1
	trackAnno = 2
	trackUTC  = 3

	chunkDef     = 0
	chunkHead    = 1
	chunkData    = 2
	chunkIndex   = 3
	chunkSummary = 4
)

func trackTag(track, chunk byte) byte { return 0x20 | track<<3 | chunk }

// Data types (jls/format.h JLS_DATATYPE_*): base type in bits 0–3, size in
// bits 8–15, fixed-point q in bits 16–23.
const (
	baseInt   = 0x01
	baseUint  = 0x03
	baseFloat = 0x04
)

// Source is a SOURCE_DEF: the instrument that produced signals.
type Source struct {
	ID                                   uint16
	Name, Vendor, Model, Version, Serial string
}

// Signal is a SIGNAL_DEF with the head offsets of its tracks.
type Signal struct {
	ID, SourceID      uint16
	FSR               bool // fixed sample rate (else variable: not read here)
	DataType          uint32
	SampleRate        uint32
	SamplesPerData    uint32
	SampleDecimate    uint32 // samples per level-1 summary entry
	EntriesPerSummary uint32
	SummaryDecimate   uint32 // entries per entry of the level above, from level 2
	Name, Units       string
	Offset            int64 // of the SIGNAL_DEF chunk
	fsrHead           [levels]int64
	utcHead           [levels]int64
}

// Bits is the size of one sample.
func (s *Signal) Bits() int { return int(s.DataType >> 8 & 0xff) }

func (s *Signal) base() uint32 { return s.DataType & 0x0f }

// Float reports a float32 or float64 signal.
func (s *Signal) Float() bool { return s.base() == baseFloat }

// Type names the data type as upstream does: f32, u1, i16 …
func (s *Signal) Type() string {
	b := map[uint32]string{baseInt: "i", baseUint: "u", baseFloat: "f"}[s.base()]
	t := fmt.Sprintf("%s%d", b, s.Bits())
	if q := s.DataType >> 16 & 0xff; q != 0 {
		t += fmt.Sprintf("q%d", q)
	}
	return t
}

// Reader reads a JLS v2 file through an io.ReaderAt: chunks are read where
// the file's links and indices say they are, one at a time, so memory is
// bounded by the largest chunk whatever the file's size.
type Reader struct {
	r       io.ReaderAt
	size    int64
	Version [3]int // format major, minor, patch
	// Length is the header's file length: 0 if the writer did not close
	// the file.
	Length  uint64
	Sources []Source
	Signals []*Signal
	hdr     [chunkHeaderLen]byte
}

// chunk is a chunk header.
type chunk struct {
	off         int64
	next, prev  int64
	tag         byte
	meta        uint16
	length      uint32
	payloadDisk int64 // payload + padding + CRC on disk
}

func (c *chunk) end() int64 { return c.off + chunkHeaderLen + c.payloadDisk }

// Open reads the file header and the source and signal definitions.
func Open(r io.ReaderAt, size int64) (*Reader, error) {
	rd := &Reader{r: r, size: size}
	var h [fileHeaderLen]byte
	if n, err := r.ReadAt(h[:], 0); n < fileHeaderLen {
		if err == nil || err == io.EOF {
			return nil, errAt(int64(n), "file is %d bytes, shorter than the 32-byte JLS header", n)
		}
		return nil, err
	}
	if [16]byte(h[:16]) != Identification {
		return nil, errAt(0, "not a JLS v2 file (identification % x)", h[:16])
	}
	if crc := crc32.Checksum(h[:28], castagnoli); crc != le.Uint32(h[28:]) {
		return nil, errAt(28, "file header CRC 0x%08x, computed 0x%08x", le.Uint32(h[28:]), crc)
	}
	v := le.Uint32(h[24:])
	rd.Version = [3]int{int(v >> 24), int(v >> 16 & 0xff), int(v & 0xffff)}
	if rd.Version[0] != 1 {
		return nil, errAt(24, "JLS format version %d.%d.%d: this reader reads 1.x (JLS v2 files)", rd.Version[0], rd.Version[1], rd.Version[2])
	}
	rd.Length = le.Uint64(h[16:])
	if err := rd.definitions(); err != nil {
		return nil, err
	}
	return rd, nil
}

// header reads and checks the chunk header at off.
func (rd *Reader) header(off int64) (chunk, error) {
	if off+chunkHeaderLen > rd.size && off >= fileHeaderLen && off%8 == 0 {
		return chunk{}, &Error{Offset: rd.size, Reason: fmt.Sprintf("the file ends here, before the chunk at byte %d", off), Cut: true}
	}
	if off < fileHeaderLen || off%8 != 0 {
		return chunk{}, errAt(off, "no chunk can start here")
	}
	b := rd.hdr[:]
	if _, err := rd.r.ReadAt(b, off); err != nil {
		return chunk{}, errAt(off, "reading a chunk header: %v", err)
	}
	if crc := crc32.Checksum(b[:28], castagnoli); crc != le.Uint32(b[28:]) {
		return chunk{}, errAt(off, "chunk header CRC 0x%08x, computed 0x%08x", le.Uint32(b[28:]), crc)
	}
	c := chunk{off: off, next: int64(le.Uint64(b[0:])), prev: int64(le.Uint64(b[8:])), tag: b[16],
		meta: le.Uint16(b[18:]), length: le.Uint32(b[20:])}
	if c.length > MaxPayload {
		return chunk{}, errAt(off+20, "payload length %d is over the %d this reader accepts", c.length, MaxPayload)
	}
	if c.length > 0 {
		pad := (8 - (int64(c.length)+4)%8) % 8
		c.payloadDisk = int64(c.length) + pad + 4
	}
	if c.end() > rd.size {
		return chunk{}, &Error{Offset: off, Reason: fmt.Sprintf("chunk of %d payload bytes runs past the end of the file (%d bytes): cut short", c.length, rd.size), Cut: true}
	}
	return c, nil
}

// payload reads the chunk's payload into buf (grown as needed) and checks
// its CRC.
func (rd *Reader) payload(c chunk, buf []byte) ([]byte, error) {
	if c.length == 0 {
		return buf[:0], nil
	}
	n := int(c.payloadDisk)
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := rd.r.ReadAt(buf, c.off+chunkHeaderLen); err != nil {
		return nil, errAt(c.off, "reading a payload: %v", err)
	}
	want := le.Uint32(buf[n-4:])
	p := buf[:c.length]
	if crc := crc32.Checksum(p, castagnoli); crc != want {
		return nil, errAt(c.off+chunkHeaderLen, "payload CRC 0x%08x, computed 0x%08x", want, crc)
	}
	return p, nil
}

// definitions finds the first SOURCE_DEF and SIGNAL_DEF chunks near the
// start of the file (the writer puts its own source 0 and signal 0 there)
// and walks their lists, as the upstream reader does.
func (rd *Reader) definitions() error {
	firstSource, firstSignal, err := rd.firstDefinitions()
	if err != nil {
		return err
	}
	buf, err := rd.sources(firstSource, nil)
	if err != nil {
		return err
	}
	if err := rd.signals(firstSignal, buf); err != nil {
		return err
	}
	for _, s := range rd.Signals {
		if !rd.hasSource(s.SourceID) {
			return errAt(s.Offset, "signal %d (%s) names source %d, which is not defined", s.ID, s.Name, s.SourceID)
		}
	}
	return nil
}

// firstDefinitions finds the offsets of the first SOURCE_DEF and
// SIGNAL_DEF chunks among the first 16.
func (rd *Reader) firstDefinitions() (firstSource, firstSignal int64, err error) {
	off := int64(fileHeaderLen)
	for i := 0; i < 16 && (firstSource == 0 || firstSignal == 0); i++ {
		c, err := rd.header(off)
		if err != nil {
			return 0, 0, err
		}
		switch c.tag {
		case tagSourceDef:
			if firstSource == 0 {
				firstSource = off
			}
		case tagSignalDef:
			if firstSignal == 0 {
				firstSignal = off
			}
		}
		off = c.end()
	}
	if firstSource == 0 || firstSignal == 0 {
		return 0, 0, errAt(fileHeaderLen, "no source and signal definitions at the start of the file")
	}
	return firstSource, firstSignal, nil
}

// sources walks the source list from off into rd.Sources; buf is a
// payload buffer to reuse, returned for the next list.
func (rd *Reader) sources(off int64, buf []byte) ([]byte, error) {
	for n := 0; off != 0; n++ {
		if n > 256 {
			return buf, errAt(off, "more than 256 source definitions")
		}
		c, err := rd.header(off)
		if err != nil {
			return buf, err
		}
		if c.tag != tagSourceDef {
			return buf, errAt(off, "chunk of tag 0x%02x in the source list", c.tag)
		}
		if buf, err = rd.payload(c, buf); err != nil {
			return buf, err
		}
		s, err := parseSource(c, buf)
		if err != nil {
			return buf, err
		}
		rd.Sources = append(rd.Sources, s)
		if off, err = forward(c); err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// signals walks the signal list from off into rd.Signals, with the track
// heads it holds.
func (rd *Reader) signals(off int64, buf []byte) error {
	byID := map[uint16]*Signal{}
	for n := 0; off != 0; n++ {
		if n > 256*8 {
			return errAt(off, "more than %d chunks in the signal list", 256*8)
		}
		c, err := rd.header(off)
		if err != nil {
			return err
		}
		if buf, err = rd.payload(c, buf); err != nil {
			return err
		}
		switch {
		case c.tag == tagSignalDef:
			s, err := parseSignal(c, buf)
			if err != nil {
				return err
			}
			if byID[s.ID] != nil {
				return errAt(off, "signal %d defined twice", s.ID)
			}
			byID[s.ID] = s
			rd.Signals = append(rd.Signals, s)
		case c.tag&0xe7 == 0x20|chunkHead: // a TRACK_*_HEAD
			if err := trackHead(off, c, buf, byID); err != nil {
				return err
			}
		case c.tag&0xe7 == 0x20|chunkDef: // TRACK_*_DEF: empty
		default:
			return errAt(off, "chunk of tag 0x%02x in the signal list", c.tag)
		}
		if off, err = forward(c); err != nil {
			return err
		}
	}
	return nil
}

// trackHead takes a TRACK_*_HEAD chunk c (at off, payload buf): the first
// chunk of each summary level of its signal's FSR or UTC track.
func trackHead(off int64, c chunk, buf []byte, byID map[uint16]*Signal) error {
	id := c.meta & 0x0fff
	s := byID[id]
	if s == nil {
		return errAt(off, "track head of signal %d before its definition", id)
	}
	if len(buf) != levels*8 {
		return errAt(off, "track head payload is %d bytes, want %d", len(buf), levels*8)
	}
	var h [levels]int64
	for k := range h {
		h[k] = int64(le.Uint64(buf[8*k:]))
	}
	switch c.tag >> 3 & 3 {
	case trackFSR:
		s.fsrHead = h
	case trackUTC:
		s.utcHead = h
	}
	return nil
}

func (rd *Reader) hasSource(id uint16) bool {
	for _, s := range rd.Sources {
		if s.ID == id {
			return true
		}
	}
	return false
}

// Source returns the source of id.
func (rd *Reader) Source(id uint16) (Source, bool) {
	for _, s := range rd.Sources {
		if s.ID == id {
			return s, true
		}
	}
	return Source{}, false
}

// forward is the next item of c's list: links only go forward (the writer
// appends), so a link back is damage and a walk always ends.
func forward(c chunk) (int64, error) {
	if c.next != 0 && c.next <= c.off {
		return 0, errAt(c.off, "link to byte %d goes backwards", c.next)
	}
	return c.next, nil
}

// str reads a string as the writer stores it: bytes, NUL, 0x1F.
func str(b []byte, at int, off int64) (string, int, error) {
	i := at
	for i+1 < len(b) && !(b[i] == 0 && b[i+1] == 0x1f) {
		i++
	}
	if i+1 >= len(b) {
		return "", 0, errAt(off+int64(at), "string without its NUL, 0x1F end")
	}
	return string(b[at:i]), i + 2, nil
}

func parseSource(c chunk, p []byte) (Source, error) {
	s := Source{ID: c.meta}
	base := c.off + chunkHeaderLen
	if len(p) < 64 {
		return s, errAt(base, "source definition of %d bytes", len(p))
	}
	at := 64
	var err error
	for _, dst := range []*string{&s.Name, &s.Vendor, &s.Model, &s.Version, &s.Serial} {
		if *dst, at, err = str(p, at, base); err != nil {
			return s, err
		}
	}
	return s, nil
}

func parseSignal(c chunk, p []byte) (*Signal, error) {
	base := c.off + chunkHeaderLen
	if len(p) < 128 {
		return nil, errAt(base, "signal definition of %d bytes, want at least 128", len(p))
	}
	s := &Signal{ID: c.meta, Offset: c.off, SourceID: le.Uint16(p[0:]), FSR: p[2] == 0,
		DataType: le.Uint32(p[4:]), SampleRate: le.Uint32(p[8:]), SamplesPerData: le.Uint32(p[12:]),
		SampleDecimate: le.Uint32(p[16:]), EntriesPerSummary: le.Uint32(p[20:]), SummaryDecimate: le.Uint32(p[24:])}
	if p[2] > 1 {
		return nil, errAt(base+2, "signal %d: signal type %d (0 fixed rate, 1 variable)", s.ID, p[2])
	}
	at := 36 + 92 // the fields above, then 92 reserved bytes
	var err error
	if s.Name, at, err = str(p, at, base); err != nil {
		return nil, err
	}
	if s.Units, _, err = str(p, at, base); err != nil {
		return nil, err
	}
	if s.ID == 0 || !s.FSR {
		return s, nil // signal 0 is the writer's own (annotations); VSR is not read
	}
	bits := s.Bits()
	switch {
	case s.base() == baseFloat && (bits == 32 || bits == 64):
	case (s.base() == baseInt || s.base() == baseUint) && (bits == 1 && s.base() == baseUint || bits == 4 || bits == 8 || bits == 16 || bits == 24 || bits == 32 || bits == 64):
	default:
		return nil, errAt(base+4, "signal %d (%s): data type 0x%08x is not one JLS defines", s.ID, s.Name, s.DataType)
	}
	switch {
	case s.SampleRate == 0:
		return nil, errAt(base+8, "signal %d (%s): fixed-rate signal with sample rate 0", s.ID, s.Name)
	case s.SamplesPerData == 0 || s.SamplesPerData > maxSamplesPerData:
		return nil, errAt(base+12, "signal %d (%s): samples_per_data %d is outside 1 … %d", s.ID, s.Name, s.SamplesPerData, maxSamplesPerData)
	case s.SampleDecimate == 0 || s.SamplesPerData%s.SampleDecimate != 0:
		return nil, errAt(base+16, "signal %d (%s): sample_decimate_factor %d does not divide samples_per_data %d", s.ID, s.Name, s.SampleDecimate, s.SamplesPerData)
	case s.SummaryDecimate < 2:
		return nil, errAt(base+24, "signal %d (%s): summary_decimate_factor %d", s.ID, s.Name, s.SummaryDecimate)
	}
	return s, nil
}

// Epoch is time64's zero, 2018-01-01T00:00:00Z; one second is 2^30.
var Epoch = time.Date(2018, 1, 1, 0, 0, 0, 0, time.UTC)

// Time64 converts a JLS time64 value to a time.
func Time64(t int64) time.Time {
	sec := t >> 30
	frac := t & (1<<30 - 1)
	return Epoch.Add(time.Duration(sec)*time.Second + time.Duration(math.Round(float64(frac)*1e9/(1<<30))))
}

// UTC returns the first entry of s's UTC track: the sample id and the
// wall-clock time it was taken at.
func (rd *Reader) UTC(s *Signal) (int64, time.Time, bool, error) {
	off := s.utcHead[0]
	if off == 0 {
		return 0, time.Time{}, false, nil
	}
	c, err := rd.header(off)
	if err != nil {
		return 0, time.Time{}, false, err
	}
	if c.tag != trackTag(trackUTC, chunkData) || c.meta&0xff != s.ID&0xff {
		return 0, time.Time{}, false, errAt(off, "the UTC track of signal %d points at a chunk of tag 0x%02x", s.ID, c.tag)
	}
	p, err := rd.payload(c, nil)
	if err != nil {
		return 0, time.Time{}, false, err
	}
	if len(p) < 24 {
		return 0, time.Time{}, false, errAt(off, "UTC entry of %d bytes", len(p))
	}
	return int64(le.Uint64(p)), Time64(int64(le.Uint64(p[16:]))), true, nil
}

// Signal returns the signal of source src named name (case-insensitive).
func (rd *Reader) Signal(src uint16, name string) *Signal {
	for _, s := range rd.Signals {
		if s.SourceID == src && s.ID != 0 && strings.EqualFold(s.Name, name) {
			return s
		}
	}
	return nil
}
