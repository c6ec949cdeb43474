package capture

import (
	"errors"
	"io"
	"os"
	"slices"
	"sync"
)

// The summary check once per file, not once per pass (issue 31 item 3).
// `idlewatt report` reads a capture's samples three times (hum, levels,
// the metrics' pass), and each pass used to check every summary against the
// samples again: the per-sample statistics of verify.go, a 5 MB ring per
// channel, the same verdicts each time. The readers of one Passes share a
// verifyMemo instead. The first pass that decodes samples from the start
// and reaches the end of what can be read checks the summaries as every
// Reader does and leaves its verdicts in the memo: which summary chunks
// (by offset) disagreed, and the first maxMismatches of them in full. A
// later pass over the same file takes those verdicts and skips the
// statistics, so it hands out the same summaries and keeps the same
// Account.
//
// "The same file" is what os.Stat can tell: the same file (device and
// inode), size and modification time when the verifying pass began, when
// it ended and when the later pass is opened. A capture still being
// written grows, and a file rewritten in place changes its modification
// time; either way the later pass checks the summaries itself, as before.
// A verifying pass that ends early (a signal, an I/O error, a consumer that
// stops reading), skipped samples or used the index leaves nothing.

// memoMaxBad bounds the disagreeing summaries a memo lists (8 bytes each):
// past it the passes check on their own, so memory stays bounded however
// wrong a file's summaries are.
const memoMaxBad = 1 << 16

// verifyMemo is the summary check's verdicts of one complete pass over a
// file, for the passes after it.
type verifyMemo struct {
	mu    sync.Mutex
	done  bool
	fi    os.FileInfo       // the file as the verifying pass found it
	bad   []int64           // offsets of the summary chunks that disagreed, in file order
	first []SummaryMismatch // the first maxMismatches of them
}

// memoMode is what a Reader with a memo does with it, decided at its first
// Next.
type memoMode uint8

const (
	memoUndecided memoMode = iota
	memoWrite              // check the summaries and leave the verdicts
	memoReuse              // take the verdicts of an earlier pass
	memoOff                // neither: a skipping or indexed reader, or an unfinished one
)

// readerMemo is a Reader's side of a verifyMemo.
type readerMemo struct {
	m        *verifyMemo
	fi       os.FileInfo // the file when this Reader was opened
	mode     memoMode
	bad      []int64 // write: verdicts so far; reuse: the memo's
	first    []SummaryMismatch
	overflow bool // write: more than memoMaxBad disagreed
}

// useMemo attaches m to r, a Reader opened by Open, unless the file cannot
// be stat'ed.
func (r *Reader) useMemo(m *verifyMemo) {
	if r.file == nil {
		return
	}
	fi, err := r.file.Stat()
	if err != nil {
		return
	}
	r.memo = readerMemo{m: m, fi: fi}
}

// sameFile says whether a and b describe the same unchanged file.
func sameFile(a, b os.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// decideMemo picks the memo's use at the first Next: only a Reader that
// decodes samples from the start and reads in sequence checks summaries
// as a verifying pass would.
func (r *Reader) decideMemo() {
	rm := &r.memo
	if r.skip || r.ix != nil {
		rm.mode = memoOff
		return
	}
	m := rm.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done && sameFile(m.fi, rm.fi) {
		rm.mode, rm.bad, rm.first = memoReuse, m.bad, m.first
		return
	}
	rm.mode = memoWrite
}

// finishMemo leaves a verifying Reader's verdicts in its memo once Next has
// returned err, the end of what it can read: io.EOF, damage or a chunk it
// cannot read — what the file holds, not an I/O error or a stop.
func (r *Reader) finishMemo(err error) {
	rm := &r.memo
	if rm.mode != memoWrite {
		return
	}
	rm.mode = memoOff
	var de *DamageError
	if !errors.Is(err, io.EOF) && !errors.As(err, &de) && !errors.Is(err, ErrVersion) {
		return
	}
	if rm.overflow || r.skip || r.ix != nil {
		return
	}
	if fi, err := r.file.Stat(); err != nil || !sameFile(rm.fi, fi) {
		return // changed while it was read
	}
	m := rm.m
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done, m.fi, m.bad, m.first = true, rm.fi, rm.bad, slices.Clone(r.acc.Mismatched)
}

// memoVerdict is verified for a Reader that reuses a memo: whether the
// summary chunk at off is handed out, with the Account's mismatch as the
// verifying pass had it.
func (r *Reader) memoVerdict(off int64) bool {
	rm := &r.memo
	j, bad := slices.BinarySearch(rm.bad, off)
	if !bad {
		return true
	}
	if r.acc.Mismatches++; len(r.acc.Mismatched) < maxMismatches && j < len(rm.first) {
		r.acc.Mismatched = append(r.acc.Mismatched, rm.first[j])
	}
	return false
}

// memoBad notes, for a verifying Reader, that the summary chunk at off
// disagreed.
func (r *Reader) memoBad(off int64) {
	rm := &r.memo
	if rm.mode != memoWrite {
		return
	}
	if len(rm.bad) >= memoMaxBad {
		rm.overflow = true
		return
	}
	rm.bad = append(rm.bad, off)
}
