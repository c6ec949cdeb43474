package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// SalvageResult says what Salvage copied.
type SalvageResult struct {
	Records  int    // records written
	Samples  uint64 // channel samples copied
	Rejected uint64 // channel samples left out: their indices were already covered (KindRejected)
	// End is why src stopped before its end chunk (a cut, or damage to the
	// end of the file); nil when the end chunk was read.
	End error
}

// Salvage writes every intact record of src to dst — samples, gaps (with the
// "damaged" gaps src makes up for its holes), marks, events, I/O, host
// states and link statistics (with their original host times) — so dst is a
// clean capture of what src still holds. Summaries are not copied: dst
// computes its own from the samples. Rejected samples are not copied: the
// timeline has no place for them. It does not close dst. The error is dst's
// (or an I/O error reading src); damage in src is not an error. It stops
// with ctx's error (wrapped) when ctx is cancelled, checked every record.
func Salvage(ctx context.Context, dst *Writer, src *Reader) (SalvageResult, error) {
	var res SalvageResult
	// A stats chunk and the stats-extended chunk after it are one moment's
	// counters, read as two records (same host time, same first counters);
	// the second has them all, and StatsAt writes both chunks again from it.
	var stats *Record
	putStats := func() error {
		if stats == nil {
			return nil
		}
		s := stats
		stats = nil
		res.Records++
		return dst.StatsAt(s.Host, s.Stats)
	}
	for {
		if err := context.Cause(ctx); err != nil {
			return res, fmt.Errorf("salvage stopped after %d records: %w", res.Records, err)
		}
		rec, err := src.Next()
		if err == nil && rec.Kind == KindStats {
			if stats != nil && !twin(stats, &rec) {
				err = putStats()
			}
			stats = &rec
			if err != nil {
				return res, err
			}
			continue
		}
		if perr := putStats(); perr != nil {
			return res, perr
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return res, nil
			}
			if errors.Is(err, ErrTruncated) || errors.Is(err, ErrVersion) {
				res.End = err
				return res, nil
			}
			return res, err
		}
		switch rec.Kind {
		case KindSamples:
			if err = dst.Samples(rec.Block); err == nil {
				// One chunk per source chunk: the channels stay interleaved as
				// the source had them, not skewed by a run filling up.
				dst.mu.Lock()
				dst.closeRun(rec.Block.Channel)
				dst.mu.Unlock()
			}
			res.Samples += uint64(len(rec.Block.V))
		case KindRejected:
			res.Rejected += uint64(len(rec.Block.V))
			continue
		case KindGap:
			err = dst.Gap(rec.Gap)
		case KindMark:
			err = dst.Mark(rec.Mark)
		case KindEvent:
			err = dst.Event(rec.Event)
		case KindIO:
			err = dst.IO(rec.IO...)
		case KindState:
			err = dst.State(rec.State)
		default:
			continue
		}
		if err != nil {
			return res, err
		}
		res.Records++
	}
}

// twin reports whether b is the stats-extended chunk written with a.
func twin(a, b *Record) bool {
	x, y := a.Stats, b.Stats
	return a.Host == b.Host && x.Frames == y.Frames && x.CRCErrors == y.CRCErrors && x.Resyncs == y.Resyncs &&
		x.BytesDiscarded == y.BytesDiscarded && x.SamplesLost == y.SamplesLost
}
