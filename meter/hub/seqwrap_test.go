package hub

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

// TestSeqWrapKeepsPendingCall: a command whose sequence number comes round
// again (256 commands later) while the call first sent under it still
// awaits its answer takes the next free number, and gets its own answer
// although the older call ends in between. Taking the number over, its
// entry in the pending table was the older call's to delete, and its
// answer went to no one: the command failed with no answer from a hub
// that had answered it.
func TestSeqWrapKeepsPendingCall(t *testing.T) {
	host, dev := net.Pipe()
	t.Cleanup(func() { dev.Close(); host.Close() })
	held, late := make(chan byte, 1), make(chan byte, 1)
	id, cal := sampleIdentity(), sampleCal()
	ack := func(f *Frame) []byte {
		a := Ack{Cmd: TypePing, Echo: f.Payload}
		return AppendFrame(nil, TypeAck, f.Seq, a.Append(nil))
	}
	go func() {
		sc := NewScanner(dev)
		var lateAck []byte
		for {
			f, err := sc.Next()
			if err != nil {
				return
			}
			var out []byte
			switch {
			case f.Type == TypeIdentify:
				out = AppendFrame(nil, TypeIdentity, f.Seq, id.Append(nil))
			case f.Type == TypeReadCal:
				out = AppendFrame(nil, TypeCal, f.Seq, cal.Append(nil))
			case f.Type == TypePing && string(f.Payload) == "held":
				held <- f.Seq // never answered
				continue
			case f.Type == TypePing && string(f.Payload) == "late":
				// Answered after the next command's answer, once the held
				// call has given up.
				late <- f.Seq
				lateAck = ack(f)
				continue
			case f.Type == TypePing:
				out = ack(f)
				out, lateAck = append(out, lateAck...), nil
			default:
				out = AppendFrame(nil, TypeAck, f.Seq, []byte{byte(f.Type)})
			}
			if _, err := dev.Write(out); err != nil {
				return
			}
		}
	}()
	h, err := New(host, Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx := context.Background()
	hctx, cancel := context.WithCancel(ctx)
	heldDone := make(chan error, 1)
	go func() { heldDone <- h.Ping(hctx, []byte("held")) }()
	heldSeq := <-held
	for range 255 {
		if err := h.Ping(ctx, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	lateDone := make(chan error, 1)
	go func() { lateDone <- h.Ping(ctx, []byte("late")) }()
	if s := <-late; s == heldSeq {
		t.Errorf("the command sent 256 after one still awaiting its answer reused its number %d", s)
	}
	cancel()
	if err := <-heldDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("held call: %v, want cancelled", err)
	}
	if err := h.Ping(ctx, []byte("go")); err != nil {
		t.Fatal(err)
	}
	if err := <-lateDone; err != nil {
		t.Errorf("the command after the wrap: %v; its answer came", err)
	}
}
