package capture

// API CONTRACT — implemented in writer.go / reader.go. The signatures below
// are what other packages code against; keep them.
//
//   type Options struct {
//       FlushEvery time.Duration // write a chunk at least this often (default 250ms)
//       SyncEvery  time.Duration // fsync at least this often (default 1s)
//       SummaryPer uint32        // samples per summary point (default 1000; 0 = default)
//   }
//   func Create(path string, h Header, opt Options) (*Writer, error)
//   func (w *Writer) Samples(b *meter.Block) error   // meter.Sink
//   func (w *Writer) Gap(g meter.Gap) error          // meter.Sink
//   func (w *Writer) Mark(m meter.MarkEcho) error    // meter.Sink
//   func (w *Writer) Event(e meter.Event) error      // meter.Sink
//   func (w *Writer) IO(evs ...IOEvent) error
//   func (w *Writer) State(e StateEvent) error
//   func (w *Writer) Stats(s meter.Stats) error
//   func (w *Writer) Flush() error
//   func (w *Writer) Close() error                   // writes the end chunk
//   All Writer methods are safe for concurrent use.
//
//   func Open(path string) (*Reader, error)
//   func NewReader(r io.Reader) (*Reader, error)
//   func (r *Reader) Header() Header
//   func (r *Reader) Next() (Record, error) // io.EOF after a clean end chunk;
//                                           // an error wrapping ErrTruncated at a damaged/cut tail
//   func (r *Reader) Complete() bool        // the end chunk was seen
//   func (r *Reader) Close() error
//
//   var ErrNotCapture, ErrVersion, ErrTruncated, ErrCorrupt error
