package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-viper/mapstructure/v2"

	"github.com/idlewatt/idlewatt/app/rig"
)

// TestConfigKeysCoverOptCalls reads this package's source: every config
// key an opt* call, where or decodeKey names must be in configKeys, or a
// user setting it would be refused as unknown.
func TestConfigKeysCoverOptCalls(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	helpers := map[string]int{"optString": 2, "optInt": 2, "optFloat": 2, "optDuration": 2, "optBool": 2,
		"where": 2, "optSet": 2, "wlBytes": 2, "outOptions": 1}
	seen := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			id, ok := call.Fun.(*ast.Ident)
			if !ok {
				return true
			}
			i, ok := helpers[id.Name]
			if !ok || len(call.Args) <= i {
				return true
			}
			pos := fset.Position(call.Pos())
			switch a := call.Args[i].(type) {
			case *ast.BasicLit:
				key, _ := strconv.Unquote(a.Value)
				seen++
				if key != "" {
					if _, ok := configKeys[key]; !ok {
						t.Errorf("%s: %s(…, %q) names a key missing from configKeys", pos, id.Name, key)
					}
				}
			case *ast.BinaryExpr: // section+".qd" (replay and bench) or "export."+flag
				lit, ok := a.Y.(*ast.BasicLit)
				if !ok {
					return true
				}
				suffix, _ := strconv.Unquote(lit.Value)
				seen++
				for _, sect := range []string{"replay", "bench"} {
					if _, ok := configKeys[sect+suffix]; !ok && strings.HasPrefix(suffix, ".") {
						t.Errorf("%s: %s(…, section+%q): %s%s missing from configKeys", pos, id.Name, suffix, sect, suffix)
					}
				}
			}
			return true
		})
	}
	if seen < 100 {
		t.Fatalf("found only %d opt* calls: the parse is broken", seen)
	}
	for _, k := range []string{"export.from", "export.to"} {
		if _, ok := configKeys[k]; !ok {
			t.Errorf("%s missing", k)
		}
	}
}

// TestConfigKeysMatchRigConfig: the keys of the measurement set-up are the
// mapstructure tags of rig.Config and rig.Battery, with the right kinds.
func TestConfigKeysMatchRigConfig(t *testing.T) {
	t.Parallel()
	durT := reflect.TypeOf(time.Duration(0))
	var walk func(prefix string, typ reflect.Type, keys map[string]keyKind)
	walk = func(prefix string, typ reflect.Type, keys map[string]keyKind) {
		for i := 0; i < typ.NumField(); i++ {
			fld := typ.Field(i)
			tag := fld.Tag.Get("mapstructure")
			if tag == "" || tag == "-" {
				continue
			}
			key := prefix + tag
			ft := fld.Type
			if ft.Kind() == reflect.Struct {
				walk(key+".", ft, keys)
				continue
			}
			kind, ok := keys[key]
			if !ok {
				t.Errorf("rig config key %s is missing from the key table", key)
				continue
			}
			want := map[reflect.Kind]keyKind{reflect.String: kString, reflect.Int: kInt, reflect.Int64: kInt,
				reflect.Float64: kFloat, reflect.Slice: kList, reflect.Bool: kBool}[ft.Kind()]
			if ft == durT {
				if kind != kDuration && kind != kSDuration {
					t.Errorf("%s is a duration in rig.Config, %v in the key table", key, kind)
				}
				continue
			}
			if kind != want {
				t.Errorf("%s is %v in rig.Config, %v in the key table", key, want, kind)
			}
		}
	}
	walk("", reflect.TypeOf(rig.Config{}), configKeys)
	walk("battery.", reflect.TypeOf(rig.Battery{}), configKeys)
	walk("", reflect.TypeOf(rig.DriveConfig{}), driveKeys)
}

// TestConfigKeysDocumented: docs/config.md names every key of the table,
// and every key it lists in a table's first column is in the table.
func TestConfigKeysDocumented(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for k := range configKeys {
		if !strings.Contains(doc, "`"+k+"`") {
			t.Errorf("docs/config.md does not list `%s`", k)
		}
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z0-9_.\\[\\]]+)`")
	n := 0
	for _, m := range row.FindAllStringSubmatch(doc, -1) {
		k := m[1]
		n++
		if _, ok := configKeys[k]; ok {
			continue
		}
		if _, ok := driveKeys[k]; ok {
			continue
		}
		if strings.HasPrefix(k, "profiles.") {
			continue
		}
		t.Errorf("docs/config.md lists `%s`, which no command reads", k)
	}
	if n < 60 {
		t.Errorf("docs/config.md: only %d key rows found", n)
	}
}

func TestParseDuration(t *testing.T) {
	t.Parallel()
	good := map[string]time.Duration{"500ms": 500 * time.Millisecond, "1.5s": 1500 * time.Millisecond,
		"2m": 2 * time.Minute, " 4.9s ": 4900 * time.Millisecond, "0": 0, "0.0": 0, "-5s": -5 * time.Second, "1h30m": 90 * time.Minute}
	for s, want := range good {
		if d, err := parseDuration(s); err != nil || d != want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", s, d, err, want)
		}
	}
	for _, s := range []string{"", "forever", "5 s", "NaN", "1e300", "5x", "inf"} {
		if d, err := parseDuration(s); err == nil {
			t.Errorf("parseDuration(%q) = %v, want an error", s, d)
		}
	}
	// A bare number is neither seconds nor milliseconds: both readings are
	// spelled out (devslp.hold: 300 used to hold the pin for 300 s).
	for s, want := range map[string]string{"300": "300: write 300ms or 300s", " 1.5 ": "1.5: write 1.5ms or 1.5s",
		"-5": "-5: write -5ms or -5s", "1e300": "1e300: write 1e300ms or 1e300s"} {
		if d, err := parseDuration(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseDuration(%q) = %v, %v; want the error %q", s, d, err, want)
		}
	}
	var d time.Duration
	v := durationValue{d: &d}
	if err := v.Set("-1s"); err == nil {
		t.Error("a duration flag took -1s")
	}
	if err := (durationValue{d: &d, signed: true}).Set("-1s"); err != nil || d != -time.Second {
		t.Errorf("a signed duration flag: %v, %v", d, err)
	}
}

func TestCheckValue(t *testing.T) {
	t.Parallel()
	cases := []struct {
		kind keyKind
		v    any
		ok   bool
	}{
		{kBool, true, true}, {kBool, "false", true}, {kBool, "yes please", false}, {kBool, 1, true}, {kBool, "maybe", false},
		{kInt, 3, true}, {kInt, 3.0, true}, {kInt, 3.5, false}, {kInt, "12", true}, {kInt, "twelve", false},
		{kFloat, 1e12, true}, {kFloat, "x", false}, {kFloat, "NaN", false}, {kFloat, "+Inf", false},
		{kDuration, "300ms", true}, {kDuration, "-300ms", false}, {kDuration, 5, false}, {kDuration, -1, false},
		{kSDuration, "-300ms", true}, {kString, []any{1}, false}, {kString, map[string]any{"a": 1}, false},
		{kList, "x", false}, {kList, []any{}, true}, {kMap, map[string]any{}, true}, {kString, nil, false},
	}
	for _, c := range cases {
		err := checkValue(c.kind, c.v)
		if (err == nil) != c.ok {
			t.Errorf("checkValue(%v, %#v) = %v, want ok=%v", c.kind, c.v, err, c.ok)
		}
	}
}

// TestBareDurationInConfigRefused: a YAML number under a duration key
// (devslp.hold: 300) is refused by the up-front check and by the decoder
// alike, naming both readings; 0 stays 0.
func TestBareDurationInConfigRefused(t *testing.T) {
	t.Parallel()
	for _, v := range []any{300, int64(300), 300.0} {
		if err := checkValue(kDuration, v); err == nil || !strings.Contains(err.Error(), "300: write 300ms or 300s") {
			t.Errorf("checkValue(duration, %T 300) = %v", v, err)
		}
		var out struct {
			Hold time.Duration `mapstructure:"hold"`
		}
		dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{Result: &out, WeaklyTypedInput: true,
			DecodeHook: mapstructure.ComposeDecodeHookFunc(durationHook)})
		if err != nil {
			t.Fatal(err)
		}
		if err := dec.Decode(map[string]any{"hold": v}); err == nil || !strings.Contains(err.Error(), "300: write 300ms or 300s") {
			t.Errorf("decoding hold: %T 300 gave %v, %v", v, out.Hold, err)
		}
	}
	if err := checkValue(kDuration, 0); err != nil {
		t.Errorf("checkValue(duration, 0) = %v", err)
	}
	if err := checkValue(kDuration, "300ms"); err != nil {
		t.Errorf("checkValue(duration, 300ms) = %v", err)
	}
}
