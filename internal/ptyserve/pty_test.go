package ptyserve

import (
	"bytes"
	"io"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func open(t *testing.T) (*Pair, *os.File) {
	t.Helper()
	p, err := Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	host, err := os.OpenFile(p.Path(), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		p.Close()
		t.Fatal(err)
	}
	return p, host
}

// TestRaw: every byte value passes unchanged both ways, and nothing the host
// writes is echoed back to it.
func TestRaw(t *testing.T) {
	p, host := open(t)
	defer p.Close()
	defer host.Close()
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	if _, err := host.Write(all); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(all))
	if _, err := io.ReadFull(p.Master, got); err != nil || !bytes.Equal(got, all) {
		t.Fatalf("host→master: %x (%v)", got, err)
	}
	reply := []byte{0x0d, 0x0a, 0x03, 0x11, 0x13, 0x1a, 0x7f, 0xff, '\n'}
	if _, err := p.Master.Write(reply); err != nil {
		t.Fatal(err)
	}
	got = make([]byte, len(reply))
	if _, err := io.ReadFull(host, got); err != nil || !bytes.Equal(got, reply) {
		t.Fatalf("master→host: %x (%v), want %x (an echo of the host's bytes would come first)", got, err, reply)
	}
}

// TestCloseInterrupts: Close returns, and ends the master's blocked Read and
// a Write blocked on a pty the host does not read.
func TestCloseInterrupts(t *testing.T) {
	p, host := open(t)
	defer host.Close()
	readDone := make(chan error, 1)
	go func() {
		_, err := p.Master.Read(make([]byte, 16))
		readDone <- err
	}()
	writeDone := make(chan error, 1)
	go func() {
		chunk := make([]byte, 4096)
		for {
			if _, err := p.Master.Write(chunk); err != nil {
				writeDone <- err
				return
			}
		}
	}()
	time.Sleep(100 * time.Millisecond) // let the writer fill the pty
	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	for name, ch := range map[string]chan error{"Close": closed, "Read": readDone, "Write": writeDone} {
		select {
		case err := <-ch:
			if name == "Close" && err != nil {
				t.Errorf("Close: %v", err)
			}
			if name != "Close" && err == nil {
				t.Errorf("%s after Close succeeded", name)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s hung after Close", name)
		}
	}
}
