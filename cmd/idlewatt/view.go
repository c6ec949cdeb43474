package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/idlewatt/idlewatt/capture/record"
	"github.com/idlewatt/idlewatt/report/live"
)

// liveView is an open --view (live.Flags): the observer for the
// recording, and stop.
type liveView struct {
	v    *live.View
	stop func()
}

// openView reads --view and --view-any, listening before anything is
// recorded (an address in use or beyond loopback fails first). capturePath
// is the capture the run writes (notes made on the page go beside it).
// Without --view it returns nil.
func openView(cmd *cobra.Command, capturePath string) (*liveView, error) {
	addr, anyHost := optString(cmd, "view", ""), optBool(cmd, "view-any", "")
	if addr == "" {
		if anyHost {
			return nil, usageErr("--view-any: give --view HOST:PORT too")
		}
		return nil, nil
	}
	l, err := live.Listen(addr, anyHost)
	if err != nil {
		return nil, usageErr("--view: %v", err)
	}
	v := live.New(live.Options{Capture: capturePath, Title: cmd.CommandPath() + ": " + capturePath, AnyHost: anyHost})
	stop := live.Serve(l, v)
	fmt.Fprintf(cmd.ErrOrStderr(), "%s: live view on %s\n", cmd.CommandPath(), live.URL(l))
	return &liveView{v: v, stop: stop}, nil
}

// observer is the view as a recording's observer (nil without --view).
func (lv *liveView) observer() record.Observer {
	if lv == nil {
		return nil
	}
	return lv.v
}

// close ends the view (the page says the recording ended, then the
// server stops with the command).
func (lv *liveView) close() {
	if lv == nil {
		return
	}
	lv.v.End()
	lv.stop()
	lv.v.Close()
}
