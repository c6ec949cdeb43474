package settings

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// YAMLKind names what a decoded config value is, for messages.
func YAMLKind(v any) string {
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

// Check checks one config value (from YAML, or a string from the
// environment) against kind.
func Check(kind Kind, v any) error {
	if v == nil {
		return fmt.Errorf("no value (remove the key for the default)")
	}
	yk := YAMLKind(v)
	switch kind {
	case List:
		if yk != "list" {
			return fmt.Errorf("want a list, got a %s", yk)
		}
		return nil
	case Map:
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
	case Bool:
		if _, ok := v.(bool); ok {
			return nil
		}
		if _, err := strconv.ParseBool(strings.TrimSpace(s)); err != nil {
			return fmt.Errorf("%q is not a boolean (true or false)", s)
		}
	case Int, Int64, Uint64:
		if f, ok := v.(float64); ok {
			if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
				return fmt.Errorf("%v is not a whole number", v)
			}
			return nil
		}
		if _, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err != nil {
			return fmt.Errorf("%q is not a whole number", s)
		}
	case Float:
		x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return fmt.Errorf("%q is not a number", s)
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%v is not a finite number", x)
		}
	case Duration, SignedDuration:
		d, err := ParseDuration(s)
		if err != nil {
			return err
		}
		if kind == Duration && d < 0 {
			return fmt.Errorf("%s is negative", s)
		}
	}
	return nil
}

// ParseBytes reads a byte size: 4096, 512MiB, 16GiB, 1.5GB (binary K, M,
// G, T suffixes too).
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.m
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || v*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("%q is not a byte size (e.g. 4096, 512MiB, 16GiB)", s)
	}
	return int64(v * float64(mult)), nil
}

// Bytes reads the byte size of flag (ParseBytes), naming its source when
// it does not parse.
func Bytes(g Getter, flag string) (int64, error) {
	s := g.String(flag)
	n, err := ParseBytes(s)
	if err != nil {
		return 0, Usagef("%s: %v", g.Where(flag), err)
	}
	return n, nil
}
