package alpm

import "os/signal"

var (
	signalNotify = signal.Notify
	signalStop   = signal.Stop
)
