package capture

import (
	"fmt"
	"strings"
)

// GapDamaged is the reason of the gaps a Reader makes up for samples lost
// with a damaged stretch of the file (media damage, not the meter or link).
const GapDamaged = "damaged"

// Reject says why a Reader did not deliver a samples chunk (or part of one)
// as samples: its indices are already covered on that channel's timeline.
type Reject uint8

// Rejection reasons, by how a chunk's first index relates to the end of
// what the channel already delivered.
const (
	// RejectOverlap: the chunk starts inside what was delivered and runs past
	// it; its first part is rejected, the rest delivered.
	RejectOverlap Reject = 1
	// RejectBackward: the whole chunk lies behind what was delivered.
	RejectBackward Reject = 2
	// RejectRestart: the channel's index started over at 0 (a meter restart,
	// a second stream recorded into the file); this chunk and every later one
	// of the channel belong to another run of the meter's clock.
	RejectRestart Reject = 3
	numRejects           = 4
)

func (r Reject) String() string {
	switch r {
	case RejectOverlap:
		return "overlap"
	case RejectBackward:
		return "backward"
	case RejectRestart:
		return "restart"
	}
	return "unknown"
}

// Damage is a stretch of a capture the Reader could not read and skipped to
// resynchronise on the next intact chunk.
type Damage struct {
	Offset int64  // first byte skipped (where the damaged chunk begins)
	End    int64  // first byte after the skipped stretch (the next intact chunk, or the file's end)
	Chunk  uint64 // sequence number the first lost chunk should have had
	// Chunks is how many chunks were lost: the next intact chunk's sequence
	// number − Chunk. Unknown (0) when nothing intact follows (Tail).
	Chunks uint64
	Reason string // what was wrong at Offset, e.g. "CRC-32C 0x…, computed 0x…"
	// Samples is the number of channel samples lost, as far as the next
	// samples chunk of each channel tells (its index minus the channel's
	// expected index); a channel with no later chunk adds nothing here.
	Samples uint64
	// Tail: no intact chunk follows; the damage runs to the end of the file.
	Tail bool
}

// Rejected counts samples chunks (or parts) rejected for one reason.
type Rejected struct {
	Chunks  uint64
	Samples uint64 // channel samples
}

// Trailing describes bytes after the end chunk.
type Trailing struct {
	Offset int64 // where they begin (the end chunk's end)
	Bytes  int64
	// Capture: they begin with the capture file magic — another capture
	// was appended to this one.
	Capture bool
}

// Account is what a Reader found wrong with a capture's bytes and indices:
// damaged stretches it skipped, samples it did not place, bytes after the
// end. Every command that reads a capture reports it the same way (Notes).
type Account struct {
	Damage        []Damage // the first maxDamage stretches
	DamageRegions int      // all of them
	DamagedBytes  int64
	ChunksLost    uint64
	SamplesLost   uint64 // channel samples lost to damage, as far as later indices tell (sum of the "damaged" gaps)
	// Invalid counts chunks whose CRC matched but whose payload was
	// impossible (a channel the header lacks, a length that does not fit
	// the count); they were skipped, and are among DamageRegions.
	Invalid  int
	Rejected [numRejects]Rejected // by Reject
	// Corrected lists the byte offsets of single flipped bits the Reader
	// mended from a chunk's CRC (the chunk then read as intact).
	Corrected []int64
	Trailing  Trailing
	// Read is the number of channel samples in intact samples chunks,
	// delivered or rejected. Written is the end chunk's count (when the
	// end chunk was read), so Written − Read is exact.
	Read, Written uint64
	EndSeen       bool
	// Mismatched lists the first summary chunks whose numbers disagree
	// with the samples beside them (a Reader that decodes samples checks
	// them; verify.go); Mismatches counts them all. They were not handed
	// out: the samples win.
	Mismatched []SummaryMismatch
	Mismatches int
}

// maxDamage bounds the stretches an Account lists; the totals count all.
const maxDamage = 64

// Unaccounted returns the channel samples the end chunk says were written
// but no intact chunk holds, and whether that is known (the end chunk was
// read and says at least as many as were read).
func (a *Account) Unaccounted() (uint64, bool) {
	if !a.EndSeen || a.Written < a.Read {
		return 0, false
	}
	return a.Written - a.Read, true
}

// Clean reports whether nothing was skipped, rejected or left over.
func (a *Account) Clean() bool {
	if a.DamageRegions > 0 || a.Trailing.Bytes > 0 || len(a.Corrected) > 0 {
		return false
	}
	for _, r := range a.Rejected {
		if r.Chunks > 0 {
			return false
		}
	}
	if n, ok := a.Unaccounted(); ok && n > 0 {
		return false
	}
	if a.Mismatches > 0 {
		return false
	}
	return !a.EndSeen || a.Written == a.Read
}

// Notes says in sentences what the account holds; empty for a clean
// capture. report.json's notes, the terminal, plot and export all print
// these same lines.
func (a *Account) Notes() []string {
	var out []string
	if a.DamageRegions > 0 {
		var where []string
		for i, d := range a.Damage {
			if i == 4 {
				where = append(where, fmt.Sprintf("… %d more", a.DamageRegions-4))
				break
			}
			s := fmt.Sprintf("bytes %d–%d (chunk %d", d.Offset, d.End, d.Chunk)
			switch {
			case d.Tail:
				s += " to the end of the file"
			case d.Chunks > 1:
				s += fmt.Sprintf("–%d", d.Chunk+d.Chunks-1)
			}
			s += ": " + d.Reason + ")"
			where = append(where, s)
		}
		lost := fmt.Sprintf("%d channel samples lost as far as later sample indices tell", a.SamplesLost)
		if n, ok := a.Unaccounted(); ok {
			lost = fmt.Sprintf("%d channel samples lost (exact: the end chunk says %d were written, %d were read)", n, a.Written, a.Read)
		}
		out = append(out, fmt.Sprintf("capture damaged (media damage, not an unclean stop): %d stretch(es), %d bytes, %d chunks skipped; %s; the holes are gaps with reason %q and everything else is reported — %s",
			a.DamageRegions, a.DamagedBytes, a.ChunksLost, lost, GapDamaged, strings.Join(where, "; ")))
	} else if n, ok := a.Unaccounted(); ok && n > 0 {
		out = append(out, fmt.Sprintf("capture inconsistent: the end chunk says %d channel samples were written, %d were read", a.Written, a.Read))
	} else if a.EndSeen && a.Written < a.Read {
		out = append(out, fmt.Sprintf("capture inconsistent: the end chunk says %d channel samples were written, %d were read", a.Written, a.Read))
	}
	if n := len(a.Corrected); n > 0 {
		at := fmt.Sprint(a.Corrected[:min(n, 8)])
		out = append(out, fmt.Sprintf("capture damaged but mended: %d chunk(s) had one flipped bit, corrected from their CRC-32C (bytes %s); nothing was lost", n, at[1:len(at)-1]))
	}
	for r := Reject(1); r < numRejects; r++ {
		x := a.Rejected[r]
		if x.Chunks == 0 {
			continue
		}
		var why string
		switch r {
		case RejectOverlap:
			why = "start inside sample indices the channel already has"
		case RejectBackward:
			why = "run backwards, wholly behind sample indices the channel already has"
		case RejectRestart:
			why = "come after the channel's sample index restarted at 0 (a meter restart or a second stream in one file)"
		}
		out = append(out, fmt.Sprintf("%d channel samples in %d samples chunk(s) (%s) %s: not placed on the timeline, not in any figure; the meter's clock cannot say when they were taken", x.Samples, x.Chunks, r, why))
	}
	if a.Mismatches > 0 {
		out = append(out, mismatchNote(a.Mismatched, a.Mismatches))
	}
	if t := a.Trailing; t.Bytes > 0 {
		what := "bytes"
		if t.Capture {
			what = "bytes that begin another capture (a second capture appended to this file)"
		}
		s := fmt.Sprintf("%d %s follow the end chunk at byte %d: not read", t.Bytes, what, t.Offset)
		if t.Capture {
			s += fmt.Sprintf(" (it reads on its own from there: tail -c +%d FILE > second.iwcap)", t.Offset+1)
		}
		out = append(out, s)
	}
	return out
}
