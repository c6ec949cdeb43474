package capture

import "time"

// API summary (writer.go, reader.go hold the implementations):
//
//   func Create(path string, h Header, opt Options) (*Writer, error)
//   func NewWriter(w io.Writer, h Header, opt Options) (*Writer, error)
//   func (w *Writer) Samples(b *meter.Block) error   // meter.Sink
//   func (w *Writer) Gap(g meter.Gap) error          // meter.Sink
//   func (w *Writer) Mark(m meter.MarkEcho) error    // meter.Sink
//   func (w *Writer) Event(e meter.Event) error      // meter.Sink
//   func (w *Writer) IO(evs ...IOEvent) error
//   func (w *Writer) State(e StateEvent) error
//   func (w *Writer) Stats(s meter.Stats) error
//   func (w *Writer) StatsAt(host int64, s meter.Stats) error
//   func (w *Writer) Flush() error                   // write and fsync now
//   func (w *Writer) Close() error                   // writes the end chunk
//   All Writer methods are safe for concurrent use.
//
//   func Open(path string) (*Reader, error)
//   func NewReader(r io.Reader) (*Reader, error)
//   func (r *Reader) Header() Header
//   func (r *Reader) SkipSamples(skip bool)  // summaries-only scans
//   func (r *Reader) UseIndex() error        // seek through the index (format 2.1; index.go)
//   func (r *Reader) UseIndexOf(k IndexKinds) error
//   func (r *Reader) Next() (Record, error) // io.EOF after a clean end chunk;
//                                           // an error wrapping ErrTruncated at a damaged/cut tail
//   func (r *Reader) Complete() bool        // the end chunk was seen
//   func (r *Reader) Account() Account      // damage skipped, samples rejected, trailing bytes
//   func (r *Reader) Close() error

// Options tune a Writer. The zero value gives the defaults.
type Options struct {
	// FlushEvery bounds how long a record waits in memory before it is
	// written: what kill -9 can lose. Default 250 ms.
	FlushEvery time.Duration
	// SyncEvery bounds how long written data waits for fsync: what a power
	// cut can lose. Default 1 s.
	SyncEvery time.Duration
	// SummaryPer is the number of samples per summary point of the finest
	// level. Default 1000 in format 1, 256 in format 2 (whose levels are
	// SummaryPer·16^l, l = 0…3).
	SummaryPer uint32
	// Version is the format major version to write: 2 (the default: counts
	// Rice-coded, summary levels) or 1 (format 1.1, for older readers).
	Version int
	// Overwrite lets Create replace an existing file. Without it Create
	// fails rather than destroy an earlier capture.
	Overwrite bool
	// Inputs are files the command reads (a recorded byte stream given as
	// the meter port, say): Create refuses a path that is one of them.
	Inputs []string
	// IndexEvery is how many bytes of file an index segment covers at most
	// (format 2, docs/capture-format.md §Index): a capture cut short keeps an
	// index of all but its last IndexEvery bytes. Default 4 MiB; negative:
	// no index chunks (a format 2.0 file).
	IndexEvery int64
	// Float32Only disables the compact int16 sample encoding (for tests
	// and for readers that only implement encoding 0).
	Float32Only bool
}

func (o Options) withDefaults() Options {
	if o.FlushEvery <= 0 {
		o.FlushEvery = 250 * time.Millisecond
	}
	if o.SyncEvery <= 0 {
		o.SyncEvery = time.Second
	}
	if o.IndexEvery == 0 {
		o.IndexEvery = indexEvery
	}
	if o.Version == 0 {
		o.Version = VersionMajor
	}
	if o.SummaryPer == 0 {
		o.SummaryPer = 1000
		if o.Version >= 2 {
			o.SummaryPer = 256
		}
	}
	return o
}
