package config

import (
	"fmt"
	"sort"
	"strings"

	"github.com/go-viper/mapstructure/v2"

	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/internal/suggest"
	"github.com/idlewatt/idlewatt/states/drivesim"
)

// Source is a configuration's merged values (a config file, IDLEWATT_*
// variables): on the command line, viper's.
type Source interface {
	AllKeys() []string
	AllSettings() map[string]any
	Get(key string) any
	IsSet(key string) bool
}

// didYouMean returns " (did you mean X?)" for the nearest candidate, or "".
func didYouMean(s string, candidates []string) string {
	m := suggest.Nearest(s, candidates, func(best string) int { return max(2, len(best)/3) })
	if m == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", m)
}

// CheckFile checks every key a config file set (src holds the file's own
// values; file names it in messages): an unknown key with a did-you-mean,
// a value of the wrong kind, a drives[] entry's keys and bounds.
func CheckFile(src Source, file string) error {
	all := Keys()
	keys := src.AllKeys()
	sort.Strings(keys)
	known := sortedKeys(all)
	for _, key := range keys {
		if strings.HasPrefix(key, "profiles.") {
			continue // user profiles: drivesim.ParseProfiles checks every parameter
		}
		kind, ok := all[key]
		if !ok {
			if sect := sectionKeys(key); len(sect) > 0 {
				return settings.Usagef("config %s: %s: is a section (%s), not a value", file, key, strings.Join(sect, ", "))
			}
			return settings.Usagef("config %s: unknown key %s%s; the keys are in docs/config.md", file, key, didYouMean(key, known))
		}
		if err := settings.Check(kind, src.Get(key)); err != nil {
			return settings.Usagef("config %s: %s: %v", file, key, err)
		}
	}
	if raw := src.Get("drives"); raw != nil {
		list, ok := raw.([]any)
		if !ok {
			return settings.Usagef("config %s: drives: want a list of {name, port, profile, target}, got a %s", file, settings.YAMLKind(raw))
		}
		for i, e := range list {
			if err := checkDrive(file, i, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkDrive checks drives[i].
func checkDrive(file string, i int, e any) error {
	dk := DriveKeys()
	names := sortedKeys(dk)
	m, ok := e.(map[string]any)
	if !ok {
		return settings.Usagef("config %s: drives[%d]: want a mapping {name, port, profile, target}, got a %s", file, i, settings.YAMLKind(e))
	}
	for _, k := range sortedKeys(m) {
		kind, ok := dk[strings.ToLower(k)]
		if !ok || strings.Contains(k, ".") {
			return settings.Usagef("config %s: unknown key drives[%d].%s%s; the keys are in docs/config.md", file, i, k, didYouMean(k, names))
		}
		if err := settings.Check(kind, m[k]); err != nil {
			return settings.Usagef("config %s: drives[%d].%s: %v", file, i, k, err)
		}
		if strings.EqualFold(k, "expect") {
			em, _ := m[k].(map[string]any)
			for _, ek := range sortedKeys(em) {
				ekind, ok := dk["expect."+strings.ToLower(ek)]
				if !ok {
					return settings.Usagef("config %s: unknown key drives[%d].expect.%s%s; the keys are in docs/config.md", file, i, ek, didYouMean("expect."+ek, names))
				}
				if err := settings.Check(ekind, em[ek]); err != nil {
					return settings.Usagef("config %s: drives[%d].expect.%s: %v", file, i, ek, err)
				}
			}
		}
		// What a capture's header may hold (capture.MaxNameBytes): a
		// 10 MB name made 217 MB of report files; refused before the
		// meter starts rather than when the capture is created.
		if limit, ok := driveStringBounds[strings.ToLower(k)]; ok {
			if n := len(fmt.Sprint(m[k])); n > limit {
				return settings.Usagef("config %s: drives[%d].%s: %d bytes, at most %d", file, i, k, n, limit)
			}
		}
	}
	return nil
}

// CheckEnv checks every IDLEWATT_* variable of environ (KEY=VALUE): it must
// name a key (lists and maps only come from the file) and hold a value of
// its kind. bind is called for each, with its key, so that decoding the
// whole configuration sees it too.
func CheckEnv(environ []string, bind func(key, env string) error) error {
	all := Keys()
	byEnv := map[string]string{}
	var names []string
	for _, k := range sortedKeys(all) {
		if all[k] == settings.List || all[k] == settings.Map {
			continue
		}
		byEnv[settings.EnvName(k)] = k
		names = append(names, settings.EnvName(k))
	}
	env := append([]string(nil), environ...)
	sort.Strings(env)
	for _, kv := range env {
		name, val, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "IDLEWATT_") || EnvNotKeys[name] {
			continue
		}
		key, ok := byEnv[name]
		if !ok {
			if k := strings.ToLower(strings.TrimPrefix(name, "IDLEWATT_")); all[k] == settings.List || all[k] == settings.Map {
				return settings.Usagef("environment %s: %s is a %s and can only be set in the config file", name, k, all[k])
			}
			return settings.Usagef("environment %s: matches no config key%s; the keys are in docs/config.md", name, didYouMean(name, names))
		}
		if err := settings.Check(all[key], val); err != nil {
			return settings.Usagef("environment %s (%s): %v", name, key, err)
		}
		if err := bind(key, name); err != nil {
			return settings.Usagef("environment %s: %v", name, err)
		}
	}
	return nil
}

// Decode decodes the configuration's key (everything for "") into out,
// strictly, durations in the one grammar: a value of the wrong type is an
// error naming the key.
func Decode(src Source, key string, out any) error {
	var in any = src.AllSettings()
	if key != "" {
		if !src.IsSet(key) {
			return nil
		}
		in = src.Get(key)
	}
	var md mapstructure.Metadata
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		Result: out, Metadata: &md, WeaklyTypedInput: true, ErrorUnused: false,
		DecodeHook: mapstructure.ComposeDecodeHookFunc(settings.DurationHook),
	})
	if err != nil {
		return err
	}
	if err := dec.Decode(in); err != nil {
		where := "config"
		if key != "" {
			where = "config key " + key
		}
		return settings.Usagef("%s: %v", where, err)
	}
	return nil
}

// durationHook must be a hook mapstructure calls: ComposeDecodeHookFunc
// takes any, and a hook of another type would fail only when a config is
// decoded.
var _ mapstructure.DecodeHookFuncType = settings.DurationHook

// Profiles decodes the configuration's profiles: map, the user's
// simulated drive profiles (nil when it has none).
func Profiles(src Source) (map[string]drivesim.Profile, error) {
	raw := src.Get("profiles")
	if raw == nil {
		return nil, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, settings.Usagef("config key profiles: want a map of profile name → parameters, got %T", raw)
	}
	user, err := drivesim.ParseProfiles(m)
	if err != nil {
		return nil, settings.Input(fmt.Errorf("config key %w", err))
	}
	return user, nil
}
