package live

import (
	"fmt"
	"io"

	"github.com/idlewatt/idlewatt/capture/record"
	"github.com/idlewatt/idlewatt/internal/settings"
)

// Flags are the live view's settings on every command that records
// (record, measure, idle, devslp verify, demo).
var Flags = []settings.Flag{
	{Name: "view", Kind: settings.String, Help: "serve the live view of the recording on HOST:PORT (127.0.0.1:0 picks a free port; :PORT is 127.0.0.1); the URL goes to stderr"},
	{Name: "view-any", Kind: settings.Bool, Help: "let --view listen beyond loopback (an address other machines can reach; :PORT then means every interface)"},
}

// Session is an open --view: the observer for the recording, and its end.
type Session struct {
	v    *View
	stop func()
}

// Open reads Flags, listening before anything is recorded (an address in
// use or beyond loopback fails first). capturePath is the capture the run
// writes (notes made on the page go beside it); the URL is said on log, as
// who ("idlewatt record"). Without --view it returns nil, a Session that
// observes nothing.
func Open(g settings.Getter, capturePath string, log io.Writer, who string) (*Session, error) {
	addr, anyHost := g.String("view"), g.Bool("view-any")
	if addr == "" {
		if anyHost {
			return nil, settings.Usagef("--view-any: give --view HOST:PORT too")
		}
		return nil, nil
	}
	l, err := Listen(addr, anyHost)
	if err != nil {
		return nil, settings.Usagef("--view: %v", err)
	}
	v := New(Options{Capture: capturePath, Title: who + ": " + capturePath, AnyHost: anyHost})
	stop := Serve(l, v)
	fmt.Fprintf(log, "%s: live view on %s\n", who, URL(l))
	return &Session{v: v, stop: stop}, nil
}

// Observer is the view as a recording's observer (nil without --view).
func (s *Session) Observer() record.Observer {
	if s == nil {
		return nil
	}
	return s.v
}

// Close ends the view: the page says the recording ended, then the server
// stops.
func (s *Session) Close() {
	if s == nil {
		return
	}
	s.v.End()
	s.stop()
	s.v.Close()
}
