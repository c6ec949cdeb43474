package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/idlewatt/idlewatt/meter"
	"github.com/idlewatt/idlewatt/meter/hub"
)

// meterKind is how the command line opens one kind of meter. One entry per
// driver, registered from that driver's file with registerMeter.
type meterKind struct {
	// open connects to a live meter at path (serial port, pty).
	open func(path string) (meter.Meter, error)
	// replay decodes a recorded raw byte stream in a regular file, unpaced;
	// nil if the kind has no recorded-stream format.
	replay func(path string) (meter.Meter, error)
	// resolve fills a StreamConfig's defaults (rate, ports) the way the
	// driver will, and rejects combinations the meter cannot do; nil means
	// the config is used as given.
	resolve func(info meter.Info, cfg meter.StreamConfig) (meter.StreamConfig, error)
}

var meterKinds = map[string]meterKind{}

func init() {
	registerMeter("hub", meterKind{
		open:    func(path string) (meter.Meter, error) { return hub.Open(path, hub.Options{}) },
		replay:  func(path string) (meter.Meter, error) { return hub.OpenReplay(path) },
		resolve: hub.ResolveConfig,
	})
}

func registerMeter(name string, k meterKind) { meterKinds[name] = k }

func meterKindNames() string {
	var names []string
	for n := range meterKinds {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// openMeter opens a meter of kind at path. A regular file is replayed when
// the kind supports it; replayed says so. A path that does not exist is a
// usage error; a device that does not answer properly is a failure.
func openMeter(kind, path string) (m meter.Meter, k meterKind, replayed bool, err error) {
	k, ok := meterKinds[kind]
	if !ok {
		return nil, k, false, usageErr("--meter %q: unknown meter kind (known: %s)", kind, meterKindNames())
	}
	if path == "" {
		return nil, k, false, usageErr("--port is required (a serial port, pty, or recorded %s stream)", kind)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, k, false, usageErr("--port %s: %v", path, err)
	}
	if fi.Mode().IsRegular() {
		if k.replay == nil {
			return nil, k, false, usageErr("--port %s is a regular file, and %s meters have no recorded-stream format", path, kind)
		}
		m, err = k.replay(path)
		if err != nil {
			return nil, k, true, inputErr(fmt.Errorf("--port %s: %w", path, err))
		}
		return m, k, true, nil
	}
	m, err = k.open(path)
	if err != nil {
		return nil, k, false, failErr("--port %s: %v", path, err)
	}
	return m, k, false, nil
}
