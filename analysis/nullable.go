package analysis

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
)

// Not measured: a power, energy or quantile that has no samples behind it is
// NaN in the Go structs and null in report.json, never 0 (a 0 W drive is a
// measurement). The report types below marshal through marshalNulls and
// read back through unmarshalNulls, so a report read from JSON has the same
// NaNs it was written with.

func (d DriveReport) MarshalJSON() ([]byte, error) {
	type plain DriveReport
	return marshalNulls(plain(d))
}

func (d *DriveReport) UnmarshalJSON(b []byte) error {
	type plain DriveReport
	return unmarshalNulls(b, (*plain)(d))
}

func (p Phase) MarshalJSON() ([]byte, error) {
	type plain Phase
	return marshalNulls(plain(p))
}

func (p *Phase) UnmarshalJSON(b []byte) error {
	type plain Phase
	return unmarshalNulls(b, (*plain)(p))
}

func (w PeakWindows) MarshalJSON() ([]byte, error) {
	type plain PeakWindows
	return marshalNulls(plain(w))
}

func (w *PeakWindows) UnmarshalJSON(b []byte) error {
	type plain PeakWindows
	return unmarshalNulls(b, (*plain)(w))
}

func (s Segments) MarshalJSON() ([]byte, error) {
	type plain Segments
	return marshalNulls(plain(s))
}

func (s *Segments) UnmarshalJSON(b []byte) error {
	type plain Segments
	return unmarshalNulls(b, (*plain)(s))
}

func (r Residency) MarshalJSON() ([]byte, error) {
	type plain Residency
	return marshalNulls(plain(r))
}

func (r *Residency) UnmarshalJSON(b []byte) error {
	type plain Residency
	return unmarshalNulls(b, (*plain)(r))
}

func (p StatePower) MarshalJSON() ([]byte, error) {
	type plain StatePower
	return marshalNulls(plain(p))
}

func (p *StatePower) UnmarshalJSON(b []byte) error {
	type plain StatePower
	return unmarshalNulls(b, (*plain)(p))
}

func (i IdleInfo) MarshalJSON() ([]byte, error) {
	type plain IdleInfo
	return marshalNulls(plain(i))
}

func (i *IdleInfo) UnmarshalJSON(b []byte) error {
	type plain IdleInfo
	return unmarshalNulls(b, (*plain)(i))
}

// jsonKey returns the key of struct field f, or "" when it is not encoded
// (or is embedded).
func jsonKey(f reflect.StructField) string {
	if !f.IsExported() || f.Anonymous {
		return ""
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return ""
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name
}

// MarshalNulls marshals struct v with its NaN float64 fields as null, in
// field order: for other outputs (idle.json) that carry analysis's values.
func MarshalNulls(v any) ([]byte, error) { return marshalNulls(v) }

// UnmarshalNulls decodes b into the struct dst points to, null float64
// fields as NaN.
func UnmarshalNulls(b []byte, dst any) error { return unmarshalNulls(b, dst) }

func marshalNulls(v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	cp := reflect.New(rv.Type()).Elem()
	cp.Set(rv)
	null := map[string]bool{}
	for i := 0; i < cp.NumField(); i++ {
		f := cp.Field(i)
		if f.Kind() == reflect.Float64 && math.IsNaN(f.Float()) {
			if k := jsonKey(cp.Type().Field(i)); k != "" {
				null[k] = true
				f.SetFloat(0)
			}
		}
	}
	b, err := json.Marshal(cp.Interface())
	if err != nil || len(null) == 0 {
		return b, err
	}
	// Rewrite the flagged keys' values, keeping the order.
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // {
		return nil, err
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for first := true; dec.More(); first = false {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if !first {
			out.WriteByte(',')
		}
		kb, _ := json.Marshal(key)
		out.Write(kb)
		out.WriteByte(':')
		if null[key] {
			out.WriteString("null")
		} else {
			out.Write(raw)
		}
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

func unmarshalNulls(b []byte, dst any) error {
	if err := json.Unmarshal(b, dst); err != nil {
		return err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	rv := reflect.ValueOf(dst).Elem()
	for i := 0; i < rv.NumField(); i++ {
		f := rv.Field(i)
		if f.Kind() != reflect.Float64 {
			continue
		}
		if v, ok := raw[jsonKey(rv.Type().Field(i))]; ok && string(bytes.TrimSpace(v)) == "null" {
			f.SetFloat(math.NaN())
		}
	}
	return nil
}
