package ppk2

// The sample counter is 6 bits, so the stream itself can only say how many
// samples went missing modulo 64. The syncer keeps the word alignment and
// the sample index:
//
//   - In sequence (counter = expected): the word is sample next.
//   - Out of sequence: up to maxPending words are held. If the old sequence
//     resumes, the held words are kept as samples (the reference app
//     tolerates a few out-of-sequence samples too). If confirmRun held words run
//     in sequence from a new counter, the samples between are a gap of
//     exactly (new − expected) mod 64.
//   - Otherwise the alignment is lost (bytes, not whole words, went
//     missing): the held bytes go back to the input and the syncer hunts,
//     one byte at a time, for lockRun words in sequence. The gap is then the
//     smallest count consistent with both the counter and the bytes skipped.
//
// At the very start the syncer also hunts; bytes before the first lock are
// counted as discarded, not as a gap.

const (
	maxPending = 4
	confirmRun = 3 // held words in sequence that confirm a gap
	lockRun    = 4
)

type rawSink interface {
	sample(idx uint64, w Word)
	gap(start, count uint64)
}

type syncer struct {
	out     rawSink
	locked  bool
	started bool   // a first lock happened; later hunts end in a gap
	next    uint64 // raw index of the next sample
	expect  uint8  // its counter
	pending [maxPending + 1]Word
	npend   int
	carry   []byte // unconsumed input (< 4 bytes when locked)
	skipped uint64 // bytes skipped while hunting since the last sample

	frames, resyncs, discarded, lost, tolerated uint64
}

// feed consumes p. It keeps no reference to p.
func (s *syncer) feed(p []byte) {
	if len(s.carry) == 0 {
		s.consume(p)
		return
	}
	if s.locked {
		// Complete the split word, then decode the bulk of p in place.
		need := min(4-len(s.carry), len(p))
		s.carry = append(s.carry, p[:need]...)
		p = p[need:]
		if len(s.carry) < 4 {
			return
		}
		var w [4]byte
		copy(w[:], s.carry)
		s.carry = s.carry[:0]
		s.consume(w[:])
		if len(s.carry) == 0 {
			s.consume(p)
			return
		}
	}
	// Hunting (rare): work on a copy, since consume refills s.carry.
	c := make([]byte, 0, len(s.carry)+len(p))
	c = append(append(c, s.carry...), p...)
	s.carry = s.carry[:0]
	s.consume(c)
}

// consume processes b; any unprocessable tail is appended to s.carry.
func (s *syncer) consume(b []byte) {
	for len(b) > 0 {
		if !s.locked {
			b = s.hunt(b)
			continue
		}
		i := 0
		for ; i+4 <= len(b); i += 4 {
			w := WordAt(b[i:])
			if s.npend == 0 && w.Counter() == s.expect {
				s.out.sample(s.next, w)
				s.next++
				s.expect = (s.expect + 1) & 63
				s.frames++
				continue
			}
			if s.hold(w) {
				continue
			}
			// Alignment lost: give back the held words' bytes after their
			// first byte, plus the rest of b, and hunt.
			rest := make([]byte, 0, 4*s.npend+len(b)-i-4)
			for k := 0; k < s.npend; k++ {
				v := s.pending[k]
				rest = append(rest, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
			}
			rest = append(rest, b[i+4:]...)
			s.npend = 0
			s.locked = false
			s.resyncs++
			s.discarded++
			s.skipped++
			b = rest[1:]
			i = -1
			break
		}
		if i < 0 {
			continue
		}
		s.carry = append(s.carry, b[i:]...)
		return
	}
}

// hold handles an out-of-sequence word; false means alignment is lost.
func (s *syncer) hold(w Word) bool {
	s.pending[s.npend] = w
	s.npend++
	n := s.npend
	c := func(k int) uint8 { return s.pending[k].Counter() }
	if n >= 2 && c(n-1) == (s.expect+uint8(n-1))&63 {
		// The old sequence resumed: keep the odd words as samples.
		s.tolerated += uint64(n - 1)
		s.flushPending(0, n)
		return true
	}
	if n >= confirmRun && c(n-1) == (c(n-2)+1)&63 && c(n-2) == (c(n-3)+1)&63 {
		j := n - 3
		for j > 0 && c(j) == (c(j-1)+1)&63 {
			j--
		}
		s.tolerated += uint64(j)
		s.flushPending(0, j)
		if g := uint64((c(j) - s.expect) & 63); g > 0 {
			s.out.gap(s.next, g)
			s.lost += g
			s.next += g
			s.expect = c(j)
		}
		s.flushPending(j, n)
		s.npend = 0
		return true
	}
	return n <= maxPending
}

func (s *syncer) flushPending(from, to int) {
	for k := from; k < to; k++ {
		s.out.sample(s.next, s.pending[k])
		s.next++
		s.frames++
	}
	s.expect = (s.expect + uint8(to-from)) & 63
	if to == s.npend {
		s.npend = 0
	}
}

// hunt looks for lockRun words in sequence; it returns the unconsumed input.
func (s *syncer) hunt(b []byte) []byte {
	for len(b) >= 4*lockRun {
		ok := true
		c0 := WordAt(b).Counter()
		for k := 1; k < lockRun; k++ {
			if WordAt(b[4*k:]).Counter() != (c0+uint8(k))&63 {
				ok = false
				break
			}
		}
		if ok {
			if s.started {
				g := uint64((c0 - s.expect) & 63)
				for g < s.skipped/4 {
					g += 64
				}
				if g > 0 {
					s.out.gap(s.next, g)
					s.lost += g
					s.next += g
				}
			}
			s.started, s.locked, s.skipped, s.expect = true, true, 0, c0
			return b
		}
		b = b[1:]
		s.discarded++
		s.skipped++
	}
	s.carry = append(s.carry, b...)
	return nil
}
