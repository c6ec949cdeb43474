package hoststates

import (
	"fmt"
	"io"
	"os"

	"github.com/idlewatt/idlewatt/internal/settings"
	"github.com/idlewatt/idlewatt/states/decode"
)

// Decode tells each file's format and writes what it holds to w, as text
// or (json) JSON: one result as an object, several as a list.
func Decode(paths []string, asJSON bool, w io.Writer) error {
	var results []*decode.Result
	for _, a := range paths {
		f, err := os.Open(a)
		if err != nil {
			return settings.Input(fmt.Errorf("states decode: %w", err))
		}
		st, err := f.Stat()
		if err == nil && st.IsDir() {
			f.Close()
			return settings.Input(fmt.Errorf("states decode: %s is a directory (give the saved output's file; a sysfs tree goes to states --sysfs-root)", a))
		}
		r, err := decode.Read(a, f)
		f.Close()
		if err != nil {
			return settings.Input(fmt.Errorf("states decode %w", err))
		}
		results = append(results, r)
	}
	if asJSON {
		if len(results) == 1 {
			return WriteJSON(w, results[0])
		}
		return WriteJSON(w, results)
	}
	for i, r := range results {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := r.WriteText(w); err != nil {
			return err
		}
	}
	return nil
}
