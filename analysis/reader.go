package analysis

import "github.com/idlewatt/idlewatt/capture"

// readerOf is a Source that wraps a *capture.Reader (the command line's,
// which checks for a signal at every record) and hands it out for the
// passes that read a capture run by run (capture.NewRows).
type readerOf interface{ CaptureReader() *capture.Reader }

// captureReader returns the *capture.Reader behind src, if there is one.
// The state classification's pass used to accept only a bare Reader, so a
// report from the command line (whose sources wrap one) never classified
// learned levels ("this source cannot be read sample by sample").
func captureReader(src Source) (*capture.Reader, bool) {
	switch s := src.(type) {
	case *capture.Reader:
		return s, true
	case readerOf:
		return s.CaptureReader(), s.CaptureReader() != nil
	}
	return nil, false
}
