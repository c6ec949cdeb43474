package hexdump

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The committed dumps were written by xxd, hexdump -C and od
// (scripts/states-fixtures/gen.sh, versions in made/VERSIONS) over the
// .bin beside them: each reads back to those bytes.
func TestCommittedToolDumps(t *testing.T) {
	dir := "../../fixtures/real/states/made"
	bins, _ := filepath.Glob(dir + "/*.bin")
	n := 0
	for _, bin := range bins {
		want, _ := os.ReadFile(bin)
		dumps, _ := filepath.Glob(strings.TrimSuffix(bin, ".bin") + ".*")
		for _, p := range dumps {
			if p == bin || strings.HasSuffix(p, ".txt") || strings.HasSuffix(p, ".json") {
				continue
			}
			b, _ := os.ReadFile(p)
			d, err := Parse(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if !bytes.Equal(d.Bytes, want) {
				t.Errorf("%s (%s): %d bytes differ from %s", p, d.Layout, len(d.Bytes), bin)
			}
			n++
		}
	}
	if n < 12 {
		t.Fatalf("only %d dumps checked", n)
	}
}

// Random data through the tools installed here (xxd, hexdump, od): each
// dialect reads back. Without the tools the committed dumps above still
// test every dialect; this adds random data (zero runs exercise "*").
func TestLiveToolsRandom(t *testing.T) {
	tools := [][]string{{"xxd"}, {"xxd", "-g1"}, {"xxd", "-g4"}, {"hexdump", "-C"}, {"od", "-A", "x", "-t", "x1"}, {"od", "-t", "x1"}, {"od", "-A", "x", "-t", "x1z"}}
	r := rand.New(rand.NewPCG(1, 2))
	ran := 0
	for _, tool := range tools {
		if _, err := exec.LookPath(tool[0]); err != nil {
			t.Logf("%s not installed: not run", tool[0])
			continue
		}
		for trial := 0; trial < 20; trial++ {
			b := make([]byte, 1+r.IntN(700))
			for i := range b {
				if r.IntN(3) > 0 {
					b[i] = byte(r.IntN(256))
				}
			}
			if r.IntN(2) == 0 { // long zero runs: repeated lines
				clear(b[r.IntN(len(b)):])
			}
			cmd := exec.Command(tool[0], tool[1:]...)
			cmd.Stdin = bytes.NewReader(b)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v: %v", tool, err)
			}
			d, err := Parse(bytes.NewReader(out))
			if err != nil {
				t.Fatalf("%v over %d bytes: %v\n%s", tool, len(b), err, out)
			}
			if !bytes.Equal(d.Bytes, b) {
				t.Fatalf("%v over %d bytes: read %d bytes, differ\n%s", tool, len(b), len(d.Bytes), out)
			}
			ran++
		}
	}
	t.Logf("%d random dumps checked", ran)
}

func TestRefusals(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"0000000 144d 144d\n", "host byte order"},
		{"00000000  01 02  |..|\n*\n", "no offset after it"},
		{"0000: 01 02\n0010: 03\n", "offset 0x10, but 0x2 bytes"},
		{"0000: 01 02\nzz 03\n", "\"zz\" is not a hex byte"},
		{"nothing here\n", "no hex bytes"},
		{"000000 01 02\n000002\n000004 05\n", "after the final offset"},
	} {
		_, err := Parse(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
}
