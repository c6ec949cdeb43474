package main

// The config keys, all in one table: loadConfig checks the whole config
// file and every IDLEWATT_* environment variable against it before any
// command runs, so a misspelt key or a junk value is bad input (exit 2)
// named by its key, never a silent default found out after a recording.
// docs/config.md lists the same keys (TestConfigKeysDocumented keeps them
// in step, and TestConfigKeysCoverOptCalls checks every opt* call's key is
// here).

import (
	"fmt"
	"math"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/viper"

	"github.com/idlewatt/idlewatt/capture"
	"github.com/idlewatt/idlewatt/internal/suggest"
)

// keyKind is the type a config value must have.
type keyKind int

const (
	kString    keyKind = iota // any scalar
	kBool                     // true/false (also 1/0, t/f, TRUE/FALSE: strconv.ParseBool)
	kInt                      // a whole number
	kFloat                    // a finite number
	kDuration                 // a duration ≥ 0 (parseDuration's grammar)
	kSDuration                // a duration of either sign (a clock offset)
	kList                     // a YAML list (file only)
	kMap                      // a YAML mapping (file only)
)

func (k keyKind) String() string {
	return [...]string{"string", "boolean", "integer", "number", "duration", "duration", "list", "map"}[k]
}

// configKeys maps every dotted config key to its kind.
var configKeys = map[string]keyKind{
	// The measurement set-up (rig.Config; measure, demo, idle, devslp verify).
	"meter.kind": kString, "meter.port": kString, "meter.rate_hz": kFloat,
	"emulator.seed": kInt, "emulator.drift_ppm": kFloat, "emulator.offset": kSDuration, "emulator.corrupt_rate": kFloat,
	"drives": kList, "policy": kString, "sysfs_root": kString, "idle": kDuration, "active_idle": kDuration,
	"active_idle_max": kDuration, "active_idle_u95_pct": kFloat,
	"workload.trace": kString, "workload.app": kString, "workload.scale": kFloat, "workload.timing": kString,
	"workload.speed": kFloat, "workload.qd": kInt, "workload.seed": kInt, "workload.engine": kString,
	"devslp.cycles": kInt, "devslp.policy": kString, "devslp.settle": kDuration, "devslp.hold": kDuration,
	"devslp.return": kDuration, "devslp.entry_bound": kDuration, "devslp.limit_mw": kFloat,
	"devslp.mdat": kDuration, "devslp.deto": kDuration, "devslp.max_cycles": kInt, "devslp.entry_u95": kDuration, "devslp.entry_hold": kDuration,
	"battery.capacity_wh": kFloat, "battery.platform_idle_w": kFloat,
	"profiles": kMap, "out": kString, "keep_scratch": kBool,
	"parquet": kBool, "metrics.addr": kString, "metrics.textfile": kString,

	// Meters (record, hub info, idle).
	"meter.ports": kString, "meter.timeout": kDuration, "meter.give_up": kDuration, "meter.interval": kDuration,
	"meter.mode": kString, "meter.columns": kString, "meter.family": kString, "meter.battery": kString,
	"meter.rapl": kBool, "meter.metadata": kString, "meter.no_spike_filter": kBool, "meter.supply_mv": kInt,
	"meter.baud": kInt, "meter.channel": kInt, "meter.voltage_v": kFloat,

	"record.out": kString, "record.duration": kDuration, "record.overwrite": kBool, "record.capture_format": kInt,
	"export.csv": kString, "export.from": kDuration, "export.to": kDuration, "export.parquet": kString,
	"report.out": kString, "report.settle": kDuration,
	"plot.points": kInt,
	"compare.out": kString, "compare.baseline": kString, "compare.html": kBool,
	"idle.policies": kString, "idle.settle": kDuration, "idle.measure": kDuration,

	"emulate.ports": kInt, "emulate.rate": kFloat, "emulate.seed": kInt, "emulate.link": kString,
	"emulate.corrupt_rate": kFloat, "emulate.drop_rate": kFloat, "emulate.truncate_rate": kFloat,
	"emulate.stall_every": kDuration, "emulate.stall_for": kDuration,
	"emulate.disconnect_every": kDuration, "emulate.disconnect_for": kDuration,
	"emulate.reenumerate": kBool, "emulate.symlink": kString, "emulate.accuracy": kString, "emulate.buffer_bytes": kInt,
	"emulate.protocol": kInt, "emulate.ring_bytes": kInt, "emulate.max_frame": kInt,
	"emulate.drift_ppm": kFloat, "emulate.offset": kSDuration, "emulate.fast": kBool,
	"emulate.duration": kDuration, "emulate.out": kString, "emulate.profile": kString,
	"emulate.policy": kString, "emulate.truth_dir": kString,
	"emulate.rail_3v3": kBool, "emulate.nvme": kString, "emulate.nvme_latency_us": kString,
	"ppk2emu.current_ma": kFloat, "ppk2emu.supply_mv": kInt, "ppk2emu.profile": kString,
	"ppk2emu.policy": kString, "ppk2emu.seed": kInt,
	"scpiemu.family": kString, "scpiemu.current_ma": kFloat, "scpiemu.voltage_v": kFloat, "scpiemu.delay": kDuration,

	"replay.trace": kString, "replay.target": kString, "replay.timing": kString, "replay.speed": kFloat,
	"replay.size": kString, "replay.wrap": kBool, "replay.duration": kDuration, "replay.qd": kInt,
	"replay.rt_priority": kInt, "replay.engine": kString,
	"bench.target": kString, "bench.pattern": kString, "bench.seed": kInt, "bench.duration": kDuration,
	"bench.qd": kInt, "bench.rt_priority": kInt, "bench.engine": kString, "bench.size": kString,
	"gen.app": kString, "gen.seed": kInt, "gen.duration_scale": kFloat, "gen.span": kString,
}

// driveKeys are the keys of one drives[] entry (rig.DriveConfig).
var driveKeys = map[string]keyKind{
	"name": kString, "port": kInt, "profile": kString, "target": kString, "host": kString,
	"allow_destructive": kString, "size_bytes": kInt, "model": kString, "firmware": kString,
	"nvme": kString, "expect": kMap, "expect.devslp_mw": kFloat, "expect.active_idle_w": kFloat,
}

// driveStringBounds are the drive keys a capture header keeps, with their
// bounds in bytes (docs/capture-format.md, "Header").
var driveStringBounds = map[string]int{
	"name": capture.MaxNameBytes, "profile": capture.MaxNameBytes, "model": capture.MaxNameBytes,
	"firmware": capture.MaxNameBytes, "target": capture.MaxPathBytes,
}

// envNotKeys are IDLEWATT_* variables that are not config keys: the config
// file's path and the switches of the test and benchmark scripts.
var envNotKeys = map[string]bool{
	"IDLEWATT_CONFIG": true, "IDLEWATT_CRASH_HELPER": true, "IDLEWATT_CRASH_RUNS": true,
	"IDLEWATT_CAMPAIGN": true, "IDLEWATT_BENCH_CAPTURE": true,
	// The test suite's switches (docs/testing.md): .ci/run sets the first two
	// for every command the tests run.
	"IDLEWATT_REQUIRE_FIRMWARE": true, "IDLEWATT_LONG": true, "IDLEWATT_CHROMIUM": true,
	"IDLEWATT_COVERAGE_DRIVES": true, "IDLEWATT_COMPARE_LONG": true, "IDLEWATT_GOAL_ROWS": true,
	"IDLEWATT_GOAL_SECONDS": true, "IDLEWATT_HTML_FILE": true, "IDLEWATT_HTML_KEEP": true,
	"IDLEWATT_HTML_LONG": true, "IDLEWATT_HTML_SHOT": true, "IDLEWATT_LIVE_SHOT": true,
	"IDLEWATT_UART_NOISE_MA": true, "IDLEWATT_UART_SECONDS": true,
}

// envName is the environment variable of a config key.
func envName(key string) string {
	return "IDLEWATT_" + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(key))
}

// didYouMean returns " (did you mean X?)" for the nearest candidate, or "".
func didYouMean(s string, candidates []string) string {
	m := suggest.Nearest(s, candidates, func(best string) int { return max(2, len(best)/3) })
	if m == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", m)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkConfigFile checks every key the config file set (file names it in
// messages): unknown keys with a did-you-mean, values of the wrong kind.
func checkConfigFile(cfg *viper.Viper, file string) error {
	keys := cfg.AllKeys()
	sort.Strings(keys)
	known := sortedKeys(configKeys)
	for _, key := range keys {
		if strings.HasPrefix(key, "profiles.") {
			continue // user profiles: drivesim.ParseProfiles checks every parameter
		}
		kind, ok := configKeys[key]
		if !ok {
			if sect := sectionKeys(key); len(sect) > 0 {
				return usageErr("config %s: %s: is a section (%s), not a value", file, key, strings.Join(sect, ", "))
			}
			return usageErr("config %s: unknown key %s%s; the keys are in docs/config.md", file, key, didYouMean(key, known))
		}
		if err := checkValue(kind, cfg.Get(key)); err != nil {
			return usageErr("config %s: %s: %v", file, key, err)
		}
	}
	if raw := cfg.Get("drives"); raw != nil {
		list, ok := raw.([]any)
		if !ok {
			return usageErr("config %s: drives: want a list of {name, port, profile, target}, got a %s", file, yamlKind(raw))
		}
		names := sortedKeys(driveKeys)
		for i, e := range list {
			m, ok := e.(map[string]any)
			if !ok {
				return usageErr("config %s: drives[%d]: want a mapping {name, port, profile, target}, got a %s", file, i, yamlKind(e))
			}
			for _, k := range sortedKeys(m) {
				kind, ok := driveKeys[strings.ToLower(k)]
				if !ok || strings.Contains(k, ".") {
					return usageErr("config %s: unknown key drives[%d].%s%s; the keys are in docs/config.md", file, i, k, didYouMean(k, names))
				}
				if err := checkValue(kind, m[k]); err != nil {
					return usageErr("config %s: drives[%d].%s: %v", file, i, k, err)
				}
				if strings.EqualFold(k, "expect") {
					em, _ := m[k].(map[string]any)
					for _, ek := range sortedKeys(em) {
						ekind, ok := driveKeys["expect."+strings.ToLower(ek)]
						if !ok {
							return usageErr("config %s: unknown key drives[%d].expect.%s%s; the keys are in docs/config.md", file, i, ek, didYouMean("expect."+ek, names))
						}
						if err := checkValue(ekind, em[ek]); err != nil {
							return usageErr("config %s: drives[%d].expect.%s: %v", file, i, ek, err)
						}
					}
				}
				// What a capture's header may hold (capture.MaxNameBytes): a
				// 10 MB name made 217 MB of report files; refused before the
				// meter starts rather than when the capture is created.
				if limit, ok := driveStringBounds[strings.ToLower(k)]; ok {
					if n := len(fmt.Sprint(m[k])); n > limit {
						return usageErr("config %s: drives[%d].%s: %d bytes, at most %d", file, i, k, n, limit)
					}
				}
			}
		}
	}
	return nil
}

// checkEnv checks every IDLEWATT_* variable: it must name a key (lists and
// maps only come from the file) and hold a value of its kind. Known ones
// are bound, so that decoding the whole config sees them too.
func checkEnv(cfg *viper.Viper) error {
	byEnv := map[string]string{}
	var names []string
	for _, k := range sortedKeys(configKeys) {
		if configKeys[k] == kList || configKeys[k] == kMap {
			continue
		}
		byEnv[envName(k)] = k
		names = append(names, envName(k))
	}
	env := os.Environ()
	sort.Strings(env)
	for _, kv := range env {
		name, val, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "IDLEWATT_") || envNotKeys[name] {
			continue
		}
		key, ok := byEnv[name]
		if !ok {
			if k := strings.ToLower(strings.TrimPrefix(name, "IDLEWATT_")); configKeys[k] == kList || configKeys[k] == kMap {
				return usageErr("environment %s: %s is a %s and can only be set in the config file", name, k, configKeys[k])
			}
			return usageErr("environment %s: matches no config key%s; the keys are in docs/config.md", name, didYouMean(name, names))
		}
		if err := checkValue(configKeys[key], val); err != nil {
			return usageErr("environment %s (%s): %v", name, key, err)
		}
		if err := cfg.BindEnv(key, name); err != nil {
			return usageErr("environment %s: %v", name, err)
		}
	}
	return nil
}

// sectionKeys lists the keys under prefix key+"." (a few, for a message).
func sectionKeys(key string) []string {
	var out []string
	for _, k := range sortedKeys(configKeys) {
		if strings.HasPrefix(k, key+".") {
			out = append(out, k)
		}
	}
	if len(out) > 4 {
		out = append(out[:4], "…")
	}
	return out
}

func yamlKind(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case []any:
		return "list"
	case map[string]any:
		return "mapping"
	case bool:
		return "boolean"
	case string:
		return "string"
	}
	switch reflect.ValueOf(v).Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice:
		return "list"
	case reflect.Map:
		return "mapping"
	}
	return fmt.Sprintf("%T", v)
}

// checkValue checks one value (from YAML, or a string from the
// environment) against its kind.
func checkValue(kind keyKind, v any) error {
	if v == nil {
		return fmt.Errorf("no value (remove the key for the default)")
	}
	yk := yamlKind(v)
	switch kind {
	case kList:
		if yk != "list" {
			return fmt.Errorf("want a list, got a %s", yk)
		}
		return nil
	case kMap:
		if yk != "mapping" {
			return fmt.Errorf("want a mapping, got a %s", yk)
		}
		return nil
	}
	if yk == "list" || yk == "mapping" {
		return fmt.Errorf("want a %s, got a %s", kind, yk)
	}
	s := fmt.Sprint(v)
	switch kind {
	case kBool:
		if _, ok := v.(bool); ok {
			return nil
		}
		if _, err := strconv.ParseBool(strings.TrimSpace(s)); err != nil {
			return fmt.Errorf("%q is not a boolean (true or false)", s)
		}
	case kInt:
		if f, ok := v.(float64); ok {
			if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
				return fmt.Errorf("%v is not a whole number", v)
			}
			return nil
		}
		if _, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err != nil {
			return fmt.Errorf("%q is not a whole number", s)
		}
	case kFloat:
		x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", s)
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%v is not a finite number", x)
		}
	case kDuration, kSDuration:
		d, err := parseDuration(s)
		if err != nil {
			return err
		}
		if kind == kDuration && d < 0 {
			return fmt.Errorf("%s is negative", s)
		}
	}
	return nil
}
