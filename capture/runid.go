package capture

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// RunID is a capture's run identity: the first 16 hex digits of the SHA-256
// of "idlewatt.run/v1", the header's created, start_host (decimal), meter
// kind, meter serial and tool, each followed by a newline
// (docs/capture-format.md, "Run identity"). Two recordings differ in it
// (start_host is the host's monotonic clock in ns when streaming began);
// a copy or a repair of a capture keeps it. Exports (Parquet, CSV) carry it
// so tables from many runs can be grouped by run.
func RunID(h Header) string {
	s := sha256.New()
	for _, f := range []string{"idlewatt.run/v1", h.Created, strconv.FormatInt(int64(h.StartHost), 10), h.Meter.Kind, h.Meter.Serial, h.Tool} {
		s.Write([]byte(f))
		s.Write([]byte{'\n'})
	}
	return hex.EncodeToString(s.Sum(nil))[:16]
}
