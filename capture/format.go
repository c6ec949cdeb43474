package capture

import (
	"errors"
	"fmt"
	"hash/crc32"
)

// Layout constants. docs/capture-format.md is the normative description;
// these must agree with it byte for byte.
const (
	// VersionMajor changes when an old reader could misread a new file.
	VersionMajor = 2
	// VersionMinor changes when chunks or fields are added that old readers
	// may skip.
	VersionMinor = 1

	preambleLen = 16 // file magic (8) + major (2) + minor (2) + reserved (4)
	chunkHdrLen = 16 // magic (2) + type (1) + flags (1) + length (4) + sequence (8)
	crcLen      = 4

	// MaxPayload bounds a chunk's payload so a corrupt length field cannot
	// make a reader allocate gigabytes. Writers stay far below it.
	MaxPayload = 16 << 20

	// maxRunSamples caps one sample chunk (8 B/sample as float32 → 512 KiB).
	maxRunSamples = MaxChunkSamples
	// maxIOBatch caps the events of one I/O chunk (40 B each → 160 KiB).
	maxIOBatch = 4096
)

// MaxChunkSamples is the most samples a Writer puts in one samples chunk.
// A recording replayed unpaced (record --port FILE) writes every channel's
// chunks at this size, one channel after another, so a reader pairing rails
// must hold at least this many samples of one rail while it waits for the
// other's chunk.
const MaxChunkSamples = 64 << 10

// fileMagic opens every capture. Like PNG's signature, the high byte and the
// CR LF / SUB / LF bytes catch 7-bit and line-ending translation damage.
var fileMagic = [8]byte{0x89, 'I', 'W', 'C', '\r', '\n', 0x1a, '\n'}

// chunkMagic opens every chunk ("IW"); a reader that lost its place can
// hunt for it, and a reader at the wrong offset fails fast.
var chunkMagic = [2]byte{'I', 'W'}

// Chunk types (byte 2 of the chunk header).
const (
	chunkHeader  = 0x01
	chunkSamples = 0x10
	chunkSummary = 0x11
	chunkGap     = 0x20
	chunkMark    = 0x21
	chunkEvent   = 0x22
	chunkStats   = 0x23
	chunkStatsX  = 0x24 // stats with the counters added in 1.1 (meter.Stats in full)
	chunkIO      = 0x30
	chunkState   = 0x31
	chunkEnd     = 0xFF
)

// flagCritical (chunk header byte 3, bit 0): a reader that does not know
// this chunk type must stop rather than skip it.
const flagCritical = 0x01

// Sample encodings (samples payload byte 2).
const (
	encFloat32 = 0 // V then I, float32 each: 8 B/sample
	encInt16   = 1 // V then I as int16 counts of the channel's LSBs: 4 B/sample
)

// Sizes of the fixed-size payloads.
const (
	samplesFixed = 16
	summaryFixed = 24
	gapFixed     = 24
	markLen      = 32
	eventLen     = 32
	statsLen     = 48
	statsXMin    = 88 // host + 10 counters; longer payloads append counters readers skip
	ioFixed      = 8
	ioEventLen   = 40
	stateFixed   = 16
	endLen       = 16
)

// castagnoli is CRC-32C, the polynomial with hardware support on amd64 and
// arm64 (check value 0xE3069283 over "123456789").
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Errors callers branch on.
var (
	// ErrNotCapture: the bytes do not start with the capture file magic.
	ErrNotCapture = errors.New("not an idlewatt capture")
	// ErrVersion: the file's major version (or a critical chunk) is newer
	// than this reader understands.
	ErrVersion = errors.New("unsupported capture version")
	// ErrTruncated: the capture stops early — cut short or damaged. Every
	// record before the reported offset was delivered intact.
	ErrTruncated = errors.New("capture truncated")
	// ErrCorrupt: bytes are present but wrong (CRC mismatch, bad chunk magic,
	// impossible field). Errors matching ErrCorrupt from Next also match
	// ErrTruncated, since the reader stops there.
	ErrCorrupt = errors.New("capture corrupt")
	// ErrDiskFull: the writer ran out of space. Everything flushed before
	// stays readable; the error also matches syscall.ENOSPC.
	ErrDiskFull = errors.New("disk full")
	// ErrClosed: the Writer was used after Close.
	ErrClosed = errors.New("capture writer closed")
)

// DamageError says where a capture stops being readable.
type DamageError struct {
	Offset int64  // byte offset of the first damaged chunk (or of the cut)
	Chunk  uint64 // sequence number the damaged chunk should have had
	Reason string
	// Cut is true when the file simply ends early; false when bytes are
	// present but wrong (then the error also matches ErrCorrupt).
	Cut bool
}

func (e *DamageError) Error() string {
	what := "damaged"
	if e.Cut {
		what = "cut short"
	}
	return fmt.Sprintf("capture %s at byte %d (chunk %d): %s", what, e.Offset, e.Chunk, e.Reason)
}

// Is makes errors.Is(err, ErrTruncated) true for every DamageError and
// errors.Is(err, ErrCorrupt) true for damage that is not a plain cut.
func (e *DamageError) Is(target error) bool {
	return target == ErrTruncated || (target == ErrCorrupt && !e.Cut)
}

// readMajor is the newest format major version this package reads (it reads
// every one from 1 on). Tests lower it to play a reader of an older release.
var readMajor = 2

// VersionError: the file's format major version is one this reader does not
// read. It matches ErrVersion. The message is the version rule users see:
// "capture format 2: this idlewatt reads 1".
type VersionError struct {
	Major, Minor int // the file's
	Reads        int // newest major this reader reads
}

func (e *VersionError) Error() string {
	reads := "1"
	switch {
	case e.Reads == 2:
		reads = "1 and 2"
	case e.Reads > 2:
		reads = fmt.Sprintf("1 to %d", e.Reads)
	}
	return fmt.Sprintf("capture format %d: this idlewatt reads %s (the file is version %d.%d; a newer idlewatt reads it)", e.Major, reads, e.Major, e.Minor)
}

// Is makes errors.Is(err, ErrVersion) true.
func (e *VersionError) Is(target error) bool { return target == ErrVersion }
