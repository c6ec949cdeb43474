// Package jls reads Joulescope JLS v2 files (file format 1.x), written by the
// Joulescope UI, pyjoulescope_driver and the JLS library
// (github.com/jetperch/jls; the format is specified in its
// include/jls/format.h). It is a reader written from the specification,
// tested against files the upstream library wrote (fixtures/jls/README.md).
//
// # Layout
//
// A 32-byte file header (identification, length, version, CRC-32C), then
// chunks: a 32-byte header (next and previous item of the chunk's list, tag,
// metadata, payload length, previous payload length, CRC-32C of the first 28
// bytes), the payload padded so that payload + CRC end on a multiple of 8,
// and the payload's CRC-32C. Sources and signals are each a list of
// definition chunks; a fixed-rate signal's samples are DATA chunks listed by
// level-1 INDEX chunks, each followed by its SUMMARY (mean, σ, min, max per
// sample_decimate_factor samples); level n + 1 indexes and summarises level
// n. An index entry of 0 is a data chunk the writer omitted because its 1-,
// 4- or 8-bit samples were constant: FSR rebuilds it from the summary.
//
// # Reading
//
// Open reads the header and the definitions; FSR iterates over one
// signal's samples a data chunk at a time (memory: one chunk, at most
// MaxPayload), through the index and then, past the last index, by the
// data chunks' links (a file whose writer did not finish: FSR.Cut says
// where it ended); Summaries iterates over one summary level. Every
// structural fault — a CRC, a link that goes backwards, an index entry out
// of place, a payload too short for what it claims — is an *Error with the
// byte offset, never a panic (FuzzReader).
//
// # Where it sits
//
// The meter floor (rank 1), standard library only; meter/files and
// capture/importer import it.
package jls
