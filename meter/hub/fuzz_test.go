package hub

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to the scanner and every payload decoder,
// and to the whole stream decoder behind a valid header. Nothing may panic;
// every frame the scanner returns must carry a valid CRC.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(fixtureDir, "*.hex"))
	for _, p := range files {
		text, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		b, err := parseHex(string(text))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(stream(samplesFrame(0, 2), []byte{0xA5, 0x5A, 0xFF, 0xFF}, samplesFrame(5, 1)))
	hdr := header()
	f.Fuzz(func(t *testing.T, data []byte) {
		sc := NewScanner(bytes.NewReader(data))
		for {
			fr, err := sc.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			raw := data[fr.Offset : fr.Offset+int64(HeaderLen+len(fr.Payload)+TrailerLen)]
			if crcUpdate(crcInit, raw[2:]) != 0 {
				t.Fatalf("frame at %d has a bad CRC", fr.Offset)
			}
			decodeAny(fr) //nolint:errcheck // errors are fine; panics are not
		}
		DecodeStream(bytes.NewReader(append(bytes.Clone(hdr), data...)), nopSink{}) //nolint:errcheck
		NewReplay(bytes.NewReader(data), "fuzz")                                    //nolint:errcheck
	})
}
