package config

import (
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/idlewatt/idlewatt/app/emuhub"
	"github.com/idlewatt/idlewatt/app/hoststates"
	"github.com/idlewatt/idlewatt/app/rig"
	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/capture/record"
	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/meter/registry"
	"github.com/idlewatt/idlewatt/meter/scpi/scpiemu"
	"github.com/idlewatt/idlewatt/report"
	"github.com/idlewatt/idlewatt/workload/gen"
	"github.com/idlewatt/idlewatt/workload/replay"
)

// commandKeys are keys no flag declares.
var commandKeys = map[string]settings.Kind{
	"profiles": settings.Map, // user profiles: Profiles decodes them, drivesim.ParseProfiles checks each
}

// declared are the settings declared beside their checks: every key among
// them is a config key.
func declared() [][]settings.Flag {
	return [][]settings.Flag{registry.Flags(), record.Flags, rig.RunFlags, rig.IdleFlags, DevSlpVerifyFlags, report.HubInfoFlags,
		report.ReportFlags, report.ExportFlags, report.CompareFlags, report.PlotFlags,
		emuhub.Flags, emuhub.PPK2Flags, scpiemu.Flags, hoststates.Flags,
		replay.Flags, replay.BenchFlags, gen.PCMark7Flags, gen.IometerFlags}
}

// keys is the table Keys returns, built once (after every driver has
// registered).
var keys = sync.OnceValue(func() map[string]settings.Kind {
	m := map[string]settings.Kind{}
	fromStruct("", reflect.TypeOf(rig.Config{}), m, false)
	fromStruct("battery.", reflect.TypeOf(rig.Battery{}), m, false)
	for k, v := range commandKeys {
		m[k] = v
	}
	for _, fs := range declared() {
		for _, f := range fs {
			if f.Key != "" {
				m[f.Key] = f.Kind
			}
		}
	}
	return m
})

// Keys returns every config key with its kind. The caller must not
// change the map.
func Keys() map[string]settings.Kind { return keys() }

var driveKeys = sync.OnceValue(func() map[string]settings.Kind {
	m := map[string]settings.Kind{}
	fromStruct("", reflect.TypeOf(rig.DriveConfig{}), m, true)
	return m
})

// DriveKeys returns the keys of one drives[] entry (rig.DriveConfig),
// expect and its keys among them.
func DriveKeys() map[string]settings.Kind { return driveKeys() }

// driveStringBounds are the drive keys a capture header keeps, with their
// bounds in bytes (docs/capture-format.md, "Header").
var driveStringBounds = map[string]int{
	"name": capture.MaxNameBytes, "profile": capture.MaxNameBytes, "model": capture.MaxNameBytes,
	"firmware": capture.MaxNameBytes, "target": capture.MaxPathBytes,
}

// EnvNotKeys are IDLEWATT_* variables that are not config keys: the config
// file's path and the switches of the test and benchmark scripts.
var EnvNotKeys = map[string]bool{
	"IDLEWATT_CONFIG": true, "IDLEWATT_CRASH_HELPER": true, "IDLEWATT_CRASH_RUNS": true,
	"IDLEWATT_CAMPAIGN": true, "IDLEWATT_BENCH_CAPTURE": true, "IDLEWATT_CPUPROFILE": true,
	// The test suite's switches (docs/testing.md): .ci/run sets the first two
	// for every command the tests run.
	"IDLEWATT_REQUIRE_FIRMWARE": true, "IDLEWATT_LONG": true, "IDLEWATT_CHROMIUM": true,
	"IDLEWATT_COVERAGE_DRIVES": true, "IDLEWATT_COMPARE_LONG": true, "IDLEWATT_GOAL_ROWS": true,
	"IDLEWATT_GOAL_SECONDS": true, "IDLEWATT_HTML_FILE": true, "IDLEWATT_HTML_KEEP": true,
	"IDLEWATT_HTML_LONG": true, "IDLEWATT_HTML_SHOT": true, "IDLEWATT_LIVE_SHOT": true,
	"IDLEWATT_UART_NOISE_MA": true, "IDLEWATT_UART_SECONDS": true,
}

// fromStruct adds the mapstructure keys of typ's fields under prefix. A
// struct field is a section: its fields are keys under it, and with
// mapKeys the section is itself a key of kind Map (drives[].expect: a
// mapping inside a list entry, checked as one).
func fromStruct(prefix string, typ reflect.Type, m map[string]settings.Kind, mapKeys bool) {
	durT := reflect.TypeOf(time.Duration(0))
	for i := range typ.NumField() {
		fld := typ.Field(i)
		tag := fld.Tag.Get("mapstructure")
		if tag == "" || tag == "-" {
			continue
		}
		key, ft := prefix+tag, fld.Type
		switch {
		case ft == durT && fld.Tag.Get("settings") == "signed":
			m[key] = settings.SignedDuration
		case ft == durT:
			m[key] = settings.Duration
		case ft.Kind() == reflect.Struct:
			if mapKeys {
				m[key] = settings.Map
			}
			fromStruct(key+".", ft, m, mapKeys)
		default:
			m[key] = map[reflect.Kind]settings.Kind{reflect.String: settings.String, reflect.Bool: settings.Bool,
				reflect.Int: settings.Int, reflect.Int64: settings.Int, reflect.Float64: settings.Float,
				reflect.Slice: settings.List, reflect.Map: settings.Map}[ft.Kind()]
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// sectionKeys lists the keys under prefix key+"." (a few, for a message).
func sectionKeys(key string) []string {
	var out []string
	for _, k := range sortedKeys(Keys()) {
		if strings.HasPrefix(k, key+".") {
			out = append(out, k)
		}
	}
	if len(out) > 4 {
		out = append(out[:4], "…")
	}
	return out
}
