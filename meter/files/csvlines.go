package files

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/idlewatt/idlewatt/internal/stat"
)

// maxLine bounds a CSV line: the exports read here write tens of bytes a
// row, and a longer one is not a row of theirs (a binary file, a wrong
// format) — never a reason to buffer without end.
const maxLine = 4096

// csvLines reads a CSV file line by line, knowing each line's number and
// byte offset, and splits it into fields (double quotes as RFC 4180 has
// them, "" inside a quoted field). fields and their strings are valid until
// the next call.
type csvLines struct {
	format string
	br     *bufio.Reader
	line   int64 // number of the line last read
	off    int64 // offset of the line last read
	next   int64 // offset of the line after it
	text   string
	fields []string
}

func newCSVLines(format string, r io.ReaderAt, size int64) *csvLines {
	return &csvLines{format: format, br: bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 64<<10)}
}

// read returns the next non-empty line's fields, or io.EOF.
func (c *csvLines) read() ([]string, error) {
	for {
		raw, err := c.readLine()
		if err != nil {
			return nil, err
		}
		if c.line == 1 {
			raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf"))
		}
		raw = bytes.TrimRight(raw, "\r\n")
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		c.text = string(raw)
		if err := c.split(); err != nil {
			return nil, err
		}
		return c.fields, nil
	}
}

func (c *csvLines) readLine() ([]byte, error) {
	c.line++
	c.off = c.next
	b, err := c.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) || len(b) > maxLine {
		return nil, c.errf("", "line is longer than %d bytes: not a row of this format", maxLine)
	}
	if len(b) == 0 && err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, err
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	c.next += int64(len(b))
	if bytes.IndexByte(b, 0) >= 0 {
		return nil, c.errf("", "NUL byte: a binary file, not a CSV export")
	}
	return b, nil
}

// split cuts c.text into c.fields.
func (c *csvLines) split() error {
	c.fields = c.fields[:0]
	s := c.text
	for {
		if strings.HasPrefix(s, `"`) {
			var b strings.Builder
			i := 1
			for {
				j := strings.IndexByte(s[i:], '"')
				if j < 0 {
					return c.errf("", "a quoted field has no closing quote")
				}
				b.WriteString(s[i : i+j])
				i += j + 1
				if i < len(s) && s[i] == '"' { // "" is a quote
					b.WriteByte('"')
					i++
					continue
				}
				break
			}
			c.fields = append(c.fields, b.String())
			s = s[i:]
			if s == "" {
				return nil
			}
			if s[0] != ',' {
				return c.errf("", "text after a quoted field's closing quote")
			}
			s = s[1:]
			continue
		}
		j := strings.IndexByte(s, ',')
		if j < 0 {
			c.fields = append(c.fields, strings.TrimSpace(s))
			return nil
		}
		c.fields = append(c.fields, strings.TrimSpace(s[:j]))
		s = s[j+1:]
	}
}

// errf is a *ParseError at the line last read.
func (c *csvLines) errf(field, format string, args ...any) error {
	return &ParseError{Format: c.format, Line: c.line, Offset: c.off, Field: field, Reason: sprintf(format, args...)}
}

// number parses a finite decimal number of column field.
func (c *csvLines) number(field, s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if s == "" {
			return 0, c.errf(field, "empty")
		}
		return 0, c.errf(field, "%q is not a number", s)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, c.errf(field, "%q is not a finite number", s)
	}
	return v, nil
}

// headLines returns the first lines of a head buffer, for Detect.
func headLines(head []byte, n int) []string {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	var out []string
	for len(out) < n && len(head) > 0 {
		i := bytes.IndexByte(head, '\n')
		if i < 0 {
			out = append(out, strings.TrimRight(string(head), "\r"))
			break
		}
		out = append(out, strings.TrimRight(string(head[:i]), "\r"))
		head = head[i+1:]
	}
	return out
}

// timeGrid places timestamps on a sample grid: t0 is the first row's time,
// period the spacing in the file's unit. A timestamp off the grid by more
// than a quarter period is an error: the rows are not the fixed-rate
// samples the formats promise.
type timeGrid struct {
	t0, period float64
	started    bool
	next       uint64 // index after the last row placed
}

// place returns t's sample index, and how many indices before it are
// missing since the last row.
func (g *timeGrid) place(c *csvLines, field string, t float64) (idx, missing uint64, err error) {
	if !g.started {
		g.started, g.t0 = true, t
		g.next = 1
		return 0, 0, nil
	}
	x := (t - g.t0) / g.period
	k := math.Round(x)
	if math.Abs(x-k) > 0.25 {
		return 0, 0, c.errf(field, "%g is not on the file's sample grid (%g from the first row, a period of %g)", t, t-g.t0, g.period)
	}
	if k < float64(g.next) {
		return 0, 0, c.errf(field, "%g does not come after the row before (sample %d after %d)", t, int64(k), g.next-1)
	}
	if k > 1<<53 {
		return 0, 0, c.errf(field, "%g is too far from the first row", t)
	}
	idx = uint64(k)
	missing = idx - g.next
	g.next = idx + 1
	return idx, missing, nil
}

// inferPeriod finds the sample spacing of a run of timestamps: the median
// positive step (a missing row doubles one step, not the median), refined
// over the longest stretch of the run whose rows sit on that grid, so the
// rounding in printed values averages out.
func inferPeriod(ts []float64) (float64, bool) {
	var d []float64
	for i := 1; i < len(ts); i++ {
		if s := ts[i] - ts[i-1]; s > 0 {
			d = append(d, s)
		}
	}
	if len(d) == 0 {
		return 0, false
	}
	sort.Float64s(d)
	p := stat.UpperMedian(d)
	if !(p > 0) || math.IsInf(p, 0) {
		return 0, false
	}
	best := 0.0
	for _, t := range ts[1:] {
		x := (t - ts[0]) / p
		if k := math.Round(x); k > best && math.Abs(x-k) < 0.1 {
			best = k
			if r := (t - ts[0]) / k; r > 0 {
				p = r
			}
		}
	}
	return p, p > 0 && !math.IsInf(p, 0)
}

// snapRate rounds a rate derived from printed timestamps to a whole number
// of hertz when it is within a millionth of one: the meters' rates are
// whole numbers, their printed times are not exact.
func snapRate(r float64) float64 {
	if k := math.Round(r); k > 0 && math.Abs(r-k) <= 1e-6*k {
		return k
	}
	return r
}
