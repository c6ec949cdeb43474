// Package csvexport writes a capture's samples as CSV at full resolution,
// the format of `idlewatt export --csv` (docs/capture-format.md, "CSV
// export").
//
// # Format
//
// One header line, then one row per sample index:
//
//	t_s,sample_index,gap,p1_5v_v,p1_5v_a,p1_5v_w,p1_12v_v,…,p1_total_w,…,p1_drive,…,run_id
//
// t_s is seconds since the capture's first sample, (index − first) /
// rate_hz (a capture with no rate counts samples); then per header channel,
// in header order, pN_RAIL_v, pN_RAIL_a and pN_RAIL_w. Where every channel
// lacks indices [a, b), one row at index a has gap = b − a and all value
// cells empty; where only some channels lack a sample, their three cells
// are empty and gap is empty. Values are the shortest decimal that
// round-trips the stored float32; the power cell is the float32 product of
// the two. After every channel, one pN_total_w per port (in the order of
// its first channel): the float32 sum of its rails' power cells, empty where any
// of them is. Then one pN_drive per port, the same order: the drive's name
// from the header's drives (RFC 4180 quoting where it holds a comma, a
// quote or a line break; empty when the header names none). Last, run_id: capture.RunID of the header, the same in every
// row and in every Parquet table of the capture, different between runs
// (so exports of several runs can be concatenated and grouped).
//
// Write streams in constant memory. A damaged capture gives every intact
// row (holes as gap rows or empty cells) and the reader's error; the
// caller decides what to say (capture.Reader.Account).
//
// # Where it sits
//
// The report layer (rank 4), reading the capture itself (full-resolution
// samples need no analysis); cmd/idlewatt (`export --csv`) imports it.
package csvexport
