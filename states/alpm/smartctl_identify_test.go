package alpm

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/idlewatt/idlewatt/internal/testutil"
)

const made = "../../fixtures/real/states/made/"

// smartctl 7.3's own --identify printing (every bit level) of two images
// (scripts/states-fixtures: the 870 QVO's real words, and a variant with
// HIPM, DIPM and DevSlp enabled and a described word at 0xffff) rebuilds
// the 512 bytes exactly, checksum included.
func TestSmartctlIdentifyRebuildsTheWords(t *testing.T) {
	for _, d := range []string{"sata-870qvo", "sata-varied"} {
		bin, err := os.ReadFile(made + d + ".identify.bin")
		if err != nil {
			t.Fatal(err)
		}
		want, _ := WordsFromBytes(bin)
		for _, v := range []string{"", "-wn", "-wb"} {
			f := made + d + ".smartctl-identify" + v + ".txt"
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if got := SniffIdentify(b); got != FormatSmartctlIdentify {
				t.Fatalf("%s sniffed as %q", f, got)
			}
			got, err := smartctlIdentifyWords(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("%s: word %d 0x%04x, want 0x%04x", f, i, got[i], want[i])
				}
			}
			ds, _, err := ParseIdentifyFile(b)
			if err != nil || len(ds) != 1 || !reflect.DeepEqual(*ds[0].Identify, want.Decode()) {
				t.Errorf("%s: decoded %+v, %v", f, ds, err)
			}
		}
	}
	v, _ := os.ReadFile(made + "sata-varied.identify.bin")
	w, _ := WordsFromBytes(v)
	if id := w.Decode(); !id.HIPM || !id.DIPMEnabled || !id.DevSlpEnabled || id.Checksum != "ok" || w[93] != 0xffff {
		t.Fatalf("the varied image is not what gen.sh says: %+v, word 93 0x%04x", id, w[93])
	}
}

// smartctl's -x text and -j JSON of the same images carry the identity
// and say HIPM, DIPM and DevSlp are unknown.
func TestSmartctlIdentityOnlyForms(t *testing.T) {
	for _, f := range []string{"sata-870qvo.smartctl-x.txt", "sata-870qvo.smartctl-j-x.json", "sata-varied.smartctl-j-x.json"} {
		b, err := os.ReadFile(made + f)
		if err != nil {
			t.Fatal(err)
		}
		ds, format, err := ParseIdentifyFile(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		want := FormatSmartctl
		if strings.HasSuffix(f, ".json") {
			want = FormatSmartctlJSON
		}
		id := ds[0].Identify
		if format != want || id.Model != "Samsung SSD 870 QVO 4TB" || id.Serial != "S5STNF0W706332M" || id.Firmware != "SVQ02B6Q" || id.Known("devslp_enabled") || id.Known("hipm") {
			t.Errorf("%s: %s %+v", f, format, id)
		}
	}
}

// Damaged tables are refused naming the line.
func TestSmartctlIdentifyRefusals(t *testing.T) {
	good, err := os.ReadFile(made + "sata-870qvo.smartctl-identify.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, from, to, want string }{
		{"bit disagrees", "  78      8          1   Device Sleep", "  78      9          1   Device Sleep", "word 78 bits 9:9 read 0x1, its word line 0x056c"},
		{"word twice", "  79      -     0x0060", "  78      -     0x0060", "word 78 reads 0x0060, an earlier line 0x056c"},
		{"word past 255", " 255      -     0x32a5", " 256      -     0x32a5", "word 256"},
		{"range count", "  18-19   .     0x2020:2020 ", "  18-19   .     0x2020:2020:2020 ", "words 18-19 with 3 values"},
		{"stray line", "  76     15          1", "  seventy-six", "is neither a word"},
		{"no header", "Word     Bit     Value   Description", "Words", "no \"Word ... Value"},
	} {
		b := strings.Replace(string(good), c.from, c.to, 1)
		if b == string(good) {
			t.Fatalf("%s: %q not in the fixture", c.name, c.from)
		}
		_, err := ReadSmartctlIdentify(strings.NewReader(b))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

func FuzzSmartctlIdentify(f *testing.F) {
	testutil.SeedFiles(f, realStates, "made/*smartctl-identify*")
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := smartctlIdentifyWords(bytes.NewReader(b))
		if err == nil && w == nil {
			t.Fatal("no words and no error")
		}
	})
}
