package ctxio

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// SignalError is the cause of a context SIGINT or SIGTERM cancelled
// (WatchSignals): it names the signal and unwraps to ErrInterrupted.
type SignalError struct{ Sig os.Signal }

func (e SignalError) Error() string {
	if s, ok := e.Sig.(syscall.Signal); ok {
		return "interrupted by " + unix.SignalName(s)
	}
	return fmt.Sprintf("interrupted by %v", e.Sig)
}
func (e SignalError) Unwrap() error { return ErrInterrupted }

// WatchSignals cancels with a SignalError on the first SIGINT or SIGTERM,
// so every reader here winds down. Later signals are absorbed: the ALPM
// guard re-sends the signal it caught once it has restored the policy
// (states/alpm.RestoreOnExit), so a second one is not the user's. It
// returns a function that stops watching.
func WatchSignals(cancel context.CancelCauseFunc) func() {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case sig := <-ch:
				cancel(SignalError{sig})
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
		wg.Wait()
	}
}
