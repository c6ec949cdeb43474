package drivesim

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// ParseProfiles decodes the config's `profiles:` map (name → map of keys as
// in Profile's yaml tags), resolves `base:` inheritance (from a built-in or
// another user profile) and validates each result. It accepts what a YAML
// decoder or viper produces: map[string]any or map[any]any values, numbers
// as int/float or numeric strings, booleans as bool or "true"/"false".
// Errors name the config key: `profiles.NAME.KEY: ...`. Names are kept as
// given (viper lowercases them).
func ParseProfiles(m map[string]any) (map[string]Profile, error) {
	ps, err := readProfiles(m)
	if err != nil {
		return nil, err
	}
	for _, name := range ps.names {
		if _, err := ps.resolve(name, nil); err != nil {
			return nil, err
		}
	}
	return ps.out, nil
}

// profileSet is the config's profiles being resolved: each one's keys
// (raws), their names sorted, and those resolved so far (out).
type profileSet struct {
	raws  map[string]map[string]any
	names []string
	out   map[string]Profile
}

// readProfiles reads the profiles' maps, checking their names and keys.
func readProfiles(m map[string]any) (*profileSet, error) {
	ps := &profileSet{raws: map[string]map[string]any{}, out: map[string]Profile{}}
	ps.names = make([]string, 0, len(m))
	for name := range m {
		ps.names = append(ps.names, name)
	}
	sort.Strings(ps.names)
	for _, name := range ps.names {
		if strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("profiles: empty profile name")
		}
		fm, ok := asMap(m[name])
		if !ok {
			return nil, fmt.Errorf("profiles.%s: want a map of parameters, got %s", name, typeName(m[name]))
		}
		for k := range fm {
			if k == "name" {
				return nil, fmt.Errorf("profiles.%s.name: the name is the map key; remove this key", name)
			}
			if _, ok := fieldIndex[k]; !ok {
				return nil, fmt.Errorf("profiles.%s.%s: unknown parameter%s", name, k, suggestKey(k))
			}
		}
		ps.raws[name] = fm
	}
	return ps, nil
}

// resolve builds and validates profile name: its base (resolved first,
// chain the profiles that led here), then its own keys.
func (ps *profileSet) resolve(name string, chain []string) (Profile, error) {
	if p, ok := ps.out[name]; ok {
		return p, nil
	}
	for _, c := range chain {
		if c == name {
			return Profile{}, fmt.Errorf("profiles.%s.base: inheritance cycle %s", chain[0], strings.Join(append(chain, name), " → "))
		}
	}
	fields := ps.raws[name]
	var p Profile
	if b, ok := fields["base"]; ok {
		bs, ok := b.(string)
		if !ok || bs == "" {
			return Profile{}, fmt.Errorf("profiles.%s.base: want a profile name, got %s", name, typeName(b))
		}
		bp, err := ps.base(name, bs, chain)
		if err != nil {
			return Profile{}, err
		}
		p = bp
	} else {
		// No base: every required key must be present.
		for _, k := range requiredKeys {
			if _, ok := fields[k]; !ok {
				return Profile{}, fmt.Errorf("profiles.%s.%s: missing (required without base:)", name, k)
			}
		}
	}
	p.Name, p.Base = name, ""
	if err := setFields(&p, name, fields); err != nil {
		return Profile{}, err
	}
	if err := p.Validate(); err != nil {
		if ve, ok := err.(*ValidationError); ok {
			return Profile{}, fmt.Errorf("profiles.%s.%s: %s", name, ve.Key, ve.Msg)
		}
		return Profile{}, fmt.Errorf("profiles.%s: %w", name, err)
	}
	ps.out[name] = p
	return p, nil
}

// base is profile name's base bs: the built-in of its own name, another
// user profile (resolved), or a built-in.
func (ps *profileSet) base(name, bs string, chain []string) (Profile, error) {
	switch {
	case bs == name:
		// A user profile may refine the built-in of the same name.
		bp, ok := builtin(bs)
		if !ok {
			return Profile{}, fmt.Errorf("profiles.%s.base: a profile cannot inherit from itself", name)
		}
		return bp, nil
	case ps.raws[bs] != nil:
		return ps.resolve(bs, append(chain, name))
	}
	bp, ok := builtin(bs)
	if !ok {
		var all []string
		for _, q := range builtins {
			all = append(all, q.Name)
		}
		all = append(all, ps.names...)
		hint := ""
		if s := nearest(bs, all); s != "" {
			hint = fmt.Sprintf(" (did you mean %q?)", s)
		}
		return Profile{}, fmt.Errorf("profiles.%s.base: unknown profile %q%s", name, bs, hint)
	}
	return bp, nil
}

// requiredKeys must be set in a profile without base:.
var requiredKeys = []string{
	"form_factor", "active_idle_w", "partial_w", "slumber_w",
	"read_w_per_mbps", "write_w_per_mbps", "peak_write_w", "max_read_mbps", "max_write_mbps",
	"partial_exit_us", "slumber_exit_ms",
}

// fieldIndex maps a config key to the Profile field it sets.
var fieldIndex = func() map[string]int {
	m := map[string]int{}
	t := reflect.TypeFor[Profile]()
	for i := range t.NumField() {
		if tag := t.Field(i).Tag.Get("yaml"); tag != "" {
			m[tag] = i
		}
	}
	return m
}()

// Keys returns every config key a profile accepts, sorted.
func Keys() []string {
	var ks []string
	for k := range fieldIndex {
		if k != "name" {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	return ks
}

func suggestKey(k string) string {
	if s := nearest(k, Keys()); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

func setFields(p *Profile, name string, fields map[string]any) error {
	v := reflect.ValueOf(p).Elem()
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "base" {
			continue
		}
		f := v.Field(fieldIndex[k])
		val := fields[k]
		where := fmt.Sprintf("profiles.%s.%s", name, k)
		switch f.Kind() {
		case reflect.Float64:
			x, err := toFloat(val)
			if err != nil {
				return fmt.Errorf("%s: %v", where, err)
			}
			f.SetFloat(x)
		case reflect.Bool:
			b, err := toBool(val)
			if err != nil {
				return fmt.Errorf("%s: %v", where, err)
			}
			f.SetBool(b)
		case reflect.String:
			s, err := toString(val)
			if err != nil {
				return fmt.Errorf("%s: %v", where, err)
			}
			f.SetString(s)
		case reflect.Struct: // noise: a map of the model's keys, over the base's
			if err := setNoise(f.Addr().Interface().(*Noise), where, val); err != nil {
				return err
			}
		}
	}
	return nil
}

func toFloat(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case float32:
		return float64(x), nil
	case int:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case int32:
		return float64(x), nil
	case uint64:
		return float64(x), nil
	case uint:
		return float64(x), nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number", x)
		}
		return f, nil
	}
	return 0, fmt.Errorf("want a number, got %s", typeName(v))
}

func toBool(v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		b, err := strconv.ParseBool(strings.TrimSpace(x))
		if err != nil {
			return false, fmt.Errorf("%q is not true or false", x)
		}
		return b, nil
	}
	return false, fmt.Errorf("want true or false, got %s", typeName(v))
}

func toString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case int, int64:
		return fmt.Sprint(x), nil
	case float64:
		// form_factor: 2.5 arrives as a YAML float.
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	}
	return "", fmt.Errorf("want text, got %s", typeName(v))
}

func asMap(v any) (map[string]any, bool) {
	switch x := v.(type) {
	case map[string]any:
		return x, true
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			ks, ok := k.(string)
			if !ok {
				return nil, false
			}
			m[ks] = e
		}
		return m, true
	}
	return nil, false
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case map[string]any, map[any]any:
		return "a map"
	case []any:
		return "a list"
	case string:
		return fmt.Sprintf("text %q", v)
	}
	return fmt.Sprintf("%T %v", v, v)
}

// setNoise sets the noise model's keys given in val (a map) on n; keys not
// given keep their value (the base's).
func setNoise(n *Noise, where string, val any) error {
	m, ok := asMap(val)
	if !ok {
		return fmt.Errorf("%s: want a map of noise parameters (%s), got %s", where, strings.Join(noiseKeys, ", "), typeName(val))
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	v := reflect.ValueOf(n).Elem()
	for _, k := range keys {
		i := slices.Index(noiseKeys, k)
		if i < 0 {
			hint := ""
			if s := nearest(k, noiseKeys); s != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", s)
			}
			return fmt.Errorf("%s.%s: unknown noise parameter%s", where, k, hint)
		}
		x, err := toFloat(m[k])
		if err != nil {
			return fmt.Errorf("%s.%s: %v", where, k, err)
		}
		v.Field(i).SetFloat(x)
	}
	return nil
}
