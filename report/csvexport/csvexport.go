package csvexport

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/idlewatt/idlewatt/capture"
)

// NoEnd as Window.To leaves the window open at the end.
const NoEnd = time.Duration(math.MaxInt64)

// Window selects the rows with From ≤ t_s < To (t_s: time since the
// capture's first sample). A gap row is kept if any of its gap reaches
// From. The zero From starts at the first sample; To = NoEnd runs to the
// last.
type Window struct {
	From, To time.Duration
}

// All is the whole capture.
var All = Window{To: NoEnd}

// Result says what Write wrote.
type Result struct {
	Rows    int  // data rows written (the header line not counted)
	Samples bool // the capture held a sample on some channel, in the window or not
	// LastS is t_s of the last row read: with Rows 0 and Samples, the
	// capture's last row when the window starts after it.
	LastS float64
}

// Write streams the rows of r within win to w. The error is w's, or the
// reader's if the capture is damaged or cut short (every intact row before
// it is written, and capture.ErrTruncated is among the reader's errors).
func Write(w io.Writer, r *capture.Reader, win Window) (Result, error) {
	var res Result
	h := r.Header()
	bw := bufio.NewWriterSize(w, 64<<10)
	line := []byte("t_s,sample_index,gap")
	var ports [][]int // per port, in order of first channel: its channels
	at := map[int]int{}
	for ci, c := range h.Channels {
		p := fmt.Sprintf(",p%d_%s_", c.Port, c.Rail)
		line = append(line, p+"v"+p+"a"+p+"w"...)
		k, ok := at[c.Port]
		if !ok {
			k = len(ports)
			at[c.Port] = k
			ports = append(ports, nil)
		}
		ports[k] = append(ports[k], ci)
	}
	for _, chs := range ports {
		line = append(line, fmt.Sprintf(",p%d_total_w", h.Channels[chs[0]].Port)...)
	}
	// The drives' names, one column per port, the same in every row (so
	// exports concatenated can be grouped by drive as well as by run).
	var names []byte
	for _, chs := range ports {
		port := h.Channels[chs[0]].Port
		line = append(line, fmt.Sprintf(",p%d_drive", port)...)
		names = append(names, ',')
		for _, d := range h.Drives {
			if d.Port == port {
				names = appendCSVField(names, d.Name)
				break
			}
		}
	}
	line = append(line, ",run_id\n"...)
	// What every row ends in, after its totals: the names, then run_id.
	tail := string(names) + "," + capture.RunID(h)
	runID := tail[1:]
	if _, err := bw.Write(line); err != nil {
		return res, err
	}
	rate := float64(h.RateHz)
	if rate <= 0 {
		rate = 1 // unknown rate: t_s counts samples
	}
	from := win.From.Seconds()
	to := math.Inf(1)
	if win.To != NoEnd {
		to = win.To.Seconds()
	}
	rows := capture.NewRows(r)
	var origin uint64
	first := true
	var rerr error
	for {
		row, err := rows.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				rerr = err
			}
			break
		}
		if first {
			origin, first = row.Index, false
		}
		if !res.Samples && slices.Contains(row.Present, true) {
			res.Samples = true
		}
		t := float64(row.Index-origin) / rate
		res.LastS = t
		if t >= to {
			break
		}
		if end := t + float64(row.Gap)/rate; t < from && (row.Gap == 0 || end <= from) {
			continue
		}
		line = appendRow(line[:0], t, row, ports, runID)
		if _, err := bw.Write(line); err != nil {
			return res, err
		}
		res.Rows++
	}
	if err := bw.Flush(); err != nil {
		return res, err
	}
	return res, rerr
}

// appendRow appends row's CSV line (t_s, index, gap, then V, A, W per
// channel, then each port's total power over its channels, then the run
// identity) to line.
func appendRow(line []byte, t float64, row *capture.Row, ports [][]int, runID string) []byte {
	line = strconv.AppendFloat(line, t, 'f', -1, 64)
	line = append(line, ',')
	line = strconv.AppendUint(line, row.Index, 10)
	line = append(line, ',')
	if row.Gap > 0 {
		line = strconv.AppendUint(line, row.Gap, 10)
	}
	for c := range row.Present {
		if !row.Present[c] {
			line = append(line, ",,,"...)
			continue
		}
		v, i := float32(row.V[c]), float32(row.I[c])
		line = append(line, ',')
		line = strconv.AppendFloat(line, float64(v), 'g', -1, 32)
		line = append(line, ',')
		line = strconv.AppendFloat(line, float64(i), 'g', -1, 32)
		line = append(line, ',')
		line = strconv.AppendFloat(line, float64(v*i), 'g', -1, 32)
	}
	for _, chs := range ports {
		line = append(line, ',')
		var sum float32
		whole := true
		for _, c := range chs {
			if !row.Present[c] {
				whole = false
				break
			}
			sum += float32(row.V[c]) * float32(row.I[c])
		}
		if whole {
			line = strconv.AppendFloat(line, float64(sum), 'g', -1, 32)
		}
	}
	line = append(line, ',')
	line = append(line, runID...) // the drives' names, then the run identity
	return append(line, '\n')
}

// appendCSVField appends s as one CSV field (RFC 4180: quoted, its quotes
// doubled, when it holds a comma, a quote or a line break).
func appendCSVField(dst []byte, s string) []byte {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return append(dst, s...)
	}
	dst = append(dst, '"')
	dst = append(dst, strings.ReplaceAll(s, `"`, `""`)...)
	return append(dst, '"')
}
