package capture

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/internal/testlong"
	"github.com/idlewatt/idlewatt/meter"
)

// TestBitFlipsDetected flips every bit of a small capture. Only the
// preamble's minor-version and reserved bytes (10–15) are unprotected. Every
// other flip is detected — refused at open (preamble, header chunk) or
// recorded in the Account — and costs at most the one chunk it hit: the
// records read are those of the intact capture with at most one missing,
// plus the "damaged" gaps the reader makes up for the hole.
//
// Here one bit of every byte is flipped (bit k of byte k mod 8, so every bit
// position and every field is hit); TestBitFlipsDetectedLong
// (IDLEWATT_LONG=1) flips every bit, eight times the work.
func TestBitFlipsDetected(t *testing.T) { bitFlipsDetected(t, false) }

func TestBitFlipsDetectedLong(t *testing.T) {
	testlong.Skip(t)
	bitFlipsDetected(t, true)
}

func bitFlipsDetected(t *testing.T, everyBit bool) {
	var buf bytes.Buffer
	writeEverything(t, &buf)
	all := buf.Bytes()
	want, _ := readBytes(all)
	b := make([]byte, len(all))
	for i := range len(all) * 8 {
		if off := i / 8; off >= 10 && off < preambleLen {
			continue
		}
		if !everyBit && i%8 != (i/8)%8 {
			continue
		}
		copy(b, all)
		b[i/8] ^= 1 << (i % 8)
		r, err := NewReader(bytes.NewReader(b))
		if err != nil {
			if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrNotCapture) && !errors.Is(err, ErrVersion) {
				t.Fatalf("flip at byte %d: unexpected error %v", i/8, err)
			}
			continue
		}
		got, err := readAll(r)
		acc := r.Account()
		if err == nil && acc.DamageRegions == 0 && len(acc.Corrected) == 0 {
			t.Fatalf("flip of bit %d at byte %d not detected", i%8, i/8)
		}
		if err != nil && !errors.Is(err, ErrTruncated) {
			t.Fatalf("flip at byte %d: unexpected error %v", i/8, err)
		}
		var kept []item
		for _, it := range got {
			if it.Kind == KindGap && it.Gap.Reason == GapDamaged {
				continue
			}
			kept = append(kept, it)
		}
		if missing, ok := subsequence(kept, want); !ok || missing > 1 {
			t.Fatalf("flip at byte %d: %d records missing (ok %v); want at most the damaged chunk's one", i/8, missing, ok)
		}
	}
}

// subsequence reports whether got is want with some records left out, and
// how many.
func subsequence(got, want []item) (int, bool) {
	j := 0
	for _, g := range got {
		for j < len(want) && !reflect.DeepEqual(g, want[j]) {
			j++
		}
		if j == len(want) {
			return 0, false
		}
		j++
	}
	return len(want) - len(got), true
}

func TestNotACapture(t *testing.T) {
	for _, in := range []string{"hello world, this is not a capture", "\x89IWX"} {
		if _, err := NewReader(bytes.NewReader([]byte(in))); !errors.Is(err, ErrNotCapture) {
			t.Errorf("%q: %v, want ErrNotCapture", in, err)
		}
	}
	var buf bytes.Buffer
	writeEverything(t, &buf)
	b := buf.Bytes()
	b[8] = 3 // major version 3
	_, err := NewReader(bytes.NewReader(b))
	if !errors.Is(err, ErrVersion) || !strings.HasPrefix(fmt.Sprint(err), "capture format 3: this idlewatt reads 1 and 2") {
		t.Errorf("major version 3: %v, want ErrVersion saying the rule", err)
	}
	// A reader of format 1 only (an idlewatt before format 2) refuses a
	// format 2 file with the rule's words, and still reads format 1.
	defer func(m int) { readMajor = m }(readMajor)
	readMajor = 1
	buf.Reset()
	writeEverything(t, &buf)
	_, err = NewReader(bytes.NewReader(buf.Bytes()))
	if !errors.Is(err, ErrVersion) || !strings.HasPrefix(fmt.Sprint(err), "capture format 2: this idlewatt reads 1 ") {
		t.Errorf("format 2 read by a format 1 reader: %v", err)
	}
	buf.Reset()
	writeEverythingV(t, &buf, 1)
	if _, err := readBytes(buf.Bytes()); err != nil {
		t.Errorf("format 1 read by a format 1 reader: %v", err)
	}
}

func TestUnknownChunks(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, testHeader(), Options{})
	w.mu.Lock()
	s := w.begin(0x7e, 0) // a future, skippable chunk
	w.pend = append(w.pend, "future"...)
	w.end(s)
	w.mu.Unlock()
	w.Mark(meter.MarkEcho{ID: 3})
	w.mu.Lock()
	s = w.begin(0x7f, flagCritical) // a future chunk old readers must not skip
	w.end(s)
	w.mu.Unlock()
	w.Close()
	items, err := readBytes(buf.Bytes())
	if !errors.Is(err, ErrVersion) {
		t.Fatalf("critical unknown chunk: %v, want ErrVersion", err)
	}
	if len(items) != 1 || items[0].Mark.ID != 3 {
		t.Fatalf("records around unknown chunks: %+v", items)
	}
}

func readCount(r *Reader) (int, error) {
	n := 0
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if rec.Kind == KindSamples {
			n += rec.Block.Len()
		}
	}
}

// TestCRCVariant pins CRC-32C by its published check value.
func TestCRCVariant(t *testing.T) {
	if got := crc32.Checksum([]byte("123456789"), castagnoli); got != 0xE3069283 {
		t.Fatalf("CRC-32C check value 0x%08X, want 0xE3069283", got)
	}
}
