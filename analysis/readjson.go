package analysis

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// ReadJSON reads a report.json written by WriteJSON.
func ReadJSON(rd io.Reader) (*Report, error) {
	var r Report
	if err := json.NewDecoder(rd).Decode(&r); err != nil {
		return nil, err
	}
	if r.Schema != Schema {
		return nil, fmt.Errorf("schema %q, want %q", r.Schema, Schema)
	}
	return &r, nil
}

// LoadJSON reads the report.json at path.
func LoadJSON(path string) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := ReadJSON(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}
