package conntest

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// echo is a device: it answers each line with "ok <line>".
type echo struct {
	in  bytes.Buffer
	out bytes.Buffer
}

func (e *echo) Write(b []byte) (int, error) {
	e.in.Write(b)
	for {
		line, err := e.in.ReadString('\n')
		if err != nil {
			e.in.WriteString(line)
			return len(b), nil
		}
		e.out.WriteString("ok " + line)
	}
}

func (e *echo) Read(b []byte) (int, error) { return e.out.Read(b) }

// converse is a driver: it writes each query and reads one line back.
func converse(rw io.ReadWriter, queries ...string) ([]string, error) {
	var got []string
	for _, q := range queries {
		if _, err := io.WriteString(rw, q+"\n"); err != nil {
			return got, err
		}
		var line []byte
		b := make([]byte, 1)
		for {
			if _, err := rw.Read(b); err != nil {
				return got, err
			}
			if b[0] == '\n' {
				break
			}
			line = append(line, b[0])
		}
		got = append(got, string(line))
	}
	return got, nil
}

func TestRecordThenPlayBack(t *testing.T) {
	rec := Record(&echo{})
	want, err := converse(rec, "*IDN?", "MEAS:CURR?")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Parse(bytes.NewReader(rec.Script().Marshal()))
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 4 || s[0].Dir != Host || string(s[1].Data) != "ok *IDN?\n" {
		t.Fatalf("script %q", s)
	}
	p := NewPlayback(s)
	got, err := converse(p, "*IDN?", "MEAS:CURR?")
	if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("played %q %v, recorded %q", got, err, want)
	}
	if err := p.Verify(); err != nil {
		t.Fatal(err)
	}
}

func script(t *testing.T, text string) Script {
	t.Helper()
	s, err := Parse(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Each kind of wrong traffic fails Verify, naming it.
func TestVerifyFails(t *testing.T) {
	s := script(t, "> 610a\n< 6f6b0a\n> 620a\n< 6f6b0a\n") // a, ok, b, ok
	for _, tc := range []struct {
		name    string
		queries []string
		want    string
	}{
		{"wrong byte", []string{"a", "c"}, "host byte 2: wrote 0x63, script has 0x62"},
		{"missing write", []string{"a"}, "wrote 2 of the script's 4 host bytes"},
		{"extra write", []string{"a", "b", "c"}, "unexpected write after the script's 4 host bytes"},
	} {
		p := NewPlayback(s)
		p.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		converse(p, tc.queries...)
		if err := p.Verify(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Verify %v, want %q", tc.name, err, tc.want)
		}
	}
	// Written all, read only the first answer: the second is left over.
	p := NewPlayback(s)
	converse(p, "a")
	io.WriteString(p, "b\n")
	if err := p.Verify(); err == nil || !strings.Contains(err.Error(), "3 device bytes left unread") {
		t.Errorf("unread answer: Verify %v", err)
	}
}

// The device's bytes wait for the host's that preceded them; a quiet line
// times out at the read deadline and Close unblocks a Read.
func TestReadWaitsForHost(t *testing.T) {
	p := NewPlayback(script(t, "> 61\n< 62\n"))
	p.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	b := make([]byte, 4)
	if n, err := p.Read(b); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read before the host wrote: %d %v", n, err)
	}
	p.SetReadDeadline(time.Time{})
	p.Write([]byte("a"))
	if n, err := p.Read(b); n != 1 || b[0] != 'b' || err != nil {
		t.Fatalf("read after: %d %q %v", n, b[:n], err)
	}
	done := make(chan error)
	go func() { _, err := p.Read(b); done <- err }()
	p.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("read after close: %v", err)
		}
	case <-time.After(10 * time.Second): // a hang guard, not a timing check
		t.Fatal("Close did not unblock Read")
	}
}

func TestParseErrors(t *testing.T) {
	for text, want := range map[string]string{
		"> 61\n= 62\n":  "line 2: starts with '='",
		"# x\n> 6z\n":   "line 2: encoding/hex",
		"> 612\n":       "line 1: encoding/hex: odd length",
		"\n\n< 61 62\n": "",
	} {
		_, err := Parse(strings.NewReader(text))
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%q: %v, want %q", text, err, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("> 610a\n< 6f6b0a\n"))
	f.Add([]byte("# c\n>  61 62\n<\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse(bytes.NewReader(b))
		if err != nil {
			return
		}
		s2, err := Parse(bytes.NewReader(s.Marshal()))
		if err != nil || len(s2) != len(s) {
			t.Fatalf("round trip: %v, %d chunks, want %d", err, len(s2), len(s))
		}
		for i := range s {
			if s[i].Dir != s2[i].Dir || !bytes.Equal(s[i].Data, s2[i].Data) {
				t.Fatalf("chunk %d differs", i)
			}
		}
	})
}
